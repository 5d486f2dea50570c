package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BrowserLoadOptions shape one browser load run.
type BrowserLoadOptions struct {
	Tasks int // concurrent browser tasks (half as principal X, half as Y)
	// Sessions is the total number of browser sessions to run, in waves of
	// Tasks concurrent tasks (≤ Tasks: one wave).
	Sessions int
	// Version is the MCP protocol version the clients ask for; "" is
	// 2025-11-25, the session flow, where each MCP session is its own task
	// and so its own browser session (sessionless 2026-07-28 calls of one
	// principal share one task until they pass session handles).
	Version string
	// Open, when > 0, is how many tasks may hold a browser session at once
	// (a semaphore in the client around navigate … close): the same
	// concurrency for both runs, so their latencies compare the path, not
	// how many renderers each admitted at once. 0: no limit.
	Open int
	// Deadline bounds the whole run (default 10 min).
	Deadline time.Duration
	Log      func(format string, args ...any)
}

// Browser call names in report order; "nav+snap" is browser_navigate plus
// the browser_snapshot after it, "click" the click on the form's button
// (an in-page change answered with a delta), "follow" the click on the
// link (a navigation).
var browserMeasures = []string{"nav+snap", "navigate", "snapshot", "type", "click", "follow", "back", "console", "close"}

// BrowserResult is what one browser load run measured.
type BrowserResult struct {
	Label    string
	Replicas int
	Nodes    int

	Tasks, Completed int
	Calls            int
	// Handles counts navigations whose result carried a session handle;
	// OtherReplica counts calls served by a replica other than the one
	// that navigated (only with handles).
	Handles, OtherReplica int
	// Bleed counts reads (snapshot, delta, document.cookie) showing another
	// task's marker or cookie; SiteBleed requests reaching the page site
	// with another task's cookie. Both must be 0.
	Bleed, SiteBleed int
	CapacityWaits    int // browser_capacity answers waited out (Retry-After) before a navigation
	// ReadyzWhenFull is the replica's GET /readyz answer ("503 no browser
	// node has room") read once, right after the first browser_capacity.
	ReadyzWhenFull string
	Lat            map[string][]time.Duration
	Failures       map[string]int

	// PeakOpen is the largest number of sessions open at once (navigated,
	// not yet closed) at a memory sample, and PeakPSSkB the PSS of the
	// Chromium process trees (of the nodes, or of the replica without
	// nodes) at that sample: the sample with the most open sessions, and
	// of those the largest PSS.
	PeakOpen, PeakPSSkB int
	// TrackedAtPeak is how many processes of the fleet's trees were alive
	// at that sample, Chromium's included: the check that the leftover
	// scan would see a Chromium left behind.
	TrackedAtPeak int
	// CPU is the user+system time of the replicas and nodes with every
	// Chromium process they started, from the start of the load to their
	// exit (wait4's rusage includes reaped descendants).
	CPU  time.Duration
	Wall time.Duration
	// Left lists processes of the fleet (Chromium included) still running
	// after it stopped.
	Left []string
}

// PSSPerSession is the peak PSS divided by the sessions open then, in MiB.
func (r *BrowserResult) PSSPerSession() float64 {
	if r.PeakOpen == 0 {
		return 0
	}
	return float64(r.PeakPSSkB) / 1024 / float64(r.PeakOpen)
}

// CPUPerSession is the CPU time per completed browser session (its 9
// calls, the context and renderer it started, its close).
func (r *BrowserResult) CPUPerSession() time.Duration {
	if r.Tasks == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Tasks)
}

// P50 and P99 of a measure.
func (r *BrowserResult) P50(m string) time.Duration { return percentile(r.Lat[m], 50) }
func (r *BrowserResult) P99(m string) time.Duration { return percentile(r.Lat[m], 99) }

type brun struct {
	f    *Fleet
	o    BrowserLoadOptions
	res  *BrowserResult
	mu   sync.Mutex
	open atomic.Int64
	sem  chan struct{} // BrowserLoadOptions.Open; nil: no limit
	full sync.Once     // reads /readyz at the first browser_capacity
}

