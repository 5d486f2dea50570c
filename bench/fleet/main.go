// Command fleet is the load and fault test of issue 18: Gatehouse as a
// shared service, two replicas sharing one Redis behind HAProxy.
//
//	go run ./bench/fleet [-tasks 200] [-short] [-rounds 1] [-kill=true] [-baseline=true] [-bin FILE]
//
// It builds cmd/gatehouse, then re-executes itself inside a network
// namespace of its own (unshare -n as root, else unshare -r -n), where it
// starts: a redis-server (free loopback port, no persistence, temp dir), two
// `gatehouse mcp --http` replicas (each its own GATEHOUSE_HOME, one
// GATEHOUSE_REDIS_URL, a --tokens file with principals X and Y when the
// binary has --tokens), HAProxy (round robin, health check on /readyz when
// the binary serves it, retries 3, option redispatch), a SearXNG-shaped fake
// search backend and a page site on a public address added to the
// namespace's loopback (so its pages are cached as public pages are).
//
// -tasks concurrent agent tasks, each an MCP client (Go SDK) of one
// principal (half X, half Y), make 7 calls: web_search, web_extract of a
// short page, web_extract of a long page (truncated and stored), web_read
// of what it stored, web_extract of another short page, web_read of a page
// another task of its principal stored (a control: principal scoping lets
// it read), and web_read of a page the other principal stored, which must
// answer not_found. When half
// the calls have answered, the last replica gets SIGKILL; HAProxy sends its
// traffic to the other, and a call that failed on the dying replica is
// retried once by its client (on a new session) and must then succeed.
//
// Then (-baseline) the same tasks run against one replica without Redis
// (the embedded default), and the replicas' CPU time per call (user+sys,
// wait4's rusage, from the start of the load to their exit) is compared:
// the budget is 1.2×. Two replicas on a 2-core machine cannot show
// scale-out in wall time, so the budget is on CPU per call.
//
// It prints a table and a last summary line, and exits 1 when a target is
// missed (a task incomplete, a cross-principal read, a call failing after
// its retry, CPU per call over budget). Nothing leaves the namespace.
//
// With -browser it is issue 19's browser fleet load test instead:
//
//	go run ./bench/fleet -browser [-tasks 200] [-sessions 1000] [-open N] [-node-max-sessions N] [-baseline=true]
//
// In the same namespace it starts a redis-server, two `gatehouse
// browser-node`s (Chromium's headless shell, --listen 127.0.0.1:0, the
// node's default capacity unless -node-max-sessions) and two `gatehouse
// mcp --http` replicas over one GATEHOUSE_REDIS_URL (no load balancer: task
// i starts on replica i mod 2, as a client spreading its tasks would), and
// a page site on PublicIP. -tasks concurrent browser tasks (half principal
// X, half Y; MCP 2025-11-25, so each MCP session is its own task) each
// navigate to a page of their own (their marker in the text; the response
// sets their cookie), snapshot, type into the form's field, click its
// button (an in-page change), follow its link (the next page echoes the
// Cookie header it received), go back, read document.cookie with
// browser_console, and close. Every read is checked for the task's own
// marker and cookie and for any other task's (bleed, counted; the site
// also counts requests carrying another task's cookie). A task refused
// with browser_capacity (every node full) waits out Retry-After; that wait
// is part of its navigate latency. When browser_navigate's result carries
// a session handle ("session", issue 19 item 2), the task passes it on
// every later call and alternates replicas; without one it stays on its
// replica. -sessions runs that many sessions in waves of -tasks. PSS is the
// Chromium process trees' (descendants of the nodes and replicas, from
// smaps_rollup), sampled at each new high of open sessions; CPU is the
// nodes' and replicas' wait4 rusage with their reaped Chromium, from the
// start of the load to their exit. After each fleet stops, every process
// still carrying the fleet's environment marker (RunEnv) is "left". The
// baseline (-baseline) is the same tasks against one replica without Redis
// or nodes, its own Chromium; the last line gives the p50 ratios of
// navigate+snapshot and of click (budget 1.5×).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

