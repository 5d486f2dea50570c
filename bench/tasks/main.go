// Command tasks is the scripted task benchmark of issue 20: ten multi-step
// tasks on local sites it serves itself on loopback, each with an end state
// the site records (a login, an opened item, a submitted form), run by one
// deterministic driver against Gatehouse (the real binary, `gatehouse mcp`
// over stdio) and Playwright MCP (npm @playwright/mcp, same Chromium, over
// stdio), through the Go MCP SDK's client. The driver plays the agent: it
// reads each tool result and picks its next call from what the result shows
// (element roles, names and refs, page text), never from the page source; the
// sides differ only in a small adapter naming tools and argument shapes
// (adapters.go). It measures per task and side: completed, tool calls, tokens
// of everything the agent reads (each tool result, and the tools/list result
// once per task; o200k_base via npm gpt-tokenizer in one Node helper), and
// wall time of the task's calls.
//
//	go run ./bench/tasks [-peer=false] [-short] [-v] [-only t4]
//
// -short runs 3 tasks on Gatehouse alone (the CI version, bench/tasks
// TestShort). The last line printed is the summary:
//
//	tasks: gatehouse G/10, playwright P/10; tokens/task X vs Y = R×; calls/task A vs B = C×; time/task … = …×
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func main() {
	peer := flag.Bool("peer", true, "run Playwright MCP too (false: Gatehouse alone)")
	short := flag.Bool("short", false, "3 tasks, Gatehouse only (the CI version)")
	verbose := flag.Bool("v", false, "print every call and result")
	only := flag.String("only", "", "comma-separated task ids to run (default all)")
	flag.Parse()
	var log io.Writer
	if *verbose {
		log = os.Stderr
	}
	opts := options{peer: *peer && !*short, short: *short, log: log, only: *only}
	rep, err := run(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/tasks:", err)
		os.Exit(1)
	}
	rep.print(os.Stdout)
}

// chromiumPath is the Chromium both sides run (Gatehouse finds it, or its
// headless shell, itself; Playwright MCP is given it).
const chromiumPath = "/usr/lib/chromium/chromium"

type options struct {
	peer, short bool
	log         io.Writer
	only        string
	bin         string // a built gatehouse binary ("" = build one)
	noTokens    bool   // count chars/4 instead of o200k tokens (no Node)
}

// outcome is one task on one side.
type outcome struct {
	done   bool
	calls  int
	tokens int
	ms     float64
	first  float64 // ms of the task's first call
	why    string
}

type report struct {
	tasks     []task
	sides     []string
	res       map[string]map[string]outcome // side → task → outcome
	tokenizer string
	// listTokens is each side's tools list in tokens; fullTools is
	// Gatehouse's whole list (every tool, not --tools browser_*).
	listTokens map[string]int
	fullTools  int
}

// repoRoot finds the module root (the bench runs from it or below it).
func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}

