package state_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

func code(err error) reason.Code {
	if e := reason.As(err); e != nil {
		return e.Code
	}
	return ""
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		name, raw, pw, source string
		want                  string // Target.String(); "" means refused
		hasPW                 bool
	}{
		{name: "plain", raw: "redis://cache.internal:6380/2", source: state.EnvRedisURL, want: "redis://cache.internal:6380/2"},
		{name: "default port and db", raw: "redis://cache.internal", source: state.EnvRedisURL, want: "redis://cache.internal:6379/0"},
		{name: "tls", raw: "rediss://r.example:6380/0", source: state.EnvRedisURL, want: "rediss://r.example:6380/0"},
		{name: "password in env URL", raw: "redis://:hunter2-secret@r:6379/1", source: state.EnvRedisURL, want: "redis://r:6379/1", hasPW: true},
		{name: "lone userinfo is the password", raw: "redis://hunter2-secret@r", source: state.EnvRedisURL, want: "redis://r:6379/0", hasPW: true},
		{name: "REDIS_PASSWORD", raw: "redis://r", pw: "hunter2-secret", source: state.ConfigKey, want: "redis://r:6379/0", hasPW: true},
		{name: "ipv6", raw: "redis://[::1]:7000/3", source: state.EnvRedisURL, want: "redis://[::1]:7000/3"},
		{name: "password in config key", raw: "redis://:hunter2-secret@r/0", source: state.ConfigKey},
		{name: "http scheme", raw: "http://:hunter2-secret@r/0", source: state.EnvRedisURL},
		{name: "no scheme", raw: "r:6379", source: state.EnvRedisURL},
		{name: "no host", raw: "redis:///0", source: state.EnvRedisURL},
		{name: "bad port", raw: "redis://:hunter2-secret@r:99999/0", source: state.EnvRedisURL},
		{name: "db out of range", raw: "redis://r/16", source: state.EnvRedisURL},
		{name: "db not a number", raw: "redis://r/x", source: state.EnvRedisURL},
		{name: "query", raw: "redis://r/0?password=hunter2-secret", source: state.EnvRedisURL},
		{name: "garbage", raw: "redis://hunter2-secret@%zz", source: state.EnvRedisURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := state.ParseURL(tc.raw, tc.pw, tc.source)
			if tc.want == "" {
				if code(err) != reason.StateBadURL {
					t.Fatalf("ParseURL(%q) = %v, %v; want state_bad_url", tc.raw, got, err)
				}
				if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), tc.source) {
					t.Fatalf("message leaks the password or does not name %s: %s", tc.source, err)
				}
				return
			}
			if err != nil || got.String() != tc.want || got.HasPassword() != tc.hasPW {
				t.Fatalf("ParseURL(%q) = %q (password %v), %v; want %q (password %v)", tc.raw, got, got.HasPassword(), err, tc.want, tc.hasPW)
			}
		})
	}
}

func TestFromConfigEnvironmentWins(t *testing.T) {
	cfg := config.Default()
	if _, ok, err := state.FromConfig(cfg, map[string]string{}); ok || err != nil {
		t.Fatalf("no URL: ok=%v err=%v; want the embedded default", ok, err)
	}
	cfg.State.RedisURL = "redis://from-config:6379/0"
	tg, ok, err := state.FromConfig(cfg, map[string]string{})
	if !ok || err != nil || tg.Host != "from-config:6379" || tg.Source != state.ConfigKey {
		t.Fatalf("config: %+v %v %v", tg, ok, err)
	}
	tg, ok, err = state.FromConfig(cfg, map[string]string{state.EnvRedisURL: "redis://from-env:6380/1", state.EnvRedisPassword: "pw"})
	if !ok || err != nil || tg.Host != "from-env:6380" || tg.Source != state.EnvRedisURL || !tg.HasPassword() {
		t.Fatalf("env: %+v %v %v", tg, ok, err)
	}
	if _, _, err := state.FromConfig(cfg, map[string]string{state.EnvRedisURL: "redis//oops"}); code(err) != reason.StateBadURL {
		t.Fatalf("malformed env URL: %v; want state_bad_url", err)
	}
}

