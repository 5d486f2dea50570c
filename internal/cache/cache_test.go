package cache

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

// clock is a fake clock for TTL tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_800_000_000, 0)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newTestCache(t testing.TB, mod func(*Options)) (*Cache, *clock, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cache", "web")
	clk := newClock()
	o := Options{Dir: dir, Enabled: true, Now: clk.Now}
	if mod != nil {
		mod(&o)
	}
	return New(o), clk, dir
}

func readIndexFile(t *testing.T, dir string) map[string]indexEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	var ix map[string]indexEntry
	if err := json.Unmarshal(b, &ix); err != nil {
		t.Fatalf("index is not valid JSON: %v", err)
	}
	return ix
}

func writeIndexFile(t *testing.T, dir string, ix map[string]indexEntry) {
	t.Helper()
	b, _ := json.Marshal(ix)
	if err := os.WriteFile(filepath.Join(dir, IndexFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVectorsExtractKey(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.extract_key", 5) {
		var in struct {
			URL      string  `json:"url"`
			Format   *string `json:"format"`
			Provider string  `json:"provider"`
		}
		var want struct {
			Digest16  string `json:"digest16"`
			CacheFile string `json:"cache_file"`
			StoreFile string `json:"store_file"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		format := "" // JSON null = Python None = "markdown"
		if in.Format != nil {
			format = *in.Format
		}
		t.Run(fmt.Sprintf("%s format=%q provider=%q: %s", in.URL, format, in.Provider, v.Note), func(t *testing.T) {
			if got := Key(in.URL, format, in.Provider); got != want.Digest16 {
				t.Errorf("Key = %s, want %s", got, want.Digest16)
			}
			if got := FileName(in.URL, format, in.Provider); got != want.CacheFile {
				t.Errorf("FileName = %s, want %s", got, want.CacheFile)
			}
			if got := truncate.FileName(in.URL); got != want.StoreFile {
				t.Errorf("truncate.FileName = %s, want %s", got, want.StoreFile)
			}
		})
	}
	// Seed article: sha256(url\nmarkdown\nfirecrawl)[:16] = 32100eb3cae1419a.
	if got := Key("https://hermes-agent.nousresearch.com/docs", "markdown", "firecrawl"); got != "32100eb3cae1419a" {
		t.Errorf("seed key = %s", got)
	}
}

func TestVectorsExtractPut(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.extract_put", 1) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct {
				ContentChars int `json:"content_chars"`
			}
			var want struct{ Cached bool }
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			c, _, _ := newTestCache(t, nil)
			const u = "https://example.com/big"
			// Multi-byte chars: the ceiling counts chars, not bytes.
			if err := c.Put(u, Entry{Content: strings.Repeat("é", in.ContentChars)}, "", "p"); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Get(u, "", "p"); ok != want.Cached {
				t.Fatalf("cached = %v, want %v", ok, want.Cached)
			}
			// Boundary: exactly StoreCap chars is cached.
			if err := c.Put(u, Entry{Content: strings.Repeat("é", truncate.StoreCap)}, "", "p"); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Get(u, "", "p"); !ok {
				t.Fatal("page of exactly StoreCap chars not cached")
			}
		})
	}
}

func TestVectorsIndexEviction(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.index_eviction", 1) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct {
				Offsets    []int `json:"entries_fetched_at_offsets"`
				MaxEntries int   `json:"max_entries"`
			}
			var want struct{ Kept []int }
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			c, clk, dir := newTestCache(t, func(o *Options) { o.MaxEntries = in.MaxEntries })
			base := clk.Now()
			for _, off := range in.Offsets {
				u := fmt.Sprintf("https://example.com/%d", off)
				if err := c.Put(u, Entry{Content: "page", FetchedAt: base.Add(time.Duration(off) * time.Second)}, "", ""); err != nil {
					t.Fatal(err)
				}
			}
			clk.Advance(time.Minute)
			var kept []int
			for _, off := range in.Offsets {
				if _, ok := c.Get(fmt.Sprintf("https://example.com/%d", off), "", ""); ok {
					kept = append(kept, off)
				}
			}
			if fmt.Sprint(kept) != fmt.Sprint(want.Kept) {
				t.Fatalf("kept %v, want %v", kept, want.Kept)
			}
			if n := len(readIndexFile(t, dir)); n != in.MaxEntries {
				t.Fatalf("index has %d entries", n)
			}
			// Evicted entry files are removed too.
			if _, err := os.Stat(filepath.Join(dir, FileName("https://example.com/0", "", ""))); !os.IsNotExist(err) {
				t.Fatalf("evicted file still present: %v", err)
			}
		})
	}
}

func TestVectorsNeverCacheLocal(t *testing.T) {
	c, _, _ := newTestCache(t, nil)
	for _, v := range vectors.Area(t, "cache.never_cache_local", 13) {
		var in struct{ URL string }
		var want struct {
			Local bool `json:"local_dev_never_cached"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(in.URL+": "+v.Note, func(t *testing.T) {
			if got := c.Cacheable(in.URL); got == want.Local {
				t.Fatalf("Cacheable(%q) = %v, want %v", in.URL, got, !want.Local)
			}
			// And Put really skips it.
			if err := c.Put(in.URL, Entry{Content: "x"}, "", ""); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Get(in.URL, "", ""); ok == want.Local {
				t.Fatalf("Get hit = %v", ok)
			}
		})
	}
}

func TestLocalDevHostExtras(t *testing.T) {
	for host, want := range map[string]bool{
		"":                    true,
		"localhost.":          true,  // trailing dot ignored
		"::ffff:8.8.8.8":      false, // an IPv4 carried in IPv6 is judged as that IPv4 (issue 2), here public; CPython would call ::ffff:0:0/96 private
		"fe80::1%eth0":        true,  // zone ignored
		"198.18.0.1":          true,  // RFC 2544, private in CPython
		"240.0.0.1":           true,  // reserved
		"0.0.0.0":             true,
		"::":                  true,
		"2001:db8::1":         true,
		"2606:4700::1111":     false,
		"8.8.8.8":             false,
		"100.64.0.1":          false, // CGNAT: neither private nor reserved in CPython
		"224.0.0.1":           false, // multicast is not in the local-dev list
		"example.com":         false,
		"my-app.vercel.app":   false,
		"printer.local":       true,
		"a.b.c.localhost":     true,
		"intranet":            true,
		"xn--bcher-kva.local": true,
	} {
		if got := isLocalDevHost(host); got != want {
			t.Errorf("isLocalDevHost(%q) = %v, want %v", host, got, want)
		}
	}
	c, _, _ := newTestCache(t, nil)
	if c.Cacheable("http://exa mple.com/") || c.Cacheable("::not a url") {
		t.Error("unparseable URL treated as cacheable")
	}
}

func TestVectorsExemptHostMatch(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.exempt_host_match", 7) {
		var in struct{ Pattern, Host string }
		var want struct{ Exempt bool }
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(in.Pattern+" vs "+in.Host, func(t *testing.T) {
			if got := ExemptMatch(in.Host, in.Pattern); got != want.Exempt {
				t.Fatalf("ExemptMatch(%q, %q) = %v, want %v", in.Host, in.Pattern, got, want.Exempt)
			}
		})
	}
	if ExemptMatch("example.com", "") || ExemptMatch("example.com", " *. ") {
		t.Error("empty pattern matched")
	}
}

func TestExemptHostsNotCached(t *testing.T) {
	c, _, _ := newTestCache(t, func(o *Options) { o.ExemptHosts = []string{"*.ngrok-free.app", "MySite.dev"} })
	for _, u := range []string{"https://abc.ngrok-free.app/", "https://preview.mysite.dev/x"} {
		c.Put(u, Entry{Content: "x"}, "", "")
		if _, ok := c.Get(u, "", ""); ok || c.Cacheable(u) {
			t.Errorf("%s cached", u)
		}
	}
	// A cacheable URL that redirected to an exempt host is not cached either.
	c.Put("https://example.com/r", Entry{Content: "x", FinalURL: "https://preview.mysite.dev/"}, "", "")
	if _, ok := c.Get("https://example.com/r", "", ""); ok {
		t.Error("final URL on an exempt host cached")
	}
}

func TestPrivateAllowedNotCached(t *testing.T) {
	c, _, _ := newTestCache(t, func(o *Options) {
		o.PrivateAllowed = func(u string) bool { return strings.Contains(u, "intranet.corp.example") }
	})
	const u = "https://intranet.corp.example/wiki"
	c.Put(u, Entry{Content: "internal"}, "", "")
	if _, ok := c.Get(u, "", ""); ok || c.Cacheable(u) {
		t.Fatal("private-allowed URL cached")
	}
	c.Put("https://example.com/x", Entry{Content: "x", FinalURL: u}, "", "")
	if _, ok := c.Get("https://example.com/x", "", ""); ok {
		t.Fatal("redirect to a private-allowed URL cached")
	}
	if !c.Cacheable("https://example.com/x") {
		t.Fatal("public URL not cacheable")
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	c, clk, dir := newTestCache(t, nil)
	const u = "https://example.com/a"
	content := "# Title\n\nbody é 😀\n"
	if err := c.Put(u, Entry{Content: content, Title: "T", FinalURL: "https://www.example.com/a"}, "", "firecrawl"); err != nil {
		t.Fatal(err)
	}
	e, ok := c.Get(u, "markdown", "firecrawl") // "" and "markdown" are the same key
	if !ok || e.Content != content || e.Title != "T" || e.URL != u || e.FinalURL != "https://www.example.com/a" || !e.FetchedAt.Equal(clk.Now()) {
		t.Fatalf("Get = %+v, %v", e, ok)
	}
	if _, ok := c.Get(u, "html", "firecrawl"); ok {
		t.Fatal("html served from a markdown entry")
	}
	if _, ok := c.Get(u, "", "exa"); ok {
		t.Fatal("one provider's rendering served for another")
	}
	path := filepath.Join(dir, FileName(u, "", "firecrawl"))
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Fatal("entry file content")
	}
	ie := readIndexFile(t, dir)[Key(u, "", "firecrawl")]
	if ie.File != path || ie.URL != u || ie.FetchedAt != float64(clk.Now().Unix()) {
		t.Fatalf("index entry %+v", ie)
	}
	// BOM tolerated.
	os.WriteFile(path, []byte("\ufeffhello"), 0o644)
	if e, ok := c.Get(u, "", "firecrawl"); !ok || e.Content != "hello" {
		t.Fatalf("BOM: %q %v", e.Content, ok)
	}
}

func TestTTLExpiry(t *testing.T) {
	c, clk, _ := newTestCache(t, func(o *Options) { o.TTL = 5 * time.Minute })
	const u = "https://example.com/ttl"
	c.Put(u, Entry{Content: "x"}, "", "")
	clk.Advance(5*time.Minute - time.Second)
	if _, ok := c.Get(u, "", ""); !ok {
		t.Fatal("miss before TTL")
	}
	clk.Advance(time.Second)
	if _, ok := c.Get(u, "", ""); ok {
		t.Fatal("hit at TTL (age must be < TTL)")
	}
	// An entry stamped in the future is not trusted.
	c.Put(u, Entry{Content: "x", FetchedAt: clk.Now().Add(time.Hour)}, "", "")
	if _, ok := c.Get(u, "", ""); ok {
		t.Fatal("future entry served")
	}
}

func TestTTLClamp(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: DefaultTTL, -1: DefaultTTL, time.Second: MinTTL,
		5 * time.Minute: 5 * time.Minute, 99999 * time.Minute: MaxTTL} {
		if got := New(Options{TTL: in}).TTL(); got != want {
			t.Errorf("TTL(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestDisabled(t *testing.T) {
	c, _, dir := newTestCache(t, func(o *Options) { o.Enabled = false })
	if err := c.Put("https://example.com/", Entry{Content: "x"}, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("disabled cache wrote to disk")
	}
	if _, ok := c.Get("https://example.com/", "", ""); ok {
		t.Fatal("disabled cache hit")
	}
	var nilCache *Cache
	if nilCache.Cacheable("https://example.com/") {
		t.Fatal("nil cache cacheable")
	}
	if _, ok := New(Options{Enabled: true}).Get("https://example.com/", "", ""); ok {
		t.Fatal("cache without Dir hit")
	}
}

func TestMissingProvenanceIsMiss(t *testing.T) {
	c, _, dir := newTestCache(t, nil)
	const u = "https://example.com/old"
	c.Put(u, Entry{Content: "x"}, "", "")
	ix := readIndexFile(t, dir)
	k := Key(u, "", "")
	e := ix[k]
	e.FinalURL = ""
	ix[k] = e
	writeIndexFile(t, dir, ix)
	if _, ok := c.Get(u, "", ""); ok {
		t.Fatal("entry without final_url served")
	}
	e.FinalURL = "http://localhost:3000/"
	ix[k] = e
	writeIndexFile(t, dir, ix)
	if _, ok := c.Get(u, "", ""); ok {
		t.Fatal("entry whose final URL is local served")
	}
}

func TestTamperedIndexOutsideDir(t *testing.T) {
	c, _, dir := newTestCache(t, nil)
	const u = "https://example.com/t"
	c.Put(u, Entry{Content: "cached"}, "", "")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("TOP SECRET"), 0o644)
	link := filepath.Join(dir, "innocent.cache.md")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.cache.md")
	mkfifo(t, fifo)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "nested.cache.md"), []byte("nested ok"), 0o644)
	k := Key(u, "", "")
	for _, c2 := range []struct {
		file string
		hit  bool
	}{
		{secret, false},
		{"../../" + filepath.Base(filepath.Dir(secret)) + "/secret.txt", false},
		{filepath.Join(dir, "..", "..", filepath.Base(filepath.Dir(filepath.Dir(secret)))), false},
		{link, false}, // inside by name, outside once resolved
		{dir, false},  // the cache dir itself
		{fifo, false}, // not a regular file (and must not block)
		{"/etc/passwd", false},
		{filepath.Join(dir, "sub", "nested.cache.md"), true}, // inside: allowed (spec: inside the root)
		{filepath.Join(dir, FileName(u, "", "")), true},
	} {
		ix := readIndexFile(t, dir)
		e := ix[k]
		e.File = c2.file
		ix[k] = e
		writeIndexFile(t, dir, ix)
		got, ok := c.Get(u, "", "")
		if ok != c2.hit || strings.Contains(got.Content, "SECRET") {
			t.Errorf("file %q: hit=%v content=%q", c2.file, ok, got.Content)
		}
	}
}

func TestCorruptIndexIsEmpty(t *testing.T) {
	c, _, dir := newTestCache(t, nil)
	c.Put("https://example.com/1", Entry{Content: "x"}, "", "")
	os.WriteFile(filepath.Join(dir, IndexFile), []byte("{not json"), 0o644)
	if _, ok := c.Get("https://example.com/1", "", ""); ok {
		t.Fatal("hit with corrupt index")
	}
	if err := c.Put("https://example.com/2", Entry{Content: "y"}, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("https://example.com/2", "", ""); !ok {
		t.Fatal("Put after corrupt index did not recover")
	}
	// A symlink planted at the entry path is replaced, not followed.
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("keep"), 0o644)
	p := filepath.Join(dir, FileName("https://example.com/3", "", ""))
	os.Symlink(outside, p)
	c.Put("https://example.com/3", Entry{Content: "z"}, "", "")
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Fatal("entry write followed a symlink")
	}
}

