package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LoadOptions shape one load run.
type LoadOptions struct {
	Tasks int // concurrent agent tasks (half as principal X, half as Y)
	// Kill sends SIGKILL to the last replica once half of the run's calls
	// have answered (only with 2 or more replicas).
	Kill    bool
	Queries int    // distinct search queries (default 10)
	Version string // MCP protocol version the clients ask for ("" = SDK default)
	// Deadline bounds the whole run (default 10 min).
	Deadline time.Duration
	Log      func(format string, args ...any)
}

// callsPerTask is the number of tool calls one task makes: web_search,
// web_extract (short page), web_extract (long page: truncated, stored),
// web_read (its own stored page), web_extract (another short page),
// web_read (a page another task of its principal stored: a control),
// web_read (the other principal's stored page: must be not_found).
const callsPerTask = 7

// Tools measured, in report order.
var toolNames = []string{"web_search", "web_extract", "web_read"}

// Result is what one load run measured.
type Result struct {
	Label    string
	Replicas int
	Redis    bool
	Features Features
	Check    string // HAProxy's health check
	// ReplicaMaxCalls is the mcp.replica_max_calls set (0: the default).
	ReplicaMaxCalls int

	Tasks, Completed int
	Calls            int // tool calls answered (the successful attempt of each)
	FailedAttempts   int // transport/protocol failures (each retried once)
	FailedAfterRetry int // calls whose one retry failed too
	Answered429      int64

	Lat map[string][]time.Duration // per tool, successful attempts

	ExtractRows, CachedRows int
	OwnReads, OwnReadsOK    int
	CrossReads              int // reads of the other principal's stored page
	CrossNotFound           int // … answered not_found (the only right answer)
	CrossSucceeded          int // … that returned the page: must be 0
	CrossNoTarget           int // tasks that found no stored page of the other principal to try
	SameReads, SameReadsOK  int // control: reads of a page another task of the same principal stored
	SearchIssued            int
	SearchCachedRows        int // web_search results with meta.cached
	SearchBackend           int // requests that reached the search backend
	OriginFetches           int // page requests that reached the page site

	Wall     time.Duration
	CPU      time.Duration // user+sys of the replicas during the run
	RedisCPU time.Duration
	// RedisMemory is Redis' used_memory after the run (bytes) and
	// RedisKeys its key count (DBSIZE).
	RedisMemory, RedisKeys int64
	Killed                 string // replica killed mid-run
	KilledAt               int    // calls answered when it was killed
	Protocols              map[string]int
	Failures               map[string]int // refusal reasons and error texts seen, with counts
	HAProxy                []ServerStat
}

// run is the shared state of one load run's tasks.
type run struct {
	f       *Fleet
	o       LoadOptions
	res     *Result
	mu      sync.Mutex
	stored  map[string][]string // principal → stored paths its own read confirmed
	answers atomic.Int64
	killAt  int64
	kill    sync.Once
	n429    atomic.Int64
}