func TestCacheEntriesShared(t *testing.T) {
	srv := redistest.Start(t)
	a, b := redistest.Open(t, srv), redistest.Open(t, srv)
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	e := cache.Entry{URL: "https://news.test/a", FinalURL: "https://news.test/a", Title: "T", Content: "body", FetchedAt: now, Extra: []byte(`{"links":[]}`)}
	if err := a.PutEntry(ctx, "0123456789abcdef", e, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.GetEntry(ctx, "0123456789abcdef")
	if err != nil || !ok || got.Content != "body" || !got.FetchedAt.Equal(now) || string(got.Extra) != `{"links":[]}` {
		t.Fatalf("GetEntry on the other client = %+v %v %v", got, ok, err)
	}
	if ttl := srv.Do("PTTL", state.CacheKey("0123456789abcdef")); !strings.HasPrefix(ttl, ":") || ttl == ":-1" {
		t.Fatalf("PTTL = %s; want a TTL kept by Redis", ttl)
	}
	// An older fetch never replaces a newer one.
	old := e
	old.Content, old.FetchedAt = "stale", now.Add(-time.Minute)
	if err := a.PutEntry(ctx, "0123456789abcdef", old, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := b.GetEntry(ctx, "0123456789abcdef"); got.Content != "body" {
		t.Fatalf("a slower, older fetch replaced the entry: %q", got.Content)
	}
}

func TestPagesScopedByPrincipal(t *testing.T) {
	srv := redistest.Start(t)
	a, b := redistest.Open(t, srv), redistest.Open(t, srv)
	dir := t.TempDir()
	x := principal.With(context.Background(), "x")
	y := principal.With(context.Background(), "y")
	stA := truncate.Store{Dir: dir, Shared: a, ReadTool: truncate.ReadToolWeb}.For(x)
	long := strings.Repeat("line of text\n", 4000)
	res := truncate.Apply("https://docs.test/page", long, 2000, &stA)
	if res.StoredPath == "" || res.StoreErr != nil {
		t.Fatalf("not stored: %v", res.StoreErr)
	}
	name := truncate.FileName("https://docs.test/page")
	if !strings.HasSuffix(res.StoredPath, "/"+name) || !strings.Contains(res.Content, `path="`+name+`"`) {
		t.Fatalf("footer/path changed: %q", res.StoredPath)
	}
	// B, same principal: reads it, by name and by the host path.
	for _, p := range []string{name, res.StoredPath} {
		r, err := truncate.Store{Dir: dir, Shared: b}.For(x).Read(p, 1, 3)
		if err != nil || r.Content != "line of text\nline of text\nline of text" || r.TotalLines != 4000 {
			t.Fatalf("Read(%q) on replica B = %+v, %v", p, r, err)
		}
	}
	// Another principal: exactly a missing page.
	_, err := truncate.Store{Dir: dir, Shared: b}.For(y).Read(name, 1, 3)
	_, errMissing := truncate.Store{Dir: dir, Shared: b}.For(x).Read("docs.test-0000000000.md", 1, 3)
	if code(err) != reason.ReadNotFound || code(errMissing) != reason.ReadNotFound ||
		strings.Replace(err.Error(), name, "N", 1) != strings.Replace(errMissing.Error(), "docs.test-0000000000.md", "N", 1) {
		t.Fatalf("cross-principal read = %v; missing page = %v; want the same read_not_found", err, errMissing)
	}
	// The path rules are today's: outside the store is refused before Redis.
	if _, err := (truncate.Store{Dir: dir, Shared: b}).For(x).Read("../etc/passwd", 1, 3); code(err) != reason.ReadOutsideStore {
		t.Fatalf("../etc/passwd: %v", err)
	}
}

func TestMemoSingleFlightAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	codec := cache.MemoCodec{
		Encode: func(v any) ([]byte, error) { return []byte(`"` + v.(string) + `"`), nil },
		Decode: func(b []byte) (any, error) { return strings.Trim(string(b), `"`), nil },
	}
	memos := []*cache.Memo{
		cache.NewSharedMemo(time.Minute, nil, redistest.Open(t, srv), codec),
		cache.NewSharedMemo(time.Minute, nil, redistest.Open(t, srv), codec),
	}
	var calls atomic.Int32
	release := make(chan struct{})
	call := func(ctx context.Context, bucket int) (any, bool, error) {
		calls.Add(1)
		<-release
		return "rows", true, nil
	}
	var wg sync.WaitGroup
	results := make([]any, 10)
	errs := make([]error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, errs[i] = memos[i%2].Do(context.Background(), "searxng", "Go  Redis", 5, call)
		}()
	}
	time.Sleep(200 * time.Millisecond) // let every caller reach the memo
	close(release)
	wg.Wait()
	for i := range 10 {
		if errs[i] != nil || results[i] != "rows" {
			t.Fatalf("caller %d: %v %v", i, results[i], errs[i])
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("10 identical searches over 2 replicas reached the backend %d times; want 1", n)
	}
	// A later call is a hit; another principal does not see the entry.
	if v, hit, err := memos[1].Do(context.Background(), "searxng", "go redis", 10, call); v != "rows" || !hit || err != nil {
		t.Fatalf("later call: %v %v %v", v, hit, err)
	}
	if _, hit, _ := memos[0].Do(principal.With(context.Background(), "other"), "searxng", "go redis", 10, call); hit || calls.Load() != 2 {
		t.Fatalf("another principal read the memo entry (hit %v, calls %d)", hit, calls.Load())
	}
}

func TestMemoCrashedHolderLockExpires(t *testing.T) {
	srv := redistest.Start(t)
	r := redistest.Open(t, srv)
	key := cache.SharedKey(principal.Default, "p", "q", 10)
	// A holder that died: its lock is left with a short TTL.
	start := time.Now() // before the SET: the lock cannot expire earlier than 300 ms from here
	if got := srv.Do("SET", state.MemoLockKey(key), "ghl1 0123456789abcdef0123456789abcdef", "PX", "300"); got != "+OK" {
		t.Fatal(got)
	}
	b, hit, err := r.Do(context.Background(), key, time.Minute, func(ctx context.Context) ([]byte, bool, error) {
		return []byte(`"fresh"`), true, nil
	})
	if err != nil || hit || string(b) != `"fresh"` {
		t.Fatalf("Do = %s %v %v", b, hit, err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("ran after %v, before the dead holder's lock expired", d)
	}
}

// TestMemoWaiterRechecksAfterLock: a waiter whose GET missed just before
// the holder (another replica) stored the value and released the lock must
// not run the call again when its SET NX then succeeds: it reads the memo
// again once it holds the lock. Found by bench/fleet's TestFleet (10
// identical concurrent searches over two replicas reached the backend
// twice, the second 450 ms after the first). CLIENT PAUSE WRITE orders it:
// the waiter's next GET (a read) still answers, a miss; the holder's
// store-and-release is queued, then the waiter's SET NX, and both run, in
// that order, when the pause ends.
func TestMemoWaiterRechecksAfterLock(t *testing.T) {
	srv := redistest.Start(t)
	r := redistest.Open(t, srv)
	key := cache.SharedKey(principal.Default, "p", "q", 10)
	vkey, lkey := state.MemoKey(key), state.MemoLockKey(key)
	if got := srv.Do("SET", lkey, "ghl1 0123456789abcdef0123456789abcdef", "PX", "10000"); got != "+OK" {
		t.Fatal(got)
	}
	var calls atomic.Int32
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, _, err := r.Do(context.Background(), key, time.Minute, func(ctx context.Context) ([]byte, bool, error) {
			calls.Add(1)
			return []byte(`"again"`), true, nil
		})
		done <- result{b, err}
	}()
	time.Sleep(100 * time.Millisecond) // the waiter polls the held lock
	if got := srv.Do("CLIENT", "PAUSE", "300", "WRITE"); got != "+OK" {
		t.Fatal(got)
	}
	stored := make(chan string, 1)
	go func() {
		stored <- srv.Do("EVAL", "redis.call('SET', KEYS[1], ARGV[1], 'PX', 60000); redis.call('DEL', KEYS[2]); return 1",
			"2", vkey, lkey, string(state.EncodeMemo([]byte(`"stored"`))))
	}()
	if got := <-stored; got != ":1" {
		t.Fatalf("the holder's store and release: %q", got)
	}
	res := <-done
	if res.err != nil || string(res.b) != `"stored"` || calls.Load() != 0 {
		t.Fatalf("waiter: %s %v after %d calls; want the stored value and no call", res.b, res.err, calls.Load())
	}
	if got := srv.Do("EXISTS", lkey); got != ":0" {
		t.Fatalf("the lock is left held (EXISTS %s)", got)
	}
}

func TestRedisDownThenBack(t *testing.T) {
	srv := redistest.Start(t)
	tg, err := state.ParseURL(srv.URL(), "hunter2-secret", state.EnvRedisURL)
	if err != nil {
		t.Fatal(err)
	}
	// A password the server does not require: Redis 7 accepts AUTH of the
	// default user only when one is set, so use none for the data path and
	// check the message of the failing one below.
	r := redistest.Open(t, srv)
	ctx := context.Background()
	if err := r.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	checks := map[string]error{
		"ping":  r.Ping(ctx),
		"page":  r.SavePage(ctx, "p", "a.test-0123456789.md", "x"),
		"entry": func() error { _, _, err := r.GetEntry(ctx, "k"); return err }(),
		"memo": func() error {
			_, _, err := r.Do(ctx, "k", time.Minute, func(context.Context) ([]byte, bool, error) { return nil, false, nil })
			return err
		}(),
		"limiter": func() error { _, err := r.Limiter(2, 0).Acquire(ctx, "p"); return err }(),
	}
	for what, err := range checks {
		if code(err) != reason.StateUnavailable || !strings.Contains(err.Error(), srv.Addr()) {
			t.Errorf("%s with Redis down: %v; want state_unavailable naming %s", what, err, srv.Addr())
		}
	}
	pw := state.Open(state.Options{Target: tg})
	defer pw.Close()
	if err := pw.Ping(ctx); code(err) != reason.StateUnavailable || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("ping with a password: %v", err)
	}
	srv.Restart()
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("after Redis came back: %v (no restart should be needed)", err)
	}
	if err := r.SavePage(ctx, "p", "a.test-0123456789.md", "x"); err != nil {
		t.Fatalf("save after Redis came back: %v", err)
	}
}

