package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
)

// TestFleet is issue 18's shared-service test with real processes, in a
// network namespace of its own (see netns.go): a redis-server, two
// `gatehouse mcp --http` replicas with their own GATEHOUSE_HOMEs and one
// GATEHOUSE_REDIS_URL, principals X and Y (--tokens), HAProxy in front.
//
//   - shared state, replica to replica (the first "Done when" bullet): a
//     page stored by a truncated web_extract on A is read with web_read on
//     B; a page fetched on A is a cache hit on B (meta.cached, the origin
//     fetched once); 10 identical concurrent searches, 5 on each replica,
//     reach the search backend once; X cannot read Y's stored page
//     (not_found) while Y can, on either replica;
//   - Redis stopped: /readyz turns 503 on both replicas and calls get
//     state_unavailable; Redis started again: /readyz 200 and calls
//     succeed, the replicas never restarted;
//   - the short load and fault test (bench/fleet with 20 tasks through
//     HAProxy, one replica SIGKILLed mid-run): every task completes, no
//     cross-principal read, no call failing after its one retry.
//
// Under CI=true a missing redis-server, haproxy or namespace privilege
// fails the test; otherwise it skips, naming what is missing.
func TestFleet(t *testing.T) {
	if !inNamespace(t, false) {
		return
	}
	f := startTestFleet(t)
	t.Logf("features of the binary under test: %+v", f.Features)
	t.Run("shared state across replicas", func(t *testing.T) { checkSharedState(t, f) })
	t.Run("Redis down and back", func(t *testing.T) { checkRedisOutage(t, f) })
	t.Run("load with a replica killed", func(t *testing.T) { checkShortLoad(t, f) })
}

// inNamespace reports whether the test runs inside the fleet's namespace;
// outside, it builds the binary, runs the test again inside one and
// reports false. browser: the test also needs Chromium's headless shell.
func inNamespace(t *testing.T, browser bool) bool {
	t.Helper()
	if os.Getenv(NetnsEnv) == "1" {
		if err := setupNamespace(); err != nil {
			t.Fatal(err)
		}
		if os.Getenv(BinEnv) == "" {
			t.Fatalf("%s unset inside the namespace", BinEnv)
		}
		t.Log("running " + NamespaceNote)
		return true
	}
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the fleet test cannot run: %s (CI installs redis-server and haproxy, and runs as root)", why)
		}
		t.Skipf("skipping: %s (the fleet test needs redis-server, haproxy, and a network namespace: root, or unprivileged user namespaces)", why)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		missing("redis-server not found (Debian package redis-server)")
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err != nil {
		if _, err := exec.LookPath("haproxy"); err != nil {
			missing("haproxy not found (Debian package haproxy)")
		}
	}
	if browser {
		if _, err := os.Stat(backend.DefaultHeadlessShellPath); err != nil {
			missing("chromium-headless-shell not found (Debian package chromium-headless-shell)")
		}
	}
	args, err := unshareArgs()
	if err != nil {
		missing(err.Error())
	}
	bin, err := testBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	argv := append(append(args[1:], "--", os.Args[0]), "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=140s")
	cmd := exec.CommandContext(ctx, args[0], argv...)
	cmd.Env = append(os.Environ(), NetnsEnv+"=1", BinEnv+"="+bin)
	out, err := cmd.CombinedOutput()
	t.Logf("inside the network namespace:\n%s", out)
	if err != nil {
		t.Fatalf("the fleet test failed inside its network namespace: %v", err)
	}
	return false
}

// testBin is cmd/gatehouse as testBinary built it: once per run of this
// test binary, for both fleet tests (a build links the whole program,
// seconds of CPU). TestMain removes dir.
var testBin struct {
	once      sync.Once
	dir, path string
	err       error
}