func TestEvictionTo500(t *testing.T) {
	c, clk, dir := newTestCache(t, nil)
	for i := 0; i <= DefaultMaxEntries; i++ {
		clk.Advance(time.Millisecond)
		if err := c.Put(fmt.Sprintf("https://example.com/p%d", i), Entry{Content: "x"}, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	ix := readIndexFile(t, dir)
	if len(ix) != DefaultMaxEntries {
		t.Fatalf("index has %d entries", len(ix))
	}
	if _, ok := ix[Key("https://example.com/p0", "", "")]; ok {
		t.Fatal("oldest entry survived")
	}
	if _, ok := c.Get("https://example.com/p500", "", ""); !ok {
		t.Fatal("newest entry missing")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cache.md"))
	if len(files) != DefaultMaxEntries {
		t.Fatalf("%d entry files on disk", len(files))
	}
}

func TestConcurrentPut(t *testing.T) {
	c, _, dir := newTestCache(t, nil)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				u := fmt.Sprintf("https://example.com/g%d/%d", g, i)
				if err := c.Put(u, Entry{Content: u}, "", ""); err != nil {
					t.Error(err)
				}
				if e, ok := c.Get(u, "", ""); !ok || e.Content != u {
					t.Errorf("Get after Put %s: %v", u, ok)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(readIndexFile(t, dir)); n != 80 {
		t.Fatalf("index has %d entries, want 80 (no lost inserts within a process)", n)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".extract-index-*")); len(tmps) != 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
}

// TestCrossProcessPut runs three copies of this test binary writing to one
// cache directory at once; the flock makes their read-modify-write cycles
// exclusive, so no insert is lost.
func TestCrossProcessPut(t *testing.T) {
	if dir := os.Getenv("GATEHOUSE_CACHE_HELPER_DIR"); dir != "" {
		c := New(Options{Dir: dir, Enabled: true})
		id := os.Getenv("GATEHOUSE_CACHE_HELPER_ID")
		for i := 0; i < 25; i++ {
			u := fmt.Sprintf("https://example.com/proc%s/%d", id, i)
			if err := c.Put(u, Entry{Content: u}, "", ""); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	dir := filepath.Join(t.TempDir(), "web")
	var cmds []*exec.Cmd
	for i := 0; i < 3; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrossProcessPut$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GATEHOUSE_CACHE_HELPER_DIR="+dir, "GATEHOUSE_CACHE_HELPER_ID="+strconv.Itoa(i))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(readIndexFile(t, dir)); n != 75 {
		t.Fatalf("index has %d entries, want 75", n)
	}
}

// BenchmarkCacheHit100KB measures a cache hit end to end as the pipeline
// does it: Get of a cached 100 KB page, then truncate.Apply at the default
// limit (which rewrites the full-text store file).
func BenchmarkCacheHit100KB(b *testing.B) {
	c, _, dir := newTestCache(b, nil)
	var sb strings.Builder
	for i := 0; sb.Len() < 100_000; i++ {
		fmt.Fprintf(&sb, "Paragraph %d: the quick brown fox jumps over the lazy dog, again and again.\n", i)
	}
	page := sb.String()[:100_000]
	const u = "https://example.com/long-article"
	// A realistic index: 499 other entries.
	for i := 0; i < 499; i++ {
		c.Put(fmt.Sprintf("https://example.com/other/%d", i), Entry{Content: "x"}, "", "firecrawl")
	}
	if err := c.Put(u, Entry{Content: page, Title: "Long"}, "", "firecrawl"); err != nil {
		b.Fatal(err)
	}
	store := &truncate.Store{Dir: dir}
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, ok := c.Get(u, "", "firecrawl")
		if !ok {
			b.Fatal("miss")
		}
		r := truncate.Apply(u, e.Content, 0, store)
		if !r.Truncated || r.StoredPath == "" {
			b.Fatal("not truncated/stored")
		}
	}
}