// RunLoad runs o.Tasks concurrent agent tasks against f's endpoint and
// returns what it measured. The replicas' CPU is counted from the start of
// the load to their exit, so the caller closes the fleet (f.Close) and then
// calls Finish.
func RunLoad(ctx context.Context, f *Fleet, o LoadOptions) *Result {
	if o.Queries <= 0 {
		o.Queries = 10
	}
	if o.Deadline <= 0 {
		o.Deadline = 10 * time.Minute
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()
	r := &run{f: f, o: o, stored: map[string][]string{}, res: &Result{
		Replicas: len(f.Replicas), Redis: f.Redis != nil, Features: f.Features, Tasks: o.Tasks,
		Lat: map[string][]time.Duration{}, Protocols: map[string]int{}, Failures: map[string]int{},
	}}
	if f.LB != nil {
		r.res.Check = f.LB.Check
	}
	r.res.ReplicaMaxCalls = f.opts.ReplicaMaxCalls
	r.killAt = int64(o.Tasks * callsPerTask / 2)
	for _, rep := range f.Replicas {
		rep.MarkCPU()
	}
	search0, origin0 := f.Search.Total(), f.Pages.Total()
	start := time.Now()
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range o.Tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			r.task(ctx, i)
		}()
	}
	close(gate)
	wg.Wait()
	r.res.Wall = time.Since(start)
	r.res.SearchBackend = f.Search.Total() - search0
	r.res.OriginFetches = f.Pages.Total() - origin0
	r.res.Answered429 = r.n429.Load()
	if f.LB != nil {
		r.res.HAProxy, _ = f.LB.Stats()
	}
	if f.Redis != nil {
		if info, err := f.Redis.Do("INFO", "memory"); err == nil {
			for _, l := range strings.Split(info, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
					r.res.RedisMemory, _ = strconv.ParseInt(v, 10, 64)
				}
			}
		}
		if n, err := f.Redis.Do("DBSIZE"); err == nil {
			r.res.RedisKeys, _ = strconv.ParseInt(n, 10, 64)
		}
	}
	return r.res
}

// Finish reads the replicas' and Redis's CPU time; call it after f.Close
// (rusage of the exited processes).
func (res *Result) Finish(f *Fleet) {
	for _, rep := range f.Replicas {
		res.CPU += rep.CPUSinceMark()
	}
	if f.Redis != nil {
		res.RedisCPU = f.Redis.CPU()
	}
}

func (r *run) fail(what string) {
	if len(what) > 160 {
		what = what[:160] + "…"
	}
	r.mu.Lock()
	r.res.Failures[what]++
	r.mu.Unlock()
}

// answered counts one answered call and kills the last replica when half
// of the run's calls have answered.
func (r *run) answered() {
	n := r.answers.Add(1)
	if r.o.Kill && len(r.f.Replicas) > 1 && n >= r.killAt {
		r.kill.Do(func() {
			victim := r.f.Replicas[len(r.f.Replicas)-1]
			go func() {
				victim.Kill()
				r.o.Log("SIGKILL replica %s after %d answered calls", victim.Name, n)
			}()
			r.mu.Lock()
			r.res.Killed, r.res.KilledAt = victim.Name, int(n)
			r.mu.Unlock()
		})
	}
}

// task is one agent: one principal, one session, callsPerTask calls.
type task struct {
	r  *run
	i  int
	p  Principal
	cl *Client
	cs *mcp.ClientSession
	ok bool
	// ownPath is the page this task stored.
	ownPath string
}

func (r *run) task(ctx context.Context, i int) {
	t := &task{r: r, i: i, p: r.f.Principals[i%2], ok: true}
	t.cl = &Client{Endpoint: r.f.Endpoint(), Principal: t.p, Version: r.o.Version, Answered429: &r.n429}
	defer func() {
		if t.cs != nil {
			t.cs.Close()
		}
		if t.ok {
			r.mu.Lock()
			r.res.Completed++
			r.mu.Unlock()
		}
	}()
	if err := t.connect(ctx); err != nil {
		if err = t.connect(ctx); err != nil {
			r.fail("connect: " + err.Error())
			t.ok = false
			return
		}
	}
	pages := r.f.Pages
	// Task i asks query (i/2) mod Queries: both principals ask each query,
	// so the memo (per principal) answers each principal's first asker.
	q := fmt.Sprintf("fleet query %d", (i/2)%r.o.Queries)

	var so SearchOut
	if t.call(ctx, "web_search", map[string]any{"query": q}, &so) {
		r.mu.Lock()
		r.res.SearchIssued++
		if so.Meta != nil && so.Meta.Cached {
			r.res.SearchCachedRows++
		}
		r.mu.Unlock()
	}
	t.extract(ctx, pages.URL(shortPath((i*7)%shortPages)))
	long := t.extract(ctx, pages.URL(longPath(t.p.Name, i%longPages)))
	if long != nil && long.failure() == "" {
		m := long.Results[0].Meta
		if m == nil || !m.Truncated || m.StoredPath == "" {
			r.fail("web_extract of a long page: not truncated and stored")
			t.ok = false
		} else {
			var ro ReadOut
			r.mu.Lock()
			r.res.OwnReads++
			r.mu.Unlock()
			if t.call(ctx, "web_read", map[string]any{"path": m.StoredPath}, &ro) {
				r.mu.Lock()
				r.res.OwnReadsOK++
				r.stored[t.p.Name] = append(r.stored[t.p.Name], m.StoredPath)
				t.ownPath = m.StoredPath
				r.mu.Unlock()
			}
		}
	}
	t.extract(ctx, pages.URL(shortPath((i*7+3)%shortPages)))
	t.crossRead(ctx)
}

