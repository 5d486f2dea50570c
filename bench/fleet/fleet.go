package main

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options shape one fleet.
type Options struct {
	Bin      string // the gatehouse binary
	Dir      string // scratch directory (homes, logs, configs)
	Replicas int    // 1 or 2
	Redis    bool   // start redis-server and set GATEHOUSE_REDIS_URL on every replica
	LB       bool   // put HAProxy in front (round robin)
	// SearchDelay is how long the fake search backend holds each answer.
	SearchDelay time.Duration
	// ReplicaMaxCalls, when > 0, is each replica's mcp.replica_max_calls
	// (tool calls running at once before it answers 429); 0 keeps the
	// default.
	ReplicaMaxCalls int
	// Nodes is how many `gatehouse browser-node`s to start (needs Redis),
	// each with NodeMaxSessions as its --max-sessions (0: the node's
	// default); Browser starts the browser tasks' page site.
	Nodes, NodeMaxSessions int
	Browser                bool
	Log                    io.Writer // progress lines; nil: none
}

// Principal is one caller of the fleet: a name in the --tokens file and the
// bearer token its clients send.
type Principal struct{ Name, Token string }

// Features are what the gatehouse binary under test supports, detected at
// start: the fleet runs with what exists and the report says what was missing.
type Features struct {
	Tokens          bool // mcp --tokens FILE (named principals)
	Readyz          bool // GET /readyz
	PrincipalLimits bool // config keys mcp.principal_max_calls / mcp.principal_rate
}

// Fleet is Redis (optional), the replicas, HAProxy (optional), the fake
// search backend and the page site, all started by Start and stopped by Close.
type Fleet struct {
	opts       Options
	Redis      *Redis
	Search     *SearchFake
	Pages      *PageSite
	Replicas   []*Replica
	LB         *HAProxy
	Nodes      []*Node      // browser nodes (Options.Nodes)
	Site       *BrowserSite // the browser tasks' pages (Options.Browser)
	Principals []Principal
	Features   Features
	Port       int           // the port every replica and HAProxy listen on
	cpu0       time.Duration // CPU of the browser processes at the start of a browser load
	procs      procTracker   // processes seen in the replicas' and nodes' trees during a browser load
}

// replicaIP returns the loopback address of replica i; HAProxy is on lbIP.
// They share one port: the replicas' Host check accepts any loopback host
// on their own port, so a request HAProxy forwards unchanged is accepted.
func replicaIP(i int) string { return fmt.Sprintf("127.0.0.%d", 11+i) }

const lbIP = "127.0.0.10"

func (f *Fleet) logf(format string, args ...any) {
	if f.opts.Log != nil {
		fmt.Fprintf(f.opts.Log, format+"\n", args...)
	}
}