func TestJunkUnderOurKeys(t *testing.T) {
	srv := redistest.Start(t)
	r := redistest.Open(t, srv)
	ctx := context.Background()
	name := "a.test-0123456789.md"
	plant := func(args ...string) {
		t.Helper()
		srv.Do("DEL", args[1])
		if got := srv.Do(args...); strings.HasPrefix(got, "-") || got == "" {
			t.Fatalf("%v: %s", args, got)
		}
	}
	page := state.PageKey("p", name)
	for _, tc := range []struct {
		name  string
		plant []string
	}{
		{"truncated page", []string{"SET", page, "ghp1 100 " + name + "\nshort"}},
		{"page naming a path outside the store", []string{"SET", page, "ghp1 4 ../../etc/passwd\nroot"}},
		{"page naming another store file", []string{"SET", page, "ghp1 4 b.test-0123456789.md\nroot"}},
		{"not a page", []string{"SET", page, "hello"}},
		{"wrong Redis type", []string{"HSET", page, "f", "v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plant(tc.plant...)
			_, _, err := truncate.Store{Dir: t.TempDir(), Shared: r}.For(principal.With(ctx, "p")).Load(name)
			if code(err) != reason.StateCorrupt {
				t.Fatalf("Load = %v; want state_corrupt", err)
			}
		})
	}
	// Cache: a junk entry is a typed error from the store and a miss for
	// the cache (the next fetch replaces it).
	plant("SET", state.CacheKey("0123456789abcdef"), `gh1 123 {"content":`)
	if _, _, err := r.GetEntry(ctx, "0123456789abcdef"); code(err) != reason.StateCorrupt {
		t.Fatalf("GetEntry of a truncated entry: %v", err)
	}
	c := cache.New(cache.Options{Dir: t.TempDir(), Enabled: true, Shared: r})
	if _, ok, err := c.Lookup(ctx, "https://news.test/", "", "direct"); ok || err != nil {
		t.Fatalf("Lookup over junk: ok=%v err=%v; want a miss", ok, err)
	}
	// Memo: a junk result, and a lock that is not ours and never expires.
	key := cache.SharedKey(principal.Default, "p", "q", 10)
	noCall := func(context.Context) ([]byte, bool, error) { t.Fatal("call ran"); return nil, false, nil }
	plant("SET", state.MemoKey(key), "ghm1 999\n{}")
	if _, _, err := r.Do(ctx, key, time.Minute, noCall); code(err) != reason.StateCorrupt {
		t.Fatalf("Do over a junk result: %v", err)
	}
	srv.Do("DEL", state.MemoKey(key))
	plant("SET", state.MemoLockKey(key), "ghl1 0123456789abcdef0123456789abcdef")
	if _, _, err := r.Do(ctx, key, time.Minute, noCall); code(err) != reason.StateCorrupt {
		t.Fatalf("Do behind a lock without TTL: %v", err)
	}
	// Limiter: junk bucket fields read as a full bucket; a wrong type is typed.
	calls, bucket := state.LimitKeys("p")
	for _, junk := range [][]string{{"nan", "yesterday"}, {"-1e300", "0"}, {"inf", "1"}} {
		plant("HSET", bucket, "t", junk[0], "ts", junk[1])
		if rel, err := r.Limiter(0, 1).Acquire(ctx, "p"); err != nil {
			t.Fatalf("Acquire over a junk bucket %v: %v", junk, err)
		} else {
			rel()
		}
	}
	plant("SET", calls, "junk")
	if _, err := r.Limiter(1, 0).Acquire(ctx, "p"); code(err) != reason.StateCorrupt {
		t.Fatalf("Acquire over a wrong-type key: %v", err)
	}
}