// RunBrowserLoad runs o.Sessions browser tasks, o.Tasks at a time, against
// f's replicas (each task starts on replica id mod replicas, as a client
// spreading its tasks would; no load balancer), sampling the Chromium
// trees' PSS every second. The caller stops the fleet and then calls
// FinishBrowser for the CPU and the processes left.
func RunBrowserLoad(ctx context.Context, f *Fleet, o BrowserLoadOptions) *BrowserResult {
	if o.Deadline <= 0 {
		o.Deadline = 10 * time.Minute
	}
	if o.Version == "" {
		o.Version = "2025-11-25"
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	o.Sessions = max(o.Sessions, o.Tasks)
	ctx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()
	r := &brun{f: f, o: o, res: &BrowserResult{Replicas: len(f.Replicas), Nodes: len(f.Nodes), Tasks: o.Sessions,
		Lat: map[string][]time.Duration{}, Failures: map[string]int{}}}
	if o.Open > 0 {
		r.sem = make(chan struct{}, o.Open)
	}
	cpu0 := 0
	for _, pid := range f.browserPIDs() {
		cpu0 += treeCPU(pid)
	}
	f.cpu0 = time.Duration(cpu0) * 10 * time.Millisecond
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go r.sample(stop, sampled)
	start := time.Now()
	for done := 0; done < o.Sessions; {
		n := min(o.Tasks, o.Sessions-done)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				r.task(ctx, done+i)
			}()
		}
		close(gate)
		wg.Wait()
		done += n
		if o.Sessions > o.Tasks {
			o.Log("%d of %d sessions done (%.0f s)", done, o.Sessions, time.Since(start).Seconds())
		}
	}
	r.res.Wall = time.Since(start)
	close(stop)
	<-sampled
	if f.Site != nil {
		r.res.SiteBleed = f.Site.Bleed()
	}
	return r.res
}

// browserPIDs are the processes whose Chromium serves the sessions: the
// nodes, and the replicas (their own Chromium, without nodes).
func (f *Fleet) browserPIDs() []int {
	var pids []int
	for _, n := range f.Nodes {
		pids = append(pids, n.PID())
	}
	for _, r := range f.Replicas {
		pids = append(pids, r.p.cmd.Process.Pid)
	}
	return pids
}

// FinishBrowser reads the CPU of the stopped fleet and the processes it
// left; call it after f.Close.
func (res *BrowserResult) FinishBrowser(f *Fleet) {
	var cpu time.Duration
	for _, n := range f.Nodes {
		cpu += n.p.exitCPU()
	}
	for _, r := range f.Replicas {
		cpu += r.p.exitCPU()
	}
	res.CPU = cpu - f.cpu0
	// A killed process's children are reaped by whoever adopts them: give
	// them a moment before calling them left.
	left := func() []string { return append(Leftover(f.opts.Dir), f.procs.alive()...) }
	waitFor("no process of the fleet left", 5*time.Second, nil, func() bool { return len(left()) == 0 })
	res.Left = left()
}

func (r *brun) sample(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	// A sample reads every Chromium process's smaps_rollup (costly with
	// hundreds of renderers), so it is taken when the open sessions reach
	// a new high, or once a second at the high.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last time.Time
	for n := 0; ; n++ {
		select {
		case <-stop:
			// Once more at the end of the load, before the fleet stops.
			r.f.procs.track(r.f.browserPIDs())
			return
		case <-tick.C:
		}
		if n%5 == 0 {
			r.f.procs.track(r.f.browserPIDs())
		}
		open := int(r.open.Load())
		if open == 0 || open < r.res.PeakOpen || open == r.res.PeakOpen && time.Since(last) < time.Second {
			continue
		}
		last = time.Now()
		pss := 0
		for _, pid := range r.f.browserPIDs() {
			pss += chromiumPSS(pid)
		}
		r.f.procs.track(r.f.browserPIDs())
		tracked := len(r.f.procs.alive())
		r.mu.Lock()
		if open > r.res.PeakOpen || pss > r.res.PeakPSSkB {
			r.res.PeakOpen, r.res.PeakPSSkB, r.res.TrackedAtPeak = open, pss, tracked
		}
		r.mu.Unlock()
	}
}