// StartFleet starts everything o asks for and waits until it serves. On
// error, whatever was started is stopped.
func StartFleet(o Options) (f *Fleet, err error) {
	f = &Fleet{opts: o}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if f.Pages, err = startPageSite(PublicIP); err != nil {
		return nil, fmt.Errorf("page site on %s: %w", PublicIP, err)
	}
	if f.Search, err = startSearchFake(f.Pages, o.SearchDelay); err != nil {
		return nil, err
	}
	if o.Redis {
		if f.Redis, err = startRedis(o.Dir); err != nil {
			return nil, err
		}
	}
	if o.Browser {
		if f.Site, err = startBrowserSite(PublicIP); err != nil {
			return nil, fmt.Errorf("browser page site on %s: %w", PublicIP, err)
		}
	}
	for i := range o.Nodes {
		n, err := f.startNode(i)
		if err != nil {
			return nil, err
		}
		f.Nodes = append(f.Nodes, n)
	}
	f.Features = detectFeatures(o.Bin, o.Dir)
	if f.Port, err = freePort(lbIP); err != nil {
		return nil, err
	}
	f.Principals = []Principal{{"X", "fleet-token-x-1f2e3d"}, {"Y", "fleet-token-y-4c5b6a"}}
	tokens := filepath.Join(o.Dir, "tokens")
	var tb strings.Builder
	tb.WriteString("# bench/fleet principals: NAME:SHA256-HEX-OF-TOKEN\n")
	for _, p := range f.Principals {
		sum := sha256.Sum256([]byte(p.Token))
		fmt.Fprintf(&tb, "%s:%s\n", p.Name, hex.EncodeToString(sum[:]))
	}
	if err := os.WriteFile(tokens, []byte(tb.String()), 0o600); err != nil {
		return nil, err
	}
	if !f.Features.Tokens {
		// One principal for every client (--token): scoping cannot be
		// shown, and the report says so.
		f.Principals[1].Token = f.Principals[0].Token
	}
	for i := range o.Replicas {
		r, err := f.startReplica(i, tokens)
		if err != nil {
			return nil, err
		}
		f.Replicas = append(f.Replicas, r)
	}
	if len(f.Replicas) > 0 {
		code, _ := f.Replicas[0].Readyz(context.Background())
		f.Features.Readyz = code == http.StatusOK
	}
	if o.LB {
		if f.LB, err = startHAProxy(o.Dir, f); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// detectFeatures asks the binary what it supports (help text, config keys),
// with an empty GATEHOUSE_HOME.
func detectFeatures(bin, dir string) Features {
	home := filepath.Join(dir, "probe-home")
	os.MkdirAll(home, 0o700)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GATEHOUSE_HOME=" + home}
	run := func(args ...string) (string, bool) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err == nil
	}
	var ft Features
	help, _ := run("mcp", "--help")
	ft.Tokens = strings.Contains(help, "--tokens")
	_, ok1 := run("config", "get", "mcp.principal_max_calls")
	_, ok2 := run("config", "get", "mcp.principal_rate")
	ft.PrincipalLimits = ok1 && ok2
	return ft
}

func (f *Fleet) startReplica(i int, tokens string) (*Replica, error) {
	name := string(rune('A' + i))
	home := filepath.Join(f.opts.Dir, "home-"+name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	cfg := "web:\n  search_backend: searxng\n  extract_render: never\n"
	mcp := ""
	if f.Features.PrincipalLimits {
		// The load test's 100+ concurrent tasks per principal are the
		// workload, not abuse: raise the per-principal caps above it.
		mcp += "  principal_max_calls: 1000\n  principal_rate: 10000\n"
	}
	if f.opts.ReplicaMaxCalls > 0 {
		mcp += fmt.Sprintf("  replica_max_calls: %d\n", f.opts.ReplicaMaxCalls)
	}
	if mcp != "" {
		cfg += "mcp:\n" + mcp
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("SEARXNG_URL="+f.Search.URL()+"\n"), 0o600); err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(replicaIP(i), strconv.Itoa(f.Port))
	env := f.childEnv(home)
	if f.Redis != nil {
		env = append(env, "GATEHOUSE_REDIS_URL="+f.Redis.URL())
	}
	argv := []string{f.opts.Bin, "mcp", "--http", addr}
	if f.Features.Tokens {
		argv = append(argv, "--tokens", tokens)
	} else {
		argv = append(argv, "--token", f.Principals[0].Token)
	}
	p, err := startProc("replica "+name, filepath.Join(f.opts.Dir, "replica-"+name+".log"), env, argv...)
	if err != nil {
		return nil, err
	}
	r := &Replica{Name: name, Addr: addr, Home: home, p: p}
	if err := waitFor("replica "+name+" listening on "+addr, 30*time.Second, p, func() bool { return dialable(addr) }); err != nil {
		return nil, err
	}
	f.logf("replica %s: %s (GATEHOUSE_HOME %s)", name, r.URL(), home)
	return r, nil
}

// Endpoint is where clients connect: HAProxy when there is one, else the
// first replica.
func (f *Fleet) Endpoint() string {
	if f.LB != nil {
		return "http://" + f.LB.Addr + "/mcp"
	}
	return f.Replicas[0].URL()
}

// Close stops HAProxy, the replicas (SIGTERM: graceful), the browser nodes
// (SIGTERM: they deregister and stop Chromium), Redis and the fakes.
func (f *Fleet) Close() {
	if f.LB != nil {
		f.LB.p.stop(syscall.SIGTERM, 5*time.Second)
	}
	for _, r := range f.Replicas {
		r.Stop()
	}
	for _, n := range f.Nodes {
		n.Stop()
	}
	if f.Redis != nil {
		f.Redis.Stop()
	}
	if f.Site != nil {
		f.Site.srv.Close()
	}
	if f.Search != nil {
		f.Search.srv.Close()
	}
	if f.Pages != nil {
		f.Pages.srv.Close()
	}
}

// HAProxy is the load balancer in front of the replicas, configured as
// deploy/haproxy.cfg: round robin, a health check on GET /readyz (or a TCP
// check when the binary has no /readyz), `retry-on conn-failure
// empty-response 503` with `retries 3` and `option redispatch 1` (a
// request a dead or draining replica never answered goes to the other at
// once), and stickiness on Mcp-Session-Id for clients of the session-based
// protocol versions (a 2026-07-28 client sends none, so its requests are
// spread call by call).
type HAProxy struct {
	Addr      string // frontend ip:port
	StatsAddr string // stats listener (CSV at /stats;csv)
	Check     string // "GET /readyz" or "tcp"
	p         *proc
}

func startHAProxy(dir string, f *Fleet) (*HAProxy, error) {
	bin := "/usr/sbin/haproxy"
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("haproxy"); err != nil {
			return nil, fmt.Errorf("haproxy not found (Debian package haproxy): %w", err)
		}
	}
	statsPort, err := freePort(lbIP)
	if err != nil {
		return nil, err
	}
	h := &HAProxy{Addr: net.JoinHostPort(lbIP, strconv.Itoa(f.Port)), StatsAddr: net.JoinHostPort(lbIP, strconv.Itoa(statsPort)), Check: "tcp"}
	var b strings.Builder
	fmt.Fprintf(&b, `global
  maxconn 4096

defaults
  mode http
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  timeout queue 30s
  timeout check 5s
  retries 3
  option redispatch 1
  # As deploy/haproxy.cfg: a request refused before it ran (connection
  # refused or reset, no answer at all, 503 from a draining replica) is sent
  # to another replica; one whose answer had begun is the client's to retry.
  option http-buffer-request
  retry-on conn-failure empty-response 503

listen stats
  bind %s
  stats enable
  stats uri /stats

frontend mcp
  bind %s
  default_backend replicas

backend replicas
  balance roundrobin
  stick-table type string len 128 size 100k expire 30m
  stick match req.hdr(mcp-session-id)
  stick store-response res.hdr(mcp-session-id)
`, h.StatsAddr, h.Addr)
	if f.Features.Readyz {
		h.Check = "GET /readyz"
		fmt.Fprintf(&b, "  option httpchk\n  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1:%d\n  http-check expect status 200\n", f.Port)
	}
	// A probe may wait behind a loaded replica's tool calls (2 cores): a
	// check times out after 5 s, not after inter (HAProxy's default).
	// A dead replica is found at once anyway: its refused connection is
	// retried on the other (retries, redispatch).
	b.WriteString("  default-server inter 500ms fall 3 rise 2\n")
	for _, r := range f.Replicas {
		fmt.Fprintf(&b, "  server %s %s check\n", r.Name, r.Addr)
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		return nil, err
	}
	if out, err := exec.Command(bin, "-c", "-q", "-f", cfg).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("haproxy -c %s: %v\n%s", cfg, err, out)
	}
	h.p, err = startProc("haproxy", filepath.Join(dir, "haproxy.log"), []string{"PATH=" + os.Getenv("PATH")}, bin, "-db", "-f", cfg)
	if err != nil {
		return nil, err
	}
	if err := waitFor("haproxy with every replica UP", 20*time.Second, h.p, func() bool { return h.allUp(len(f.Replicas)) }); err != nil {
		return nil, err
	}
	f.logf("haproxy: %s → %d replicas, round robin, check %s", h.Addr, len(f.Replicas), h.Check)
	return h, nil
}

