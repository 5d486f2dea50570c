// Command newsession profiles where a new browser session's time goes, per
// CDP call: it starts Chromium with Gatehouse's flags (backend.Launch), then
// makes sessions the way the browser Manager does (a per-session egress proxy
// with its credential, backend.Local.NewTab, a first isolated-world call, a
// navigation to a loopback page, a second call) and times every CDP command
// from the browser connection's trace (backend.Options.Debugf): the time from
// the command being written to its answer being read.
//
//	go run ./bench/newsession [-rounds 10] [-pause 0] [-settle 0] [-prewarm 0]
//
// -pause is the think time between sessions (0 = back to back), -settle a
// wait between opening the tab and its first call (with 1.5 s the renderer
// has started, so the calls after it show CDP alone), -prewarm makes that many
// tabs first and uses them in order (a pool). Prints one line per CDP method
// (median duration, median start offset from the session's start, count)
// and the medians of the phases.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/bench/internal/proctree"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
)

type flagList struct{ m map[string]any }

func (f *flagList) String() string { return fmt.Sprint(f.m) }
func (f *flagList) Set(v string) error {
	if f.m == nil {
		f.m = map[string]any{}
	}
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		f.m[k] = true
		return nil
	}
	f.m[k] = val
	return nil
}

// trace records CDP commands from the connection's debug log.
type trace struct {
	mu    sync.Mutex
	sent  map[int64]sent
	calls []call
}

type sent struct {
	method string
	at     time.Time
}

type call struct {
	method     string
	start, end time.Time
}

func (t *trace) debugf(format string, args ...any) {
	now := time.Now()
	if len(args) != 1 {
		return
	}
	b, ok := args[0].([]byte)
	if !ok {
		return
	}
	var m struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
	}
	if json.Unmarshal(b, &m) != nil || m.ID == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if strings.HasPrefix(format, "->") {
		t.sent[m.ID] = sent{m.Method, now}
		return
	}
	if s, ok := t.sent[m.ID]; ok {
		delete(t.sent, m.ID)
		t.calls = append(t.calls, call{s.method, s.at, now})
	}
}

func (t *trace) take() []call {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.calls
	t.calls = nil
	return out
}

// typeCPU sums user+system time (own and reaped children's, clock ticks) per
// Chromium process type (--type=…; "browser" for the main process) over pid
// and its descendants.
func typeCPU(root int) map[string]int {
	t := proctree.Scan()
	out := map[string]int{}
	t.Walk(root, func(p int) {
		typ := "browser"
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); err == nil {
			for _, a := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == ' ' }) {
				if v, ok := strings.CutPrefix(a, "--type="); ok {
					typ = v
				}
				if v, ok := strings.CutPrefix(a, "--utility-sub-type="); ok {
					typ += ":" + v
				}
			}
		}
		out[typ] += t.CPU(p)
	})
	return out
}

// threadCPU sums user+system time (clock ticks) per thread name of pid.
func threadCPU(pid int) map[string]int {
	out := map[string]int{}
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, e := range ents {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, e.Name()))
		if err != nil {
			continue
		}
		s := string(st)
		name := s[strings.IndexByte(s, '(')+1 : strings.LastIndexByte(s, ')')]
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		u, _ := strconv.Atoi(f[11])
		k, _ := strconv.Atoi(f[12])
		out[name] += u + k
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "newsession: "+f+"\n", a...)
	os.Exit(1)
}

type session struct {
	tab   *backend.Tab
	proxy *egress.ProxySession
	start time.Time
	open  time.Duration
}

