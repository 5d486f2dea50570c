package main

import (
	"bytes"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/bench/internal/proctree"
)

// This file is the browser half of the fleet (issue 19's fleet load test):
// the page site the browser tasks drive, the `gatehouse browser-node`
// processes, and the /proc readings (PSS, CPU, Chromium left behind).

// RunEnv is set in the environment of every process the fleet starts, to
// the fleet's scratch directory. Chromium inherits its starter's
// environment, so a process carrying it is one of ours: that is how the
// bench finds Chromium left behind without touching anyone else's (other
// jobs on the machine run Chromium too; /proc is not namespaced here).
const RunEnv = "GATEHOUSE_FLEET_RUN"

// childEnv is the environment of a replica or node with GATEHOUSE_HOME home.
func (f *Fleet) childEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GATEHOUSE_HOME=" + home, "TMPDIR=" + f.opts.Dir, RunEnv + "=" + f.opts.Dir}
}

// BrowserSite serves the browser tasks' pages on a public-looking address
// (PublicIP inside the namespace, so the browser's SSRF guard lets the
// navigation through as for any public site). Task i has two pages:
//
//   - /t/i/: title "Fleet task i", the task's marker, the Cookie header the
//     request carried, a form (a text field "Note" and a button "Save"
//     whose click writes "Saved: <note>" into the page) and a link "Next
//     page". The response sets the cookie fleet_i=<marker> (Path=/, so a
//     context shared by two tasks would send both);
//   - /t/i/next: the marker again and the Cookie header it received.
//
// Markers are registered by the bench before the task navigates and never
// appear in a URL. The site counts requests whose Cookie header names
// another task's cookie (server-side bleed).
type BrowserSite struct {
	Addr    string
	srv     *http.Server
	mu      sync.Mutex
	markers map[int]string
	bleed   int
	hits    int
}