func (r *brun) fail(what string) {
	if len(what) > 200 {
		what = what[:200] + "…"
	}
	r.mu.Lock()
	r.res.Failures[what]++
	r.mu.Unlock()
}

// browserOut is the fields of the browser tools' results the tasks read.
type browserOut struct {
	Success     bool            `json:"success"`
	Reason      string          `json:"reason"`
	Error       string          `json:"error"`
	URL         string          `json:"url"`
	Title       string          `json:"title"`
	Snapshot    string          `json:"snapshot"`
	Delta       string          `json:"delta"`
	Navigated   bool            `json:"navigated"`
	Session     string          `json:"session"` // the handle (issue 19 item 2), when the binary gives one
	Result      json.RawMessage `json:"result"`
	RetryAfterS int             `json:"retry_after_s"`
}

// text is everything of the page the result shows.
func (o *browserOut) text() string {
	return o.Title + "\n" + o.Snapshot + "\n" + o.Delta + "\n" + string(o.Result)
}

// btask is one browser task: one principal, one browser session, an MCP
// session per replica it talks to.
type btask struct {
	r      *brun
	id     int
	p      Principal
	marker string
	home   int // the replica it navigates through
	conns  map[int]*mcp.ClientSession
	handle string
	calls  int
	ok     bool
}

// markerRe matches any task's marker.
var markerRe = regexp.MustCompile(`task(\d+)-k\d{6}`)

func (r *brun) task(ctx context.Context, id int) {
	t := &btask{r: r, id: id, p: r.f.Principals[id%2], home: id % len(r.f.Replicas), conns: map[int]*mcp.ClientSession{}, ok: true,
		marker: fmt.Sprintf("task%d-k%06d", id, rand.IntN(1000000))}
	r.f.Site.SetMarker(id, t.marker)
	if r.sem != nil {
		select {
		case r.sem <- struct{}{}:
			defer func() { <-r.sem }()
		case <-ctx.Done():
			t.failf("no turn to open a session before the deadline (-open %d)", r.o.Open)
			return
		}
	}
	opened := false
	defer func() {
		if opened {
			r.open.Add(-1)
		}
		for _, cs := range t.conns {
			cs.Close()
		}
		r.mu.Lock()
		if t.ok {
			r.res.Completed++
		}
		r.mu.Unlock()
	}()
	nav, d, ok := t.navigate(ctx)
	if !ok {
		return
	}
	opened = true
	r.open.Add(1)
	t.expect(nav, "navigate", t.marker, "Cookie received: none")
	if nav.Session != "" {
		t.handle = nav.Session
		r.mu.Lock()
		r.res.Handles++
		r.mu.Unlock()
	}

	snap, d2, ok := t.call(ctx, "browser_snapshot", "snapshot", map[string]any{})
	if !ok {
		return
	}
	t.record("nav+snap", d+d2)
	t.expect(snap, "snapshot", t.marker)
	note, save, next := refOf(snap.Snapshot, "textbox", "Note"), refOf(snap.Snapshot, "button", "Save"), refOf(snap.Snapshot, "link", "Next page")
	if note == "" || save == "" || next == "" {
		t.failf("snapshot: the form's refs not found (note %q, save %q, link %q): %.300s", note, save, next, snap.Snapshot)
		return
	}
	typed := "note for " + t.marker
	if _, _, ok = t.call(ctx, "browser_type", "type", map[string]any{"ref": note, "text": typed}); !ok {
		return
	}
	click, _, ok := t.call(ctx, "browser_click", "click", map[string]any{"ref": save})
	if !ok {
		return
	}
	t.expect(click, "click on Save", "Saved: "+typed)
	follow, _, ok := t.call(ctx, "browser_click", "follow", map[string]any{"ref": next})
	if !ok {
		return
	}
	t.expect(follow, "click on Next page", "Next page of fleet task", t.marker, "Cookie received: "+cookieName(id)+"="+t.marker)
	back, _, ok := t.call(ctx, "browser_back", "back", map[string]any{})
	if !ok {
		return
	}
	t.expect(back, "back", t.marker)
	cons, _, ok := t.call(ctx, "browser_console", "console", map[string]any{"expression": "document.cookie"})
	if !ok {
		return
	}
	var cookie string
	if err := json.Unmarshal(cons.Result, &cookie); err != nil || unwrapUntrusted(cookie) != cookieName(id)+"="+t.marker {
		t.failf("document.cookie = %s, want %q", cons.Result, cookieName(id)+"="+t.marker)
	}
	if _, _, ok = t.call(ctx, "browser_close", "close", map[string]any{}); ok {
		opened = false
		r.open.Add(-1)
	}
}