func main() {
	rounds := flag.Int("rounds", 10, "sessions measured")
	pause := flag.Duration("pause", 0, "think time between sessions")
	settle := flag.Duration("settle", 0, "wait between opening a tab and its first call")
	prewarm := flag.Int("prewarm", 0, "tabs opened (and warmed) before the measured rounds")
	var extra flagList
	flag.Var(&extra, "flag", "extra Chromium flag name[=value] (repeatable)")
	flag.Parse()

	exec, err := backend.FindBrowser("", false)
	if err != nil {
		fail("%v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail("%v", err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>Page</title><h1>Hello</h1><p>text</p><a href="/x">a link</a><button>b</button>`))
	}))
	base := "http://" + ln.Addr().String()
	home, _ := os.MkdirTemp("", "gatehouse-newsession-")
	defer os.RemoveAll(home)
	gates, _ := browser.NewGates(config.Default(), home, nil, nil)

	tr := &trace{sent: map[int64]sent{}}
	ctx := context.Background()
	defProxy, err := egress.NewProxySession(egress.ProxyOptions{Name: "default", Guard: gates.Strict})
	if err != nil {
		fail("%v", err)
	}
	defer defProxy.Close()
	l, err := backend.Launch(ctx, backend.Options{ExecPath: exec, DefaultProxy: defProxy.URL(), Debugf: tr.debugf, ExtraFlags: extra.m})
	if err != nil {
		fail("%v", err)
	}
	defer l.Close()

	open := func() *session {
		start := time.Now()
		p, err := egress.NewProxySession(egress.ProxyOptions{Name: "s", Guard: gates.Open, Authenticate: true})
		if err != nil {
			fail("%v", err)
		}
		user, pass := p.Credentials()
		tab, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), ProxyUser: user, ProxyPass: pass,
			ProxyProbeURL: egress.ProxyAuthProbeURL, DialogPolicy: backend.DialogDismiss, DownloadDir: home})
		if err != nil {
			fail("NewTab: %v", err)
		}
		return &session{tab: tab, proxy: p, start: start, open: time.Since(start)}
	}
	const warmJS = `function() { return 1 }`
	const snapJS = `function() { return document.title + ' ' + document.querySelectorAll('*').length }`

	// A first session starts the browser's first renderer (not measured).
	s := open()
	s.tab.CallIsolated(ctx, warmJS)
	s.tab.Close()
	s.proxy.Close()
	var pool []*session
	time.Sleep(time.Second)
	pss0 := proctree.PSS(l.PID())
	for i := 0; i < *prewarm; i++ {
		s := open()
		if _, err := s.tab.CallIsolated(ctx, warmJS); err != nil {
			fail("warm: %v", err)
		}
		pool = append(pool, s)
	}
	time.Sleep(time.Second)
	if *prewarm > 0 {
		fmt.Printf("PSS of Chromium: %d MB with no tab, %d MB with %d blank warmed tabs (%.1f MB each)\n",
			pss0/1024, proctree.PSS(l.PID())/1024, *prewarm, float64(proctree.PSS(l.PID())-pss0)/1024/float64(*prewarm))
	}
	tr.take()

	cpu0 := proctree.CPUSum(l.PID())
	types0 := typeCPU(l.PID())
	threads0 := threadCPU(l.PID())
	wall0 := time.Now()
	byMethod := map[string][]float64{}
	offset := map[string][]float64{}
	phases := map[string][]float64{}
	var order []string
	for i := 0; i < *rounds; i++ {
		time.Sleep(*pause)
		t0 := time.Now()
		var s *session
		if len(pool) > 0 {
			s, pool = pool[0], pool[1:]
			s.start = t0
			s.open = 0
		} else {
			s = open()
		}
		time.Sleep(*settle)
		t1 := time.Now()
		if _, err := s.tab.CallIsolated(ctx, warmJS); err != nil {
			fail("first call: %v", err)
		}
		t2 := time.Now()
		if res, err := s.tab.Navigate(ctx, fmt.Sprintf("%s/p%d", base, i)); err != nil || res.ErrorText != "" {
			fail("navigate: %v %s", err, res.ErrorText)
		}
		t3 := time.Now()
		if _, err := s.tab.CallIsolated(ctx, snapJS); err != nil {
			fail("snap: %v", err)
		}
		t4 := time.Now()
		phases["1 open (NewTab incl. proxy priming)"] = append(phases["1 open (NewTab incl. proxy priming)"], ms(s.open))
		phases["2 first call (renderer up)"] = append(phases["2 first call (renderer up)"], ms(t2.Sub(t1)))
		phases["3 navigate"] = append(phases["3 navigate"], ms(t3.Sub(t2)))
		phases["4 second call"] = append(phases["4 second call"], ms(t4.Sub(t3)))
		phases["5 usable = open+first call"] = append(phases["5 usable = open+first call"], ms(s.open+t2.Sub(t1)))
		phases["6 total to first snapshot"] = append(phases["6 total to first snapshot"], ms(t4.Sub(t0)-*settle))
		for _, c := range tr.take() {
			if c.start.Before(s.start) {
				continue
			}
			if _, ok := byMethod[c.method]; !ok {
				order = append(order, c.method)
			}
			byMethod[c.method] = append(byMethod[c.method], ms(c.end.Sub(c.start)))
			offset[c.method] = append(offset[c.method], ms(c.start.Sub(s.start)))
		}
		s.tab.Close()
		s.proxy.Close()
	}
	for _, s := range pool {
		s.tab.Close()
		s.proxy.Close()
	}
	cpu := proctree.CPUSum(l.PID()) - cpu0
	fmt.Printf("Chromium CPU per session (open, navigate, close): %.0f ms; wall per round %.0f ms\n", float64(cpu*10)/float64(*rounds), ms(time.Since(wall0))/float64(*rounds))
	for k, v := range typeCPU(l.PID()) {
		fmt.Printf("  CPU per session in %s: %.0f ms\n", k, float64((v-types0[k])*10)/float64(*rounds))
	}
	for k, v := range threadCPU(l.PID()) {
		if d := v - threads0[k]; d > 0 {
			fmt.Printf("  browser thread %s: %.0f ms per session\n", k, float64(d*10)/float64(*rounds))
		}
	}
	fmt.Printf("rounds %d, pause %v, settle %v, prewarm %d, extra flags %v\n", *rounds, *pause, *settle, *prewarm, extra.m)
	fmt.Printf("%-40s %10s %10s %6s\n", "CDP method", "median ms", "at ms", "n")
	sort.SliceStable(order, func(i, j int) bool { return median(offset[order[i]]) < median(offset[order[j]]) })
	for _, m := range order {
		fmt.Printf("%-40s %10.1f %10.1f %6d\n", m, median(byMethod[m]), median(offset[m]), len(byMethod[m]))
	}
	var ph []string
	for k := range phases {
		ph = append(ph, k)
	}
	sort.Strings(ph)
	for _, k := range ph {
		fmt.Printf("%-40s %10.1f\n", k, median(phases[k]))
	}
}