// ServerStat is one backend server's line of HAProxy's stats.
type ServerStat struct {
	Name        string
	Status      string // UP, DOWN, …
	Sessions    int    // stot: requests (sessions) sent to it
	Retries     int    // wretr
	Redispatch  int    // wredis
	Resp5xx     int    // hrsp_5xx
	FailedConns int    // econ
}

// Stats reads the backend servers' counters (stats;csv).
func (h *HAProxy) Stats() ([]ServerStat, error) {
	resp, err := plainClient.Get("http://" + h.StatsAddr + "/stats;csv")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rd := csv.NewReader(resp.Body)
	rd.FieldsPerRecord = -1
	recs, err := rd.ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("haproxy stats: %v", err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[strings.TrimPrefix(strings.TrimSpace(c), "# ")] = i
	}
	get := func(r []string, k string) string {
		if i, ok := col[k]; ok && i < len(r) {
			return r[i]
		}
		return ""
	}
	num := func(r []string, k string) int { n, _ := strconv.Atoi(get(r, k)); return n }
	var out []ServerStat
	for _, r := range recs[1:] {
		if get(r, "pxname") != "replicas" || get(r, "svname") == "BACKEND" || get(r, "svname") == "FRONTEND" {
			continue
		}
		out = append(out, ServerStat{Name: get(r, "svname"), Status: get(r, "status"), Sessions: num(r, "stot"),
			Retries: num(r, "wretr"), Redispatch: num(r, "wredis"), Resp5xx: num(r, "hrsp_5xx"), FailedConns: num(r, "econ")})
	}
	return out, nil
}

func (h *HAProxy) allUp(n int) bool {
	st, err := h.Stats()
	if err != nil || len(st) != n {
		return false
	}
	for _, s := range st {
		if !strings.HasPrefix(s.Status, "UP") {
			return false
		}
	}
	return true
}

// WaitAllUp waits until HAProxy reports every replica UP.
func (h *HAProxy) WaitAllUp(n int, deadline time.Duration) error {
	return waitFor("haproxy with every replica UP", deadline, h.p, func() bool { return h.allUp(n) })
}

// plainClient is an HTTP client that never uses a proxy from the
// environment (HTTP_PROXY would send loopback requests elsewhere).
var plainClient = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