func main() {
	tasks := flag.Int("tasks", 200, "concurrent agent tasks")
	short := flag.Bool("short", false, "CI size: 20 tasks (unless -tasks is given)")
	kill := flag.Bool("kill", true, "SIGKILL one replica mid-run")
	baseline := flag.Bool("baseline", true, "also run the embedded default (one replica, no Redis) for CPU per call")
	version := flag.String("protocol", "", "MCP protocol version the clients ask for (default: the Go SDK's, 2026-07-28 with fallback)")
	delay := flag.Duration("search-delay", 50*time.Millisecond, "how long the fake search backend holds each answer")
	bin := flag.String("bin", "", "gatehouse binary to test (default: build ./cmd/gatehouse)")
	keep := flag.Bool("keep", false, "keep the scratch directory (logs, homes, haproxy.cfg)")
	replicaMax := flag.Int("replica-max-calls", 0, "mcp.replica_max_calls of every replica (0: the default; above it a replica answers 429)")
	rounds := flag.Int("rounds", 1, "rounds of (fleet, embedded) runs, interleaved; the CPU ratio is their median")
	browser := flag.Bool("browser", false, "the browser fleet instead (issue 19): 2 browser nodes, 2 replicas, -tasks concurrent browser tasks")
	sessions := flag.Int("sessions", 0, "with -browser: browser sessions in all, in waves of -tasks (default: -tasks; 1000 for the long run)")
	open := flag.Int("open", 0, "with -browser: at most this many tasks hold a session at once, in both runs (0: no limit); compares the paths at equal concurrency")
	nodeMax := flag.Int("node-max-sessions", 0, "with -browser: each node's --max-sessions (0: the node's default, 16, sized for 2 cores; a task refused with browser_capacity waits out Retry-After)")
	flag.Parse()
	if *short {
		given := false
		flag.Visit(func(f *flag.Flag) { given = given || f.Name == "tasks" })
		if !given {
			*tasks = 20
		}
	}
	if os.Getenv(NetnsEnv) != "1" {
		os.Exit(reexec(*bin))
	}
	if err := setupNamespace(); err != nil {
		fatal(err)
	}
	fmt.Println("bench/fleet: running " + NamespaceNote)
	dir, err := os.MkdirTemp("", "gatehouse-fleet-")
	if err != nil {
		fatal(err)
	}
	// exit removes the scratch directory (unless -keep) before exiting
	// with code: os.Exit skips deferred calls.
	exit := func(code int) {
		if !*keep {
			os.RemoveAll(dir)
		}
		os.Exit(code)
	}
	if *keep {
		fmt.Println("scratch directory:", dir)
	}
	if *browser {
		bo := browserOptions{Bin: os.Getenv(BinEnv), Dir: dir, Tasks: *tasks, Sessions: *sessions, NodeMax: *nodeMax, Open: *open, Version: *version, Baseline: *baseline,
			Log: func(format string, args ...any) { fmt.Printf("  "+format+"\n", args...) }}
		if !runBrowserBench(bo) {
			exit(1)
		}
		exit(0)
	}
	o := runOptions{Bin: os.Getenv(BinEnv), Dir: dir, Tasks: *tasks, Kill: *kill, Version: *version, SearchDelay: *delay, ReplicaMaxCalls: *replicaMax,
		Log: func(format string, args ...any) { fmt.Printf("  "+format+"\n", args...) }}
	var fleets, bases []*Result
	for round := range max(*rounds, 1) {
		if *rounds > 1 {
			o.Log("== round %d of %d", round+1, *rounds)
		}
		fleet, err := runFleet(o, true)
		if err != nil {
			fatal(err)
		}
		fleets = append(fleets, fleet)
		if *baseline {
			base, err := runFleet(o, false)
			if err != nil {
				fatal(err)
			}
			bases = append(bases, base)
		}
	}
	ok := true
	for i, fleet := range fleets {
		var base *Result
		if bases != nil {
			base = bases[i]
		}
		fmt.Println()
		if len(fleets) > 1 {
			fmt.Printf("Round %d of %d:\n\n", i+1, len(fleets))
		}
		fmt.Print(Table(fleet, base))
		sum, good := Summary(fleet, base)
		ok = ok && good
		if len(fleets) > 1 {
			fmt.Println("\n" + sum)
		}
	}
	fmt.Println()
	if len(fleets) > 1 {
		sum, good := MedianSummary(fleets, bases)
		fmt.Println(sum)
		ok = good
	} else {
		sum, _ := Summary(fleets[0], first(bases))
		fmt.Println(sum)
	}
	if !ok {
		exit(1)
	}
	exit(0)
}

func first(rs []*Result) *Result {
	if len(rs) == 0 {
		return nil
	}
	return rs[0]
}

// reexec builds the binary (unless given) and runs this program again inside
// a new network namespace; it returns the exit status.
func reexec(bin string) int {
	args, err := unshareArgs()
	if err != nil {
		fatal(err)
	}
	if bin == "" {
		dir, err := os.MkdirTemp("", "gatehouse-fleet-bin-")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "bench/fleet: go build ./cmd/gatehouse")
		if bin, err = buildGatehouse(dir); err != nil {
			fatal(err)
		}
	}
	cmd := exec.Command(args[0], append(append(args[1:], "--", os.Args[0]), os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), NetnsEnv+"=1", BinEnv+"="+bin)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fatal(err)
	}
	return 0
}