func run(ctx context.Context, o options) (*report, error) {
	root := repoRoot()
	peerDir := filepath.Join(root, "bench", "tasks", "peer")
	if o.peer || !o.noTokens {
		if _, err := os.Stat(filepath.Join(peerDir, "node_modules", "gpt-tokenizer")); err != nil {
			c := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
			c.Dir, c.Stderr = peerDir, os.Stderr
			c.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
			if err := c.Run(); err != nil {
				return nil, fmt.Errorf("npm ci in %s: %w", peerDir, err)
			}
		}
	}
	var tok tokenCounter = charCounter{}
	tokName := "chars/4 (no tokenizer)"
	if !o.noTokens {
		t, err := startTokenizer(filepath.Join(peerDir, "tokens.mjs"))
		if err != nil {
			return nil, err
		}
		defer t.close()
		tok, tokName = t, "o200k_base (npm gpt-tokenizer)"
	}
	chromium := chromiumPath
	if _, err := os.Stat(chromium); err != nil {
		return nil, fmt.Errorf("chromium not found at %s (apt-get install -y chromium)", chromium)
	}

	st := newSite(uint64(time.Now().UnixNano()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	go http.Serve(ln, st.handler())
	base := "http://" + ln.Addr().String()

	all := tasks()
	var ts []task
	for _, t := range all {
		if o.only != "" && !strings.Contains(","+o.only+",", ","+t.id+",") {
			continue
		}
		if o.short && t.id != "t1" && t.id != "t3" && t.id != "t7" {
			continue
		}
		ts = append(ts, t)
	}
	rep := &report{tasks: ts, res: map[string]map[string]outcome{}, tokenizer: tokName, listTokens: map[string]int{}}

	tmp, err := os.MkdirTemp("", "gatehouse-tasks-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(tmp, "gatehouse")
		c := exec.Command("go", "build", "-o", bin, "./cmd/gatehouse")
		c.Dir, c.Stderr = root, os.Stderr
		if err := c.Run(); err != nil {
			return nil, fmt.Errorf("building gatehouse: %w", err)
		}
	}
	home := filepath.Join(tmp, "home")
	os.MkdirAll(home, 0o700)
	// Loopback pages are private addresses: the bench's home lets the gates
	// reach them, as the browser tests do (DESIGN §5); the default stays closed.
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  allow_private_urls: true\n"), 0o600)

	type sideDef struct {
		ad  adapter
		cmd func() *exec.Cmd
	}
	sides := []sideDef{{gatehouse{hasFind: true, hasFill: true}, func() *exec.Cmd {
		// The browser toolset, as Playwright MCP serves its browser tools
		// only; the whole list's cost is reported beside (fullTools).
		c := exec.Command(bin, "mcp", "--tools", "browser_*")
		c.Env = append(os.Environ(), "GATEHOUSE_HOME="+home)
		return c
	}}}
	{
		// Gatehouse's whole tool list (web tools too), counted for the
		// variant where the agent is served every tool.
		c := exec.Command(bin, "mcp")
		c.Env = append(os.Environ(), "GATEHOUSE_HOME="+home)
		srv, err := startServer(ctx, gatehouse{}, c)
		if err != nil {
			return nil, err
		}
		rep.fullTools = tok.count(srv.tools)
		srv.cs.Close()
	}
	if o.peer {
		sides = append(sides, sideDef{playwright{}, func() *exec.Cmd {
			c := exec.Command("node", filepath.Join(peerDir, "node_modules", "@playwright", "mcp", "cli.js"),
				"--headless", "--isolated", "--no-sandbox", "--executable-path", chromium)
			c.Dir = filepath.Join(tmp, "pw") // its output files (.playwright-mcp) stay in the temp dir
			os.MkdirAll(c.Dir, 0o700)
			return c
		}})
	}
	for _, sd := range sides {
		srv, err := startServer(ctx, sd.ad, sd.cmd())
		if err != nil {
			return nil, err
		}
		name := sd.ad.name()
		rep.sides = append(rep.sides, name)
		rep.listTokens[name] = tok.count(srv.tools)
		rep.res[name] = map[string]outcome{}
		// The first task pays each side's browser launch; warm it once on a
		// page no task uses, as an agent's session would be warm.
		srv.cs.CallTool(ctx, mcpCall(sd.ad.navigate(base+"/warm")))
		srv.cs.CallTool(ctx, mcpCall(sd.ad.closeBrowser()))
		for _, t := range ts {
			st.reset()
			a := &agent{ctx: ctx, srv: srv, tok: tok, log: o.log}
			a.tokens += tok.count(srv.tools) // the tools list, read once per task
			if o.log != nil {
				fmt.Fprintf(o.log, "===== %s %s: %s\n", name, t.id, t.title)
			}
			start := time.Now()
			ans := t.run(a, base)
			ms := since(start)
			done := a.failed == "" && t.check(st, ans)
			why := a.failed
			if !done && why == "" {
				why = fmt.Sprintf("end state not reached (answer %q)", ans)
			}
			rep.res[name][t.id] = outcome{done: done, calls: a.calls, tokens: a.tokens, ms: ms, first: a.firstMs, why: why}
			srv.cs.CallTool(ctx, mcpCall(sd.ad.closeBrowser())) // the next task starts fresh
		}
		srv.cs.Close()
	}
	return rep, nil
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "task benchmark (issue 20): %d tasks, tokens counted as %s, %s, %d CPUs\n", len(r.tasks), r.tokenizer, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU())
	fmt.Fprintf(w, "%-5s %-10s %5s %6s %8s %9s  %s\n", "task", "side", "done", "calls", "tokens", "ms", "")
	for _, t := range r.tasks {
		for _, s := range r.sides {
			o := r.res[s][t.id]
			d := "yes"
			if !o.done {
				d = "NO"
			}
			fmt.Fprintf(w, "%-5s %-10s %5s %6d %8d %9.0f  %s\n", t.id, s, d, o.calls, o.tokens, o.ms, o.why)
		}
	}
	// Ratios over the tasks both sides complete.
	n := len(r.tasks)
	done := map[string]int{}
	sum := map[string]*outcome{}
	both := 0
	for _, s := range r.sides {
		sum[s] = &outcome{}
	}
	for _, t := range r.tasks {
		all := true
		for _, s := range r.sides {
			if r.res[s][t.id].done {
				done[s]++
			} else {
				all = false
			}
		}
		if !all {
			continue
		}
		both++
		for _, s := range r.sides {
			o := r.res[s][t.id]
			sum[s].calls += o.calls
			sum[s].tokens += o.tokens
			sum[s].ms += o.ms
			sum[s].first += o.first
		}
	}
	per := func(s string, f func(*outcome) float64) float64 {
		if both == 0 {
			return 0
		}
		return f(sum[s]) / float64(both)
	}
	tokens := func(o *outcome) float64 { return float64(o.tokens) }
	calls := func(o *outcome) float64 { return float64(o.calls) }
	ms := func(o *outcome) float64 { return o.ms }
	if len(r.sides) < 2 {
		fmt.Fprintf(w, "tasks: gatehouse %d/%d; tokens/task %.0f; calls/task %.1f; time/task %.0f ms\n",
			done["gatehouse"], n, per("gatehouse", tokens), per("gatehouse", calls), per("gatehouse", ms))
		return
	}
	g, p := "gatehouse", "playwright"
	ratio := func(f func(*outcome) float64) float64 { return per(g, f) / per(p, f) }
	fmt.Fprintf(w, "tools list (read once per task): gatehouse --tools browser_* %d tokens, playwright %d tokens; gatehouse's whole list (web tools too) %d tokens\n",
		r.listTokens[g], r.listTokens[p], r.fullTools)
	if r.fullTools > 0 && both > 0 {
		full := per(g, tokens) + float64(r.fullTools-r.listTokens[g])
		fmt.Fprintf(w, "with gatehouse's whole tool list: tokens/task %.0f vs %.0f = %.2f×\n", full, per(p, tokens), full/per(p, tokens))
	}
	rest := func(o *outcome) float64 { return o.ms - o.first }
	fmt.Fprintf(w, "time/task without each task's first call (a new session; Playwright MCP relaunches its browser after browser_close): %.0f ms vs %.0f ms = %.2f×\n",
		per(g, rest), per(p, rest), ratio(rest))
	fmt.Fprintf(w, "(ratios over the %d tasks both sides complete)\n", both)
	fmt.Fprintf(w, "tasks: gatehouse %d/%d, playwright %d/%d; tokens/task %.0f vs %.0f = %.2f×; calls/task %.1f vs %.1f = %.2f×; time/task %.0f ms vs %.0f ms = %.2f×\n",
		done[g], n, done[p], n, per(g, tokens), per(p, tokens), ratio(tokens), per(g, calls), per(p, calls), ratio(calls), per(g, ms), per(p, ms), ratio(ms))
}