func TestLimiter(t *testing.T) {
	srv := redistest.Start(t)
	a, b := redistest.Open(t, srv).Limiter(2, 0), redistest.Open(t, srv).Limiter(2, 0)
	ctx := context.Background()
	r1, err1 := a.Acquire(ctx, "x")
	r2, err2 := b.Acquire(ctx, "x")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	_, err := a.Acquire(ctx, "x")
	var ref *principal.Refusal
	if !errors.As(err, &ref) || ref.Reason != string(reason.TooManyCalls) || ref.RetryAfter <= 0 {
		t.Fatalf("third call across replicas: %v; want too_many_calls", err)
	}
	if r3, err := b.Acquire(ctx, "y"); err != nil {
		t.Fatalf("another principal is not capped by x: %v", err)
	} else {
		r3()
	}
	r1()
	if r4, err := b.Acquire(ctx, "x"); err != nil {
		t.Fatalf("after a release: %v", err)
	} else {
		r4()
	}
	r2()

	rate := redistest.Open(t, srv).Limiter(0, 2) // 2 calls per second, burst 2
	for i := range 2 {
		if _, err := rate.Acquire(ctx, "z"); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	_, err = rate.Acquire(ctx, "z")
	if !errors.As(err, &ref) || ref.Reason != "rate_limited" || ref.RetryAfter <= 0 || ref.RetryAfter > time.Second {
		t.Fatalf("over the rate: %v; want rate_limited with Retry-After ≤ 1 s", err)
	}
}

// TestOversizedValueNotTransferred: a value over the read cap planted
// under any Gatehouse key (stored page, extract-cache entry, memo result,
// memo lock) is refused as state_corrupt without its bytes leaving Redis:
// the cap is lowered to 64 KiB, the planted values are 8 MiB, and each
// read must allocate far less than one value.
func TestOversizedValueNotTransferred(t *testing.T) {
	srv := redistest.Start(t)
	r := redistest.Open(t, srv)
	ctx := context.Background()
	state.SetReadCap(t, 64<<10)
	const size = 8 << 20
	plant := func(key string) {
		t.Helper()
		srv.Do("DEL", key)
		if got := srv.Do("SETRANGE", key, strconv.Itoa(size-1), "x"); got != ":"+strconv.Itoa(size) && got != strconv.Itoa(size) {
			t.Fatalf("SETRANGE %s: %q", key, got)
		}
	}
	allocated := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	name := "a.test-0123456789.md"
	memo := cache.SharedKey(principal.Default, "p", "q", 10)
	noCall := func(context.Context) ([]byte, bool, error) { t.Fatal("call ran"); return nil, false, nil }
	for _, tc := range []struct {
		name, key string
		read      func() error
	}{
		{"page", state.PageKey("p", name), func() error { _, _, err := r.LoadPage(ctx, "p", name); return err }},
		{"cache entry", state.CacheKey("0123456789abcdef"), func() error { _, _, err := r.GetEntry(ctx, "0123456789abcdef"); return err }},
		{"memo result", state.MemoKey(memo), func() error { _, _, err := r.Do(ctx, memo, time.Minute, noCall); return err }},
		{"memo lock", state.MemoLockKey(memo), func() error { _, _, err := r.Do(ctx, memo, time.Minute, noCall); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plant(tc.key)
			defer srv.Do("DEL", tc.key)
			var err error
			n := allocated(func() { err = tc.read() })
			if code(err) != reason.StateCorrupt || !strings.Contains(err.Error(), "too long") {
				t.Fatalf("read of an %d-byte value: %v; want state_corrupt (too long)", size, err)
			}
			if n > size/8 {
				t.Fatalf("read of an oversized value allocated %d bytes (value %d): it was transferred", n, size)
			}
		})
	}
	// At the cap a value is still read (and decoded).
	if err := r.SavePage(ctx, "p", name, "hello"); err != nil {
		t.Fatal(err)
	}
	if text, ok, err := r.LoadPage(ctx, "p", name); err != nil || !ok || text != "hello" {
		t.Fatalf("LoadPage under the cap = %q, %v, %v", text, ok, err)
	}
}

// TestLimiterKilledReplicaLeaseExpires: a replica killed mid-call (no
// release, no renewal) holds its principal's slots only until their
// leases expire, not for minutes; meanwhile the refusal's Retry-After is
// no longer than a lease.
func TestLimiterKilledReplicaLeaseExpires(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 1200 * time.Millisecond
	a, b := redistest.Open(t, srv).Limiter(2, 0), redistest.Open(t, srv).Limiter(2, 0)
	state.ShortenLease(a, lease)
	state.ShortenLease(b, lease)
	ctx := context.Background()
	var rels []func()
	for i := range 2 {
		rel, err := a.Acquire(ctx, "x")
		if err != nil {
			t.Fatalf("call %d on A: %v", i, err)
		}
		rels = append(rels, rel)
	}
	killed := time.Now()
	state.KillLimiter(a)
	_, err := b.Acquire(ctx, "x")
	var ref *principal.Refusal
	if !errors.As(err, &ref) || ref.Reason != string(reason.TooManyCalls) {
		t.Fatalf("B while A's leases run: %v; want too_many_calls", err)
	}
	if ref.RetryAfter < time.Second || ref.RetryAfter > lease {
		// at least 1 s (Retry-After is whole seconds), at most a lease
		t.Fatalf("Retry-After %v; want between 1 s and the lease (%v)", ref.RetryAfter, lease)
	}
	var rel func()
	for rel == nil {
		if time.Since(killed) > 5*lease {
			t.Fatalf("B still refused %v after A died (lease %v): %v", time.Since(killed), lease, err)
		}
		time.Sleep(50 * time.Millisecond)
		rel, err = b.Acquire(ctx, "x")
	}
	rel()
	for _, r := range rels {
		r() // the dead replica's releases do nothing
	}
}

// TestLimiterRenewsLongCall: a call running longer than its lease keeps
// its slot (renewed every lease/3) and frees it on release.
func TestLimiterRenewsLongCall(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 600 * time.Millisecond
	a, b := redistest.Open(t, srv).Limiter(1, 0), redistest.Open(t, srv).Limiter(1, 0)
	state.ShortenLease(a, lease)
	state.ShortenLease(b, lease)
	ctx := context.Background()
	rel, err := a.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(4 * lease); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if r, err := b.Acquire(ctx, "x"); err == nil {
			r()
			t.Fatal("B admitted while A's long call runs: its lease was not renewed")
		}
	}
	rel()
	rel() // idempotent
	if r, err := b.Acquire(ctx, "x"); err != nil {
		t.Fatalf("after A's release: %v", err)
	} else {
		r()
	}
}