func (t *btask) failf(format string, args ...any) {
	t.ok = false
	t.r.fail(fmt.Sprintf(format, args...))
}

func (t *btask) record(m string, d time.Duration) {
	t.r.mu.Lock()
	t.r.res.Lat[m] = append(t.r.res.Lat[m], d)
	t.r.mu.Unlock()
}

// expect checks that what a call read shows each of wants, and counts any
// other task's marker or cookie in it as bleed.
func (t *btask) expect(o *browserOut, what string, wants ...string) {
	text := o.text()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.failf("%s: %q not shown (task %d): %.300s", what, w, t.id, text)
		}
	}
	own := fmt.Sprint(t.id)
	bleed := 0
	for _, m := range markerRe.FindAllStringSubmatch(text, -1) {
		if m[1] != own {
			bleed++
		}
	}
	for _, m := range cookieNameRe.FindAllStringSubmatch(text, -1) {
		if m[1] != own {
			bleed++
		}
	}
	if bleed > 0 {
		t.r.mu.Lock()
		t.r.res.Bleed += bleed
		t.r.mu.Unlock()
		t.failf("%s: another task's marker or cookie shown", what)
	}
}

// navigate opens the task's page, waiting out browser_capacity (every node
// full: Retry-After) until the run's deadline. Its latency runs from the
// first attempt to the answer that opened the page, waits included: what
// the agent waited, as the one-process run's wait for a spare session is
// part of its navigate.
func (t *btask) navigate(ctx context.Context) (*browserOut, time.Duration, bool) {
	start := time.Now()
	for {
		o, _, err := t.raw(ctx, "browser_navigate", map[string]any{"url": t.r.f.Site.URL(t.id)})
		if err != nil {
			t.failf("browser_navigate: %v", err)
			return nil, 0, false
		}
		if !o.Success && o.Reason == "browser_capacity" {
			t.r.mu.Lock()
			t.r.res.CapacityWaits++
			t.r.mu.Unlock()
			t.r.full.Do(func() {
				code, body := t.r.f.Replicas[t.home].Readyz(ctx)
				t.r.mu.Lock()
				t.r.res.ReadyzWhenFull = fmt.Sprintf("%d %s", code, body)
				t.r.mu.Unlock()
			})
			select {
			case <-time.After(time.Duration(max(o.RetryAfterS, 1)) * time.Second):
				continue
			case <-ctx.Done():
				t.failf("browser_navigate: browser_capacity until the deadline")
				return nil, 0, false
			}
		}
		if !o.Success {
			t.failf("browser_navigate refused: %s: %s", o.Reason, o.Error)
			return nil, 0, false
		}
		d := time.Since(start)
		t.record("navigate", d)
		return o, d, true
	}
}

// call makes one browser call and records its latency under measure; a
// refusal or a transport failure fails the task.
func (t *btask) call(ctx context.Context, tool, measure string, args map[string]any) (*browserOut, time.Duration, bool) {
	o, d, err := t.raw(ctx, tool, args)
	if err != nil {
		t.failf("%s: %v", tool, err)
		return nil, 0, false
	}
	if !o.Success {
		t.failf("%s refused: %s: %s", tool, o.Reason, o.Error)
		return nil, 0, false
	}
	t.record(measure, d)
	return o, d, true
}