// testBinary returns the path of cmd/gatehouse built once per test binary
// run (buildGatehouse); a failed build fails every caller.
func testBinary() (string, error) {
	testBin.once.Do(func() {
		testBin.dir, testBin.err = os.MkdirTemp("", "gatehouse-fleet-test-")
		if testBin.err == nil {
			testBin.path, testBin.err = buildGatehouse(testBin.dir)
		}
	})
	return testBin.path, testBin.err
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testBin.dir != "" {
		os.RemoveAll(testBin.dir)
	}
	os.Exit(code)
}

func startTestFleet(t *testing.T) *Fleet {
	t.Helper()
	f, err := StartFleet(Options{Bin: os.Getenv(BinEnv), Dir: t.TempDir(), Replicas: 2, Redis: true, LB: true,
		SearchDelay: 400 * time.Millisecond, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// conn is an MCP session of one principal on one replica (no load
// balancer: the test chooses the replica).
type conn struct {
	cs   *mcp.ClientSession
	cl   *Client
	name string // "X on A"
}

func session(t *testing.T, r *Replica, p Principal) *conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := &Client{Endpoint: r.URL(), Principal: p}
	cs, err := cl.Connect(ctx)
	if err != nil {
		t.Fatalf("connect to replica %s as %s: %v", r.Name, p.Name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &conn{cs: cs, cl: cl, name: p.Name + " on " + r.Name}
}

// outcome calls tool into out and returns the refusal's reason code and
// message ("" for a success), whether the refusal came as the tool's result
// or as an HTTP error answer carrying the reason in its JSON-RPC error
// (a call refused before it runs: limits, shared state). A transport
// failure without a reason fails the test.
func (c *conn) outcome(t *testing.T, tool string, args map[string]any, out outcome) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c.cl.last.Store(nil)
	text, err := callTool(ctx, c.cs, tool, args)
	if err != nil {
		if h := c.cl.LastHTTPFailure(); h != nil {
			if code, msg := h.Reason(); code != "" {
				return code, fmt.Sprintf("HTTP %d: %s", h.Status, msg)
			}
		}
		t.Fatalf("%s, %s: %v", c.name, tool, err)
	}
	if err := decode(text, out); err != nil {
		t.Fatalf("%s, %s: %v", c.name, tool, err)
	}
	why := out.failure()
	msg := ""
	switch o := out.(type) {
	case *ExtractOut:
		msg = o.Error
		if o.Success == nil && len(o.Results) > 0 && o.Results[0].Error != nil {
			msg = *o.Results[0].Error
		}
	case *ReadOut:
		msg = o.Error
	case *SearchOut:
		msg = o.Error
	}
	return why, msg
}

func (c *conn) extract(t *testing.T, u string) *ExtractOut {
	t.Helper()
	var eo ExtractOut
	if why, msg := c.outcome(t, "web_extract", map[string]any{"urls": []string{u}}, &eo); why != "" {
		t.Fatalf("%s, web_extract %s: %s: %s", c.name, u, why, msg)
	}
	return &eo
}

// read calls web_read and returns the result and its refusal reason ("" on
// success).
func (c *conn) read(t *testing.T, path string) (*ReadOut, string, string) {
	t.Helper()
	var ro ReadOut
	why, msg := c.outcome(t, "web_read", map[string]any{"path": path}, &ro)
	return &ro, why, msg
}

// storeLong extracts a long page and returns its stored path.
func (c *conn) storeLong(t *testing.T, u string) string {
	t.Helper()
	eo := c.extract(t, u)
	m := eo.Results[0].Meta
	if m == nil || !m.Truncated || m.StoredPath == "" {
		t.Fatalf("%s, web_extract %s: want a truncated row with meta.stored_path, got meta %+v", c.name, u, m)
	}
	return m.StoredPath
}

// nonceRe matches the per-call nonce of the untrusted-content markers, the
// one part of a page's text that differs between two calls.
var nonceRe = regexp.MustCompile(`nonce=[^ >]+`)

func sameText(a, b string) bool {
	return nonceRe.ReplaceAllString(a, "nonce=N") == nonceRe.ReplaceAllString(b, "nonce=N")
}

func checkSharedState(t *testing.T, f *Fleet) {
	a, b := f.Replicas[0], f.Replicas[1]
	x, y := f.Principals[0], f.Principals[1]
	xa, xb := session(t, a, x), session(t, b, x)

	t.Run("a page stored on A is read on B", func(t *testing.T) {
		path := xa.storeLong(t, f.Pages.URL(longPath(x.Name, 100)))
		onB, why, msg := xb.read(t, path)
		if why != "" {
			t.Fatalf("web_read %q on replica B: %s: %s", path, why, msg)
		}
		onA, why, msg := xa.read(t, path)
		if why != "" {
			t.Fatalf("web_read %q on replica A: %s: %s", path, why, msg)
		}
		if !sameText(onA.Content, onB.Content) {
			t.Errorf("web_read of %q: replica B's text differs from replica A's", path)
		}
	})

	t.Run("a page fetched on A is a cache hit on B", func(t *testing.T) {
		p := shortPath(100)
		first := xa.extract(t, f.Pages.URL(p))
		second := xb.extract(t, f.Pages.URL(p))
		if m := second.Results[0].Meta; m == nil || !m.Cached {
			t.Errorf("web_extract on B of a page fetched on A: meta.cached false, want true (meta %+v)", m)
		}
		if n := f.Pages.Hits(p); n != 1 {
			t.Errorf("the origin served %s %d times, want 1", p, n)
		}
		if !sameText(first.Results[0].Content, second.Results[0].Content) {
			t.Errorf("the cached page's text on B differs from A's")
		}
	})

	t.Run("10 identical concurrent searches reach the backend once", func(t *testing.T) {
		const q = "single flight across replicas"
		var conns []*conn
		for i := range 10 {
			conns = append(conns, session(t, f.Replicas[i%2], x))
		}
		var wg sync.WaitGroup
		errs := make([]string, 10)
		gate := make(chan struct{})
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				text, err := callTool(ctx, c.cs, "web_search", map[string]any{"query": q})
				var so SearchOut
				if err == nil {
					err = decode(text, &so)
				}
				if err != nil {
					errs[i] = err.Error()
				} else if why := so.failure(); why != "" {
					errs[i] = why + ": " + so.Error
				}
			}()
		}
		close(gate)
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				t.Errorf("search %d (%s): %s", i, conns[i].name, e)
			}
		}
		if n := f.Search.Hits(q); n != 1 {
			t.Errorf("10 identical concurrent searches over both replicas reached the backend %d times (arrivals %s), want 1", n, f.Search.Arrivals(q))
		}
	})

	t.Run("X cannot read Y's stored page", func(t *testing.T) {
		ya, yb := session(t, a, y), session(t, b, y)
		path := yb.storeLong(t, f.Pages.URL(longPath(y.Name, 100)))
		for _, c := range []*conn{xa, xb} {
			if _, why, msg := c.read(t, path); !strings.HasSuffix(why, "not_found") {
				t.Errorf("%s: web_read of Y's page %q: %q (%s), want a not_found refusal", c.name, path, why, msg)
			}
		}
		// The control: Y itself reads it on the other replica.
		if _, why, msg := ya.read(t, path); why != "" {
			t.Errorf("%s: web_read of Y's own page %q: %s: %s", ya.name, path, why, msg)
		}
	})
}