// runOptions are one invocation's settings, shared by both runs.
type runOptions struct {
	Bin, Dir        string
	Tasks           int
	Kill            bool
	Version         string
	SearchDelay     time.Duration
	ReplicaMaxCalls int
	Log             func(format string, args ...any)
}

// runFleet starts a fleet (shared: 2 replicas + Redis; else 1 replica, no
// Redis), runs the load through HAProxy, stops the fleet and returns the
// result with the CPU figures.
func runFleet(o runOptions, shared bool) (*Result, error) {
	sub := "embedded"
	fo := Options{Bin: o.Bin, Replicas: 1, LB: true, SearchDelay: o.SearchDelay, ReplicaMaxCalls: o.ReplicaMaxCalls, Log: logWriter{o.Log}}
	label := "embedded default: 1 replica, no Redis"
	if shared {
		sub = "shared"
		fo.Replicas, fo.Redis = 2, true
		label = "fleet: 2 replicas + Redis behind HAProxy"
	}
	fo.Dir = o.Dir + "/" + sub
	if err := os.MkdirAll(fo.Dir, 0o700); err != nil {
		return nil, err
	}
	o.Log("== %s, %d tasks", label, o.Tasks)
	f, err := StartFleet(fo)
	if err != nil {
		return nil, err
	}
	res := RunLoad(context.Background(), f, LoadOptions{Tasks: o.Tasks, Kill: o.Kill && shared, Version: o.Version, Log: o.Log})
	f.Close()
	res.Finish(f)
	res.Label = label
	if res.Killed != "" {
		res.Label += fmt.Sprintf(", SIGKILL %s mid-run", res.Killed)
	}
	return res, nil
}

type logWriter struct{ log func(string, ...any) }

func (w logWriter) Write(p []byte) (int, error) {
	w.log("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench/fleet:", err)
	os.Exit(2)
}

// browserOptions are one -browser invocation's settings.
type browserOptions struct {
	Bin, Dir        string
	Tasks, Sessions int
	NodeMax, Open   int
	Version         string
	Baseline        bool
	Log             func(format string, args ...any)
}

// runBrowserBench runs the browser fleet (2 nodes, 2 replicas, Redis) and
// then, with o.Baseline, the same tasks on one replica without Redis (its
// own Chromium); it prints the table and the last line and reports whether
// every target was met.
func runBrowserBench(o browserOptions) bool {
	fleet, err := runBrowserFleet(o, true)
	if err != nil {
		fatal(err)
	}
	var base *BrowserResult
	if o.Baseline {
		if base, err = runBrowserFleet(o, false); err != nil {
			fatal(err)
		}
	}
	fmt.Println()
	fmt.Print(BrowserTable(fleet, base))
	sum, ok := BrowserSummary(fleet, base)
	fmt.Println()
	fmt.Println(sum)
	return ok
}

// runBrowserFleet starts the browser fleet (shared: Redis, 2 browser nodes,
// 2 replicas; else 1 replica, no Redis, its own Chromium), runs the browser
// tasks, stops the fleet and returns the result.
func runBrowserFleet(o browserOptions, shared bool) (*BrowserResult, error) {
	sub, label := "browser-embedded", "one process: 1 replica, no Redis, its own Chromium"
	// No replica call cap in the way: the figures are the browser's.
	fo := Options{Bin: o.Bin, Replicas: 1, Browser: true, ReplicaMaxCalls: 4 * o.Tasks, Log: logWriter{o.Log}}
	if shared {
		sub, label = "browser-fleet", "fleet: 2 replicas + 2 browser nodes + Redis"
		fo.Replicas, fo.Redis, fo.Nodes = 2, true, 2
		fo.NodeMaxSessions = o.NodeMax
	}
	fo.Dir = o.Dir + "/" + sub
	if err := os.MkdirAll(fo.Dir, 0o700); err != nil {
		return nil, err
	}
	sessions := max(o.Sessions, o.Tasks)
	o.Log("== %s: %d browser tasks at once, %d sessions in all", label, o.Tasks, sessions)
	if o.Open > 0 {
		label += fmt.Sprintf(", ≤ %d sessions open at once", o.Open)
	}
	f, err := StartFleet(fo)
	if err != nil {
		return nil, err
	}
	res := RunBrowserLoad(context.Background(), f, BrowserLoadOptions{Tasks: o.Tasks, Sessions: sessions, Open: o.Open, Version: o.Version, Log: o.Log})
	f.Close()
	res.FinishBrowser(f)
	res.Label = label
	return res, nil
}