func (t *task) connect(ctx context.Context) error {
	if t.cs != nil {
		t.cs.Close()
		t.cs = nil
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cs, err := t.cl.Connect(cctx)
	if err != nil {
		return err
	}
	t.cs = cs
	if ir := cs.InitializeResult(); ir != nil {
		t.r.mu.Lock()
		t.r.res.Protocols[ir.ProtocolVersion]++
		t.r.mu.Unlock()
	}
	return nil
}

// outcome is a tool result type with a failure reason ("" = success).
type outcome interface{ failure() string }

// call makes one tool call into out. A transport or protocol failure is
// retried once, on a new session (the replica that failed may be gone);
// the retry must succeed. It reports whether the tool answered with
// success; a refusal is recorded by its reason code.
func (t *task) call(ctx context.Context, tool string, args map[string]any, out outcome) bool {
	text, d, err := t.attempt(ctx, tool, args)
	if err != nil {
		t.r.mu.Lock()
		t.r.res.FailedAttempts++
		t.r.mu.Unlock()
		t.r.fail(tool + " attempt failed (retried): " + err.Error())
		retryPause()
		if cerr := t.connect(ctx); cerr != nil {
			err = fmt.Errorf("reconnect: %w", cerr)
		} else {
			text, d, err = t.attempt(ctx, tool, args)
		}
		if err != nil {
			t.r.mu.Lock()
			t.r.res.FailedAfterRetry++
			t.r.mu.Unlock()
			t.r.fail(tool + " failed after its retry: " + err.Error())
			t.ok = false
			return false
		}
	}
	t.r.mu.Lock()
	t.r.res.Calls++
	t.r.res.Lat[tool] = append(t.r.res.Lat[tool], d)
	t.r.mu.Unlock()
	t.r.answered()
	if err := decode(text, out); err != nil {
		t.r.fail(tool + ": " + err.Error())
		t.ok = false
		return false
	}
	if why := out.failure(); why != "" {
		t.r.fail(tool + " refused: " + why)
		t.ok = false
		return false
	}
	return true
}

// retryPause is the client's pause before its one retry (a client retries
// after a short back-off, not in the same millisecond): 200 ms, time for
// the load balancer to see the dead replica's connections closed.
func retryPause() { time.Sleep(200 * time.Millisecond) }

func (t *task) attempt(ctx context.Context, tool string, args map[string]any) (string, time.Duration, error) {
	if t.cs == nil {
		if err := t.connect(ctx); err != nil {
			return "", 0, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	start := time.Now()
	text, err := callTool(cctx, t.cs, tool, args)
	return text, time.Since(start), err
}

func (t *task) extract(ctx context.Context, u string) *ExtractOut {
	var eo ExtractOut
	if !t.call(ctx, "web_extract", map[string]any{"urls": []string{u}}, &eo) {
		if eo.Results == nil {
			return nil
		}
	}
	t.r.mu.Lock()
	for _, row := range eo.Results {
		t.r.res.ExtractRows++
		if row.Meta != nil && row.Meta.Cached {
			t.r.res.CachedRows++
		}
	}
	t.r.mu.Unlock()
	return &eo
}

// crossRead reads a page the other principal stored (and read back) and
// expects not_found: a handle is never authentication. As a control it
// first reads a page another task of its own principal stored, which
// principal scoping lets it read (informational: it shows the not_found
// comes from the principal, not from a per-session rule).
func (t *task) crossRead(ctx context.Context) {
	other := t.r.f.Principals[(t.i+1)%2].Name
	own := t.r.f.Principals[t.i%2].Name
	if path := t.pick(own, t.ownPath); path != "" {
		why, ok := t.probeRead(ctx, path)
		t.r.mu.Lock()
		if ok {
			t.r.res.SameReads++
			if why == "" {
				t.r.res.SameReadsOK++
			}
		}
		t.r.mu.Unlock()
	}
	path := ""
	_ = waitFor("a stored page of principal "+other, 15*time.Second, nil, func() bool {
		path = t.pick(other, "")
		return path != "" || ctx.Err() != nil
	})
	if path == "" {
		t.r.mu.Lock()
		t.r.res.CrossNoTarget++
		t.r.mu.Unlock()
		return
	}
	t.r.mu.Lock()
	t.r.res.CrossReads++
	t.r.mu.Unlock()
	why, ok := t.probeRead(ctx, path)
	if !ok {
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	switch {
	case why == "":
		t.r.res.CrossSucceeded++
		t.ok = false
	case strings.HasSuffix(why, "not_found"):
		t.r.res.CrossNotFound++
	default:
		t.r.res.Failures["cross-principal web_read: "+why+" (want not_found)"]++
		t.ok = false
	}
}

// pick returns a path principal's tasks stored, other than not ("" if none).
func (t *task) pick(principal, not string) string {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	s := t.r.stored[principal]
	for k := range s {
		if p := s[(t.i+k)%len(s)]; p != not {
			return p
		}
	}
	return ""
}

// probeRead calls web_read on path, whose refusal may be the expected
// answer: it returns the refusal's reason ("" for a successful read) and
// whether the call was answered (a failed attempt is retried once, as
// every call is; a call failing after it fails the task).
func (t *task) probeRead(ctx context.Context, path string) (string, bool) {
	args := map[string]any{"path": path}
	text, d, err := t.attempt(ctx, "web_read", args)
	if err != nil {
		t.r.mu.Lock()
		t.r.res.FailedAttempts++
		t.r.mu.Unlock()
		t.r.fail("web_read attempt failed (retried): " + err.Error())
		retryPause()
		if cerr := t.connect(ctx); cerr == nil {
			text, d, err = t.attempt(ctx, "web_read", args)
		} else {
			err = cerr
		}
		if err != nil {
			t.r.mu.Lock()
			t.r.res.FailedAfterRetry++
			t.r.mu.Unlock()
			t.r.fail("web_read failed after its retry: " + err.Error())
			t.ok = false
			return "", false
		}
	}
	t.r.mu.Lock()
	t.r.res.Calls++
	t.r.res.Lat["web_read"] = append(t.r.res.Lat["web_read"], d)
	t.r.mu.Unlock()
	t.r.answered()
	var ro ReadOut
	if err := decode(text, &ro); err != nil {
		t.r.fail("web_read: " + err.Error())
		t.ok = false
		return "", false
	}
	return ro.failure(), true
}

// percentile returns the p-th percentile (0..100) of ds (nearest rank).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// CPUPerCall is the replicas' CPU time per answered call.
func (res *Result) CPUPerCall() time.Duration {
	if res.Calls == 0 {
		return 0
	}
	return res.CPU / time.Duration(res.Calls)
}

// HitRatio is the share of extracted rows served from the cache.
func (res *Result) HitRatio() float64 {
	if res.ExtractRows == 0 {
		return 0
	}
	return float64(res.CachedRows) / float64(res.ExtractRows)
}