func checkRedisOutage(t *testing.T, f *Fleet) {
	x := f.Principals[0]
	ctx := context.Background()
	a, b := f.Replicas[0], f.Replicas[1]
	xa, xb := session(t, a, x), session(t, b, x)
	stored := xa.storeLong(t, f.Pages.URL(longPath(x.Name, 101)))
	pids := []int{a.p.cmd.Process.Pid, b.p.cmd.Process.Pid}

	f.Redis.Stop()
	restarted := false
	defer func() {
		// Whatever failed above, the next subtest gets Redis back and
		// HAProxy with every replica UP.
		if !restarted {
			if err := f.Redis.Start(); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.LB.WaitAllUp(len(f.Replicas), 20*time.Second); err != nil {
			t.Fatalf("HAProxy after Redis came back: %v", err)
		}
	}()
	for _, r := range f.Replicas {
		var code int
		var body string
		if err := waitFor("replica "+r.Name+" /readyz 503 with Redis down", 15*time.Second, r.p, func() bool {
			code, body = r.Readyz(ctx)
			return code == 503
		}); err != nil {
			t.Errorf("%v (last: %d %q)", err, code, body)
		} else {
			t.Logf("replica %s with Redis down: /readyz %d %q", r.Name, code, body)
		}
	}
	want := func(what, why, msg string) {
		t.Helper()
		if why != "state_unavailable" {
			t.Errorf("%s with Redis down: %q (%s), want state_unavailable", what, why, msg)
		} else if !strings.Contains(msg, "127.0.0.1") {
			t.Errorf("%s with Redis down: the message does not name the Redis host: %s", what, msg)
		}
	}
	_, why, msg := xb.read(t, stored)
	want("web_read on B", why, msg)
	var eo ExtractOut
	why, msg = xa.outcome(t, "web_extract", map[string]any{"urls": []string{f.Pages.URL(shortPath(101))}}, &eo)
	want("web_extract on A", why, msg)
	var so SearchOut
	why, msg = xb.outcome(t, "web_search", map[string]any{"query": "redis is down"}, &so)
	want("web_search on B", why, msg)

	if err := f.Redis.Start(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	for _, r := range f.Replicas {
		if err := waitFor("replica "+r.Name+" /readyz 200 with Redis back", 15*time.Second, r.p, func() bool {
			code, _ := r.Readyz(ctx)
			return code == 200
		}); err != nil {
			t.Error(err)
		}
	}
	// Calls succeed again on the same processes, through the same sessions.
	stored = xb.storeLong(t, f.Pages.URL(longPath(x.Name, 102)))
	if _, why, msg := xa.read(t, stored); why != "" {
		t.Errorf("web_read on A after Redis came back: %s: %s", why, msg)
	}
	var so2 SearchOut
	if why, msg := xa.outcome(t, "web_search", map[string]any{"query": "redis is back"}, &so2); why != "" {
		t.Errorf("web_search on A after Redis came back: %s: %s", why, msg)
	}
	for i, r := range f.Replicas {
		if !r.Alive() || r.p.cmd.Process.Pid != pids[i] {
			t.Errorf("replica %s restarted or died during the Redis outage", r.Name)
		}
	}
}

func checkShortLoad(t *testing.T, f *Fleet) {
	const tasks, queries = 20, 5
	res := RunLoad(context.Background(), f, LoadOptions{Tasks: tasks, Kill: true, Queries: queries, Deadline: 60 * time.Second,
		Log: func(format string, args ...any) { t.Logf(format, args...) }})
	res.Label = "short fleet: 2 replicas + Redis behind HAProxy, one SIGKILLed"
	res.Finish(f)
	t.Logf("\n%s", Table(res, nil))
	if res.Killed == "" {
		t.Errorf("no replica was killed mid-run")
	}
	if res.Completed != tasks {
		t.Errorf("%d of %d tasks completed", res.Completed, tasks)
	}
	if res.FailedAfterRetry != 0 {
		t.Errorf("%d calls failed after their one retry", res.FailedAfterRetry)
	}
	if res.CrossSucceeded != 0 || res.CrossReads == 0 {
		t.Errorf("cross-principal reads: %d of %d returned the other principal's page (want 0 of more than 0)", res.CrossSucceeded, res.CrossReads)
	}
	if res.OwnReadsOK != res.OwnReads {
		t.Errorf("own stored pages read back: %d of %d", res.OwnReadsOK, res.OwnReads)
	}
	// The control: principal scoping (not a per-session rule) lets a task
	// read what another task of its principal stored, on either replica.
	if res.SameReadsOK != res.SameReads {
		t.Errorf("pages stored by another task of the same principal read back: %d of %d", res.SameReadsOK, res.SameReads)
	}
	if res.CachedRows == 0 {
		t.Errorf("no extract was a cache hit across %d rows", res.ExtractRows)
	}
	// The memo is per principal and shared by the replicas: one backend
	// search per query and principal, except that a search the killed
	// replica was running (or had run but not stored) may run once more
	// on the survivor. (The exact single-flight property, without a kill,
	// is the shared-state subtest's.)
	for q := range queries {
		query := fmt.Sprintf("fleet query %d", q)
		if n, max := f.Search.Hits(query), len(f.Principals)*len(f.Replicas); n > max {
			t.Errorf("%q reached the search backend %d times (want at most %d: once per principal, once more after the kill)", query, n, max)
		}
	}
	t.Logf("searches reaching the backend: %d for %d queries of %d principals", res.SearchBackend, queries, len(f.Principals))
	fmt.Fprintln(os.Stderr, "fleet (short):", strings.TrimSuffix(summaryOf(res), "\n"))
}

// summaryOf is Summary without a baseline.
func summaryOf(res *Result) string {
	s, _ := Summary(res, nil)
	return s
}

// TestFleetBrowser is the short version of issue 19's fleet load test
// (`go run ./bench/fleet -browser`), with real processes in the fleet's
// network namespace: a redis-server, two `gatehouse browser-node`s
// (Chromium's headless shell) and two `gatehouse mcp --http` replicas over
// one GATEHOUSE_REDIS_URL, then one replica without Redis (its own
// Chromium) as the baseline. Each of browserShortTasks concurrent tasks
// navigates to its own page, snapshots, types, clicks, follows a link,
// goes back, reads document.cookie and closes; every task must complete,
// no task may read another's marker or cookie, and no process of either
// fleet may be left once it stopped. The latency ratios are printed, not
// asserted (this machine's load decides them; the bench judges them).
func TestFleetBrowser(t *testing.T) {
	if !inNamespace(t, true) {
		return
	}
	dir := t.TempDir()
	o := browserOptions{Bin: os.Getenv(BinEnv), Dir: dir, Tasks: browserShortTasks, Log: func(format string, args ...any) { t.Logf(format, args...) }}
	var runs []*BrowserResult
	for _, shared := range []bool{true, false} {
		res, err := runBrowserFleet(o, shared)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, res)
		if res.Completed != res.Tasks {
			t.Errorf("%s: %d of %d tasks completed", res.Label, res.Completed, res.Tasks)
		}
		if res.Bleed != 0 || res.SiteBleed != 0 {
			t.Errorf("%s: cross-task bleed: %d reads, %d requests at the site", res.Label, res.Bleed, res.SiteBleed)
		}
		if len(res.Left) != 0 {
			t.Errorf("%s: processes left after the fleet stopped: %v", res.Label, res.Left)
		}
		if res.PeakOpen == 0 || res.PeakPSSkB == 0 {
			t.Errorf("%s: no PSS sample with sessions open", res.Label)
		}
		// The leftover check must see Chromium: while sessions were open,
		// it tracked at least one renderer per open session besides the
		// replicas and nodes.
		if want := res.Replicas + res.Nodes + res.PeakOpen; res.TrackedAtPeak < want {
			t.Errorf("%s: %d processes of the fleet tracked with %d sessions open, want at least %d (replicas, nodes, a renderer per session): the leftover check cannot see Chromium",
				res.Label, res.TrackedAtPeak, res.PeakOpen, want)
		}
		// With two replicas, a task with a handle alternates them (one
		// process hands out handles too, with no other replica to use).
		if res.Handles > 0 && res.Replicas > 1 && res.OtherReplica == 0 {
			t.Errorf("%s: %d session handles, but no call went through the other replica", res.Label, res.Handles)
		}
	}
	t.Logf("\n%s", BrowserTable(runs[0], runs[1]))
	sum, _ := BrowserSummary(runs[0], runs[1])
	fmt.Fprintln(os.Stderr, sum)
}

// browserShortTasks is TestFleetBrowser's concurrent tasks (the bench's
// default is 200).
const browserShortTasks = 16