// raw calls tool on the replica this call goes to: the task's own replica,
// or, once it holds a session handle, the replicas in turn, with the handle
// in every call's session argument.
func (t *btask) raw(ctx context.Context, tool string, args map[string]any) (*browserOut, time.Duration, error) {
	if t.handle != "" {
		args["session"] = t.handle
	}
	rep := replicaFor(t.home, t.calls, len(t.r.f.Replicas), t.handle)
	t.calls++
	cs, err := t.conn(ctx, rep)
	if err != nil {
		return nil, 0, fmt.Errorf("connect to replica %s: %w", t.r.f.Replicas[rep].Name, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	start := time.Now()
	text, err := callTool(cctx, cs, tool, args)
	d := time.Since(start)
	if err != nil {
		return nil, d, err
	}
	t.r.mu.Lock()
	t.r.res.Calls++
	if rep != t.home {
		t.r.res.OtherReplica++
	}
	t.r.mu.Unlock()
	var o browserOut
	if err := decode(text, &o); err != nil {
		return nil, d, err
	}
	return &o, d, nil
}

// replicaFor is the replica of a task's call number call (0: its
// navigate): its home replica without a session handle (the session lives
// where the task's MCP session is), else the replicas in turn from home, so
// consecutive calls of one session go through different replicas.
func replicaFor(home, call, replicas int, handle string) int {
	if handle == "" || replicas < 2 {
		return home
	}
	return (home + call) % replicas
}

func (t *btask) conn(ctx context.Context, rep int) (*mcp.ClientSession, error) {
	if cs := t.conns[rep]; cs != nil {
		return cs, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cl := &Client{Endpoint: t.r.f.Replicas[rep].URL(), Principal: t.p, Version: t.r.o.Version}
	cs, err := cl.Connect(cctx)
	if err != nil {
		return nil, err
	}
	t.conns[rep] = cs
	return cs, nil
}

// unwrapUntrusted returns a page-controlled string without the
// <<<UNTRUSTED WEB CONTENT nonce=…>>> … <<<END UNTRUSTED WEB CONTENT …>>>
// lines Gatehouse puts around it.
func unwrapUntrusted(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "<<<UNTRUSTED WEB CONTENT") || strings.HasPrefix(l, "<<<END UNTRUSTED WEB CONTENT") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// refOf returns the ref of the snapshot line `- role "name" … [ref=eN]`.
func refOf(snapshot, role, name string) string {
	for _, l := range strings.Split(snapshot, "\n") {
		if !strings.Contains(l, role+` "`+name+`"`) {
			continue
		}
		if m := refRe.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	return ""
}

var refRe = regexp.MustCompile(`\[ref=([A-Za-z0-9_-]+)\]`)

// BrowserTable renders the runs as a markdown table (base may be nil).
func BrowserTable(fleet, base *BrowserResult) string {
	runs := []*BrowserResult{fleet}
	if base != nil {
		runs = append(runs, base)
	}
	var b strings.Builder
	row := func(name string, cell func(r *BrowserResult) string) {
		b.WriteString("| " + name + " |")
		for _, r := range runs {
			b.WriteString(" " + cell(r) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("| measure |")
	for _, r := range runs {
		b.WriteString(" " + r.Label + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(runs)) + "\n")
	row("tasks completed", func(r *BrowserResult) string { return fmt.Sprintf("%d / %d", r.Completed, r.Tasks) })
	row("tool calls answered", func(r *BrowserResult) string { return fmt.Sprint(r.Calls) })
	row("session handles returned; calls through the other replica", func(r *BrowserResult) string {
		if r.Handles == 0 {
			return "none (each task on one replica)"
		}
		return fmt.Sprintf("%d; %d", r.Handles, r.OtherReplica)
	})
	row("**cross-task bleed** (reads; requests at the site)", func(r *BrowserResult) string {
		return fmt.Sprintf("**%d**; **%d**", r.Bleed, r.SiteBleed)
	})
	for _, m := range browserMeasures {
		row(m+" p50 / p99", func(r *BrowserResult) string {
			return fmt.Sprintf("%s / %s (n=%d)", ms(r.P50(m)), ms(r.P99(m)), len(r.Lat[m]))
		})
	}
	row("browser_capacity waited out (replica /readyz then)", func(r *BrowserResult) string {
		if r.ReadyzWhenFull == "" {
			return fmt.Sprint(r.CapacityWaits)
		}
		return fmt.Sprintf("%d (%s)", r.CapacityWaits, r.ReadyzWhenFull)
	})
	row("Chromium PSS at peak (open sessions)", func(r *BrowserResult) string {
		return fmt.Sprintf("%.0f MiB (%d)", float64(r.PeakPSSkB)/1024, r.PeakOpen)
	})
	row("processes of the fleet at the peak (Chromium's included)", func(r *BrowserResult) string { return fmt.Sprint(r.TrackedAtPeak) })
	row("**PSS per open session**", func(r *BrowserResult) string { return fmt.Sprintf("**%.1f MiB**", r.PSSPerSession()) })
	row("CPU, user+sys, with Chromium (per session)", func(r *BrowserResult) string {
		return fmt.Sprintf("%.1f s (%s)", r.CPU.Seconds(), ms(r.CPUPerSession()))
	})
	row("wall time", func(r *BrowserResult) string { return fmt.Sprintf("%.1f s", r.Wall.Seconds()) })
	row("processes left after stop", func(r *BrowserResult) string {
		if len(r.Left) == 0 {
			return "0"
		}
		return fmt.Sprintf("**%d**: %s", len(r.Left), strings.Join(r.Left, ", "))
	})
	for _, r := range runs {
		if len(r.Failures) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nFailures, %s:\n", r.Label)
		type kv struct {
			k string
			n int
		}
		var fs []kv
		for k, n := range r.Failures {
			fs = append(fs, kv{k, n})
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].n > fs[j].n || fs[i].n == fs[j].n && fs[i].k < fs[j].k })
		for i, f := range fs {
			if i == 12 {
				fmt.Fprintf(&b, "  … %d more kinds\n", len(fs)-i)
				break
			}
			fmt.Fprintf(&b, "  %5d  %s\n", f.n, f.k)
		}
	}
	return b.String()
}

// BrowserBudget is the most the fleet's p50 of navigate+snapshot and of
// click may be, relative to one process (issue 19: the extra hop is one
// CDP attach and a Redis read).
const BrowserBudget = 1.5

// BrowserSummary is the last line: every task completed, zero bleed, no
// process left, and (with a baseline) the p50 ratios within BrowserBudget.
func BrowserSummary(fleet, base *BrowserResult) (string, bool) {
	ok := fleet.Completed == fleet.Tasks && fleet.Bleed == 0 && fleet.SiteBleed == 0 && len(fleet.Left) == 0
	left := len(fleet.Left)
	s := fmt.Sprintf("browser fleet: %d/%d tasks, bleed %d", fleet.Completed, fleet.Tasks, fleet.Bleed+fleet.SiteBleed)
	ratio := func(m string) string {
		if base == nil || base.P50(m) == 0 {
			return fmt.Sprintf("%s p50 %s", m, ms(fleet.P50(m)))
		}
		r := float64(fleet.P50(m)) / float64(base.P50(m))
		ok = ok && r <= BrowserBudget
		return fmt.Sprintf("%s p50 %s vs %s = %.2f×", m, ms(fleet.P50(m)), ms(base.P50(m)), r)
	}
	s += ", " + ratio("nav+snap") + ", " + ratio("click")
	s += fmt.Sprintf(", PSS/session %.1f MiB", fleet.PSSPerSession())
	if base != nil {
		s += fmt.Sprintf(" vs %.1f MiB", base.PSSPerSession())
		left += len(base.Left)
		ok = ok && base.Completed == base.Tasks && base.Bleed == 0 && base.SiteBleed == 0 && len(base.Left) == 0
	}
	s += fmt.Sprintf(", chromium left %d", left)
	if fleet.Handles == 0 {
		s += " (no session handles: each task on one replica)"
	}
	if base != nil {
		s += fmt.Sprintf(" (budget p50 ≤ %.1f×)", BrowserBudget)
	}
	if ok {
		return s + ": PASS", true
	}
	return s + ": FAIL", false
}