func startBrowserSite(ip string) (*BrowserSite, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	s := &BrowserSite{Addr: ln.Addr().String(), markers: map[int]string{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// SetMarker registers task's marker (before its navigation).
func (s *BrowserSite) SetMarker(task int, marker string) {
	s.mu.Lock()
	s.markers[task] = marker
	s.mu.Unlock()
}

// URL is task's first page.
func (s *BrowserSite) URL(task int) string { return fmt.Sprintf("http://%s/t/%d/", s.Addr, task) }

// Bleed is how many requests carried another task's cookie.
func (s *BrowserSite) Bleed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bleed
}

// Hits is how many task pages were served.
func (s *BrowserSite) Hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// cookieNameRe matches a task cookie's name in a Cookie header or in
// document.cookie.
var cookieNameRe = regexp.MustCompile(`fleet_(\d+)=`)

func cookieName(task int) string { return "fleet_" + strconv.Itoa(task) }

func (s *BrowserSite) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/t/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	idStr, page, _ := strings.Cut(rest, "/")
	id, err := strconv.Atoi(idStr)
	s.mu.Lock()
	marker, known := s.markers[id]
	if err == nil && known {
		s.hits++
		for _, m := range cookieNameRe.FindAllStringSubmatch(r.Header.Get("Cookie"), -1) {
			if m[1] != idStr {
				s.bleed++
			}
		}
	}
	s.mu.Unlock()
	if err != nil || !known || (page != "" && page != "next") {
		http.NotFound(w, r)
		return
	}
	cookie := html.EscapeString(r.Header.Get("Cookie"))
	if cookie == "" {
		cookie = "none"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var b strings.Builder
	if page == "" {
		http.SetCookie(w, &http.Cookie{Name: cookieName(id), Value: marker, Path: "/", SameSite: http.SameSiteLaxMode})
		fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fleet task %d</title></head><body><main>
<h1>Fleet task %d</h1>
<p>Marker: %s</p>
<p>Cookie received: %s</p>
<form onsubmit="return false"><label>Note <input type="text" name="note" id="note"></label>
<button type="button" onclick="document.getElementById('out').textContent = 'Saved: ' + document.getElementById('note').value">Save</button></form>
<p id="out">Nothing saved</p>
<p><a href="/t/%d/next">Next page</a></p>
</main></body></html>`, id, id, marker, cookie, id)
	} else {
		fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fleet task %d, next page</title></head><body><main>
<h1>Next page of fleet task %d</h1>
<p>Marker: %s</p>
<p>Cookie received: %s</p>
</main></body></html>`, id, id, marker, cookie)
	}
	w.Write([]byte(b.String()))
}

// Node is one `gatehouse browser-node` process.
type Node struct {
	Name string // "N1", "N2"
	ID   string // its registry id (printed at start)
	Addr string // its listener
	p    *proc
}

// nodeLineRe is the line a node prints once registered:
// "gatehouse browser-node <id> listening on <addr> (capacity N)".
var nodeLineRe = regexp.MustCompile(`gatehouse browser-node (\S+) listening on (\S+) \(capacity (\d+)\)`)

// startNode starts browser node i on a loopback port chosen by the node
// (--listen 127.0.0.1:0: the replicas' browser.node_allow is empty, so
// loopback only) and waits until it has registered.
func (f *Fleet) startNode(i int) (*Node, error) {
	if f.Redis == nil {
		return nil, fmt.Errorf("a browser node needs Redis (Options.Redis)")
	}
	name := "N" + strconv.Itoa(i+1)
	home := filepath.Join(f.opts.Dir, "home-"+name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	env := append(f.childEnv(home), "GATEHOUSE_REDIS_URL="+f.Redis.URL())
	argv := []string{f.opts.Bin, "browser-node", "--listen", "127.0.0.1:0"}
	if f.opts.NodeMaxSessions > 0 {
		argv = append(argv, "--max-sessions", strconv.Itoa(f.opts.NodeMaxSessions))
	}
	p, err := startProc("browser node "+name, filepath.Join(f.opts.Dir, "node-"+name+".log"), env, argv...)
	if err != nil {
		return nil, err
	}
	n := &Node{Name: name, p: p}
	var capacity string
	err = waitFor("browser node "+name+" registered", 60*time.Second, p, func() bool {
		b, _ := os.ReadFile(p.log)
		if m := nodeLineRe.FindSubmatch(b); m != nil {
			n.ID, n.Addr, capacity = string(m[1]), string(m[2]), string(m[3])
			return true
		}
		return false
	})
	if err != nil {
		p.stop(syscall.SIGKILL, 0)
		return nil, err
	}
	f.logf("browser node %s: %s on %s, capacity %s", name, n.ID, n.Addr, capacity)
	return n, nil
}

// Stop sends SIGTERM (the node deregisters and stops Chromium) and waits up
// to 20 s, then SIGKILL.
func (n *Node) Stop() { n.p.stop(syscall.SIGTERM, 20*time.Second) }

// PID is the node process's pid.
func (n *Node) PID() int { return n.p.cmd.Process.Pid }

// treeCPU is the CPU time of pid and its live descendants, each with the
// CPU of the children it reaped (so a renderer that exited counts in its
// parent's), in clock ticks of 10 ms.
func treeCPU(pid int) int { return proctree.CPUSum(pid) }

// exitCPU is the CPU time of an exited process as wait4 reported it: its
// own and its reaped descendants' (Linux reports RUSAGE_BOTH to wait4), so
// for a node or replica it includes its Chromium.
func (p *proc) exitCPU() time.Duration {
	if p.cmd.ProcessState == nil {
		return 0
	}
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
}

// chromiumPSS sums the PSS (kB) of pid's descendants (its Chromium: the
// browser process, zygotes, renderers, GPU and utility processes), not of
// pid itself.
func chromiumPSS(pid int) int {
	total := 0
	proctree.Scan().Walk(pid, func(p int) {
		if p != pid {
			total += proctree.PSSOf(p)
		}
	})
	return total
}

// procTracker remembers every process seen in the trees of the fleet's
// replicas and nodes (pid and start time, so a reused pid is not taken for
// one of them). Chromium's zygotes, renderers and utility processes show
// neither the starter's environment nor the profile directory in /proc
// (Chromium rewrites the memory /proc/<pid>/environ and cmdline read, to set
// its process titles), so ancestry, seen while they ran, is how the bench
// knows them afterwards.
type procTracker struct {
	mu   sync.Mutex
	seen map[int]string // pid → start time (clock ticks since boot)
}

// track records roots and their descendants as they are now.
func (pt *procTracker) track(roots []int) {
	t := proctree.Scan()
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.seen == nil {
		pt.seen = map[int]string{}
	}
	for _, r := range roots {
		t.Walk(r, func(pid int) {
			if st, _ := procStart(pid); st != "" {
				pt.seen[pid] = st
			}
		})
	}
}

// alive lists the tracked processes still running (same pid and start time,
// not a zombie), as "pid name" strings.
func (pt *procTracker) alive() []string {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	var out []string
	for pid, st := range pt.seen {
		if now, state := procStart(pid); now == st && state != "Z" {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			out = append(out, fmt.Sprintf("%d %s", pid, strings.TrimSpace(string(comm))))
		}
	}
	sort.Strings(out)
	return out
}

// procStart returns pid's start time and state from /proc/<pid>/stat; ""
// when it does not exist.
func procStart(pid int) (start, state string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 20 {
		return "", ""
	}
	return f[19], f[0] // fields 22 (starttime) and 3 (state)
}

// Leftover lists the processes still running that carry RunEnv=dir in their
// environment (a replica, a node, Chromium's browser process), as
// "pid name" strings. Chromium's other processes do not show it: see
// procTracker.
func Leftover(dir string) []string {
	want := []byte(RunEnv + "=" + dir + "\x00")
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		// A zombie has no environment to read; a process that is still
		// running does.
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		out = append(out, fmt.Sprintf("%d %s", pid, strings.TrimSpace(string(comm))))
	}
	return out
}
