// Command render measures the cost of web_extract's render step, in one run:
//
//   - a rendered extract (render: always) against a plain direct fetch
//     (render: never) of the same local page, both through the tool layer
//     (tools.Registry, JSON in and out) with the cache bypassed (max_age_s
//     0): the median of -rounds calls each, plain and rendered calls
//     alternating with a pause before each rendered one (a warm browser:
//     its spare contexts ready), with the medians of the render step's
//     phases (opening a context, loading to DOMContentLoaded, the
//     quiet-wait, serialising the DOM), then rendered calls back to back;
//     Chromium's own share (navigation to DOMContentLoaded) as the floor;
//     and Playwright MCP's warm browser_navigate to the same page (one
//     server, its browser launched; -peer-warm);
//
//   - the time to the first rendered extract in a fresh process (`gatehouse
//     extract --render always`, built once, which launches Chromium) against
//     Playwright MCP's first browser_navigate in a fresh MCP server process
//     (npm @playwright/mcp, --isolated, the same Chromium binary), same page.
//
//     go run ./bench/render [-rounds 15] [-page FILE]
//
// The page is -page (an HTML file), else the median-sized page of the shared
// extraction bench (../shared/bench), else a synthetic article. Needs
// Chromium; the peer needs Node (bench/browser/peer's node_modules).
package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func main() {
	rounds := flag.Int("rounds", 15, "calls per figure (median reported)")
	pageFile := flag.String("page", "", "HTML file to serve (default: the median-sized shared bench page)")
	shared := flag.String("shared", "../shared", "shared reference folder")
	pause := flag.Duration("pause", 700*time.Millisecond, "pause between warm rendered calls")
	debug := flag.Bool("debug", false, "log the render phases (debug level)")
	fresh := flag.Bool("first", true, "also time the first rendered extract in a fresh process, and the peer's")
	peerWarm := flag.Bool("peer-warm", true, "also time Playwright MCP's warm browser_navigate to the same page")
	flag.Parse()
	level := slog.LevelWarn
	if *debug {
		level = slog.LevelDebug
	}
	phases := &phaseLog{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}), &phaseState{}}
	slog.SetDefault(slog.New(phases))
	page, name := loadPage(*pageFile, *shared)
	// The page at /p and /first; its own sub-resources (scripts, images,
	// styles of the saved copy) are 404, as for any saved copy of a page,
	// and its third-party hosts are refused by the egress proxy (DNS).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/p" && r.URL.Path != "/first" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	defer srv.Close()
	// The binary the Manager runs (the headless shell when installed), for the
	// peers too: the same engine on both sides.
	chromium, err := backend.FindBrowser("", false)
	if err != nil {
		fatal(err)
	}
	fmt.Printf("render bench: page %s (%d bytes), Chromium %s, %d rounds\n", name, len(page), chromium, *rounds)

	home, _ := os.MkdirTemp("", "gatehouse-render-bench-")
	defer os.RemoveAll(home)
	cfg := config.Default()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	reg, _ := tools.Default(tools.Env{Web: web.Env{Home: home, Config: cfg, AllowAddrPorts: []netip.AddrPort{ap}}})
	defer reg.Close()
	ctx := context.Background()
	zero := 0
	call := func(render string, i int) time.Duration {
		in := tools.ExtractInput{URLs: []any{fmt.Sprintf("%s/p?i=%d", srv.URL, i)}, Render: render, MaxAgeS: &zero}
		t0 := time.Now()
		res, err := reg.CallValue(ctx, tools.WebExtract, in, tools.Options{Surface: tools.SurfaceGo})
		d := time.Since(t0)
		if err != nil {
			fatal(err)
		}
		out := res.Value.(*tools.ExtractOutput)
		if r := out.Results[0]; !r.OK() || (render == "always") != r.Meta.Rendered {
			b, _ := json.Marshal(r)
			fatal(fmt.Errorf("%s: %s", render, b))
		}
		return d
	}
	call("never", -1)
	call("always", -2) // launches Chromium
	time.Sleep(*pause)
	{
		time.Sleep(2 * time.Second)
		c0 := cpuTree(os.Getpid())
		time.Sleep(3 * time.Second)
		fmt.Printf("idle CPU (this process and Chromium's): %v per second\n", (cpuTree(os.Getpid())-c0)/3)
	}
	// Plain and warm rendered calls alternate, so that a change in the
	// machine's load weighs on both alike.
	var plain, warm, b2b []time.Duration
	// CPU time (user+system, this process and every descendant: Chromium's
	// processes, the exited ones' included) from the start of a call to the
	// end of the pause after it, so that a rendered call's
	// background work (discarding its context, preparing the next) is
	// counted with it: a figure the machine's load changes far less than
	// wall time.
	var plainCPU, warmCPU []time.Duration
	phases.start()
	for i := 0; i < *rounds; i++ {
		c0 := cpuTree(os.Getpid())
		plain = append(plain, call("never", i))
		time.Sleep(*pause)
		c1 := cpuTree(os.Getpid())
		warm = append(warm, call("always", 1000+i))
		time.Sleep(*pause)
		c2 := cpuTree(os.Getpid())
		plainCPU = append(plainCPU, c1-c0)
		warmCPU = append(warmCPU, c2-c1)
	}
	warmPhases := phases.take()
	for i := 0; i < *rounds; i++ {
		b2b = append(b2b, call("always", 2000+i))
	}
	p, w, b := median(plain), median(warm), median(b2b)
	fmt.Printf("plain direct fetch (render never): %v median, %v min\n", p, minimum(plain))
	fmt.Printf("rendered extract (render always), warm browser: %v median = %.2fx plain (budget <= 3x); min %v = %.2fx min\n", w, ratio(w, p), minimum(warm), ratio(minimum(warm), minimum(plain)))
	fmt.Printf("  its render step (medians): %s\n", warmPhases)
	fmt.Printf("CPU time per call (this process and Chromium's, medians): plain %v, rendered %v (with its context's disposal and the next one's preparation) = %.2fx\n",
		median(plainCPU), median(warmCPU), ratio(median(warmCPU), median(plainCPU)))
	fmt.Printf("rendered extract, back to back: %v median = %.2fx plain\n", b, ratio(b, p))
	// The floor: Chromium's own share of a rendered call (the document
	// request to DOMContentLoaded in its fresh context, phase "load"), as
	// a ratio to the plain fetch; no render step can cost less than it.
	if lm := phases.median("load_ms"); lm > 0 {
		fmt.Printf("Chromium's own load of the page (navigation to DOMContentLoaded, in the render step): %v median = %.2fx plain, %.0f%% of the rendered call\n",
			lm, ratio(lm, p), 100*ratio(lm, w))
	}
	// The peer, warm: Playwright MCP's browser_navigate to the same page in
	// a running server (its browser launched), the same pause before each.
	if *peerWarm {
		if pw, ok := runPeer("warm.mjs", "warm_navigate_ms", srv.URL+"/p", chromium, fmt.Sprint(*rounds), fmt.Sprint(pause.Milliseconds())); ok {
			fmt.Printf("Playwright MCP warm browser_navigate, same page: %v median = %.2fx plain; Gatehouse rendered extract / Playwright warm navigate = %.2fx\n",
				pw, ratio(pw, p), ratio(w, pw))
		}
	}

	if !*fresh {
		return
	}
	// Fresh process: the CLI, built once.
	bin := filepath.Join(home, "gatehouse")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/gatehouse").CombinedOutput(); err != nil {
		fatal(fmt.Errorf("go build: %v\n%s", err, out))
	}
	cliHome := filepath.Join(home, "cli")
	os.MkdirAll(cliHome, 0o700)
	os.WriteFile(filepath.Join(cliHome, "config.yaml"), []byte("security:\n  allow_private_urls: true\n"), 0o600)
	var first []time.Duration
	for i := 0; i < 5; i++ {
		cmd := exec.Command(bin, "extract", "--json", "--render", "always", fmt.Sprintf("%s/first?i=%d", srv.URL, i))
		cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+cliHome)
		t0 := time.Now()
		out, err := cmd.Output()
		d := time.Since(t0)
		if err != nil || !strings.Contains(string(out), `"rendered": true`) {
			fatal(fmt.Errorf("cli: %v %s", err, out))
		}
		first = append(first, d)
	}
	f := median(first)
	fmt.Printf("first rendered extract, fresh process (gatehouse extract --render always): %v median of 5\n", f)
	if pf, ok := runPeer("first.mjs", "first_navigate_ms", srv.URL+"/first", chromium, "5"); ok {
		fmt.Printf("Playwright MCP first browser_navigate, fresh process: %v median of 5\n", pf)
		fmt.Printf("first rendered extract / Playwright first navigate = %.2fx\n", ratio(f, pf))
	}
}

// runPeer runs the Playwright MCP peer script bench/render/peer/SCRIPT with
// args and returns the duration its JSON output gives under key (ms); ok is
// false (and why printed) when the peer could not run.
func runPeer(script, key string, args ...string) (d time.Duration, ok bool) {
	out, err := exec.Command("node", append([]string{"bench/render/peer/" + script}, args...)...).Output()
	if err != nil {
		fmt.Printf("peer: Playwright MCP not run (%v); run npm install in bench/browser/peer\n", err)
		return 0, false
	}
	var res map[string]float64
	if err := json.Unmarshal(out, &res); err != nil {
		fmt.Printf("peer: unexpected output %q\n", out)
		return 0, false
	}
	return time.Duration(res[key] * float64(time.Millisecond)), true
}

// phaseLog passes records to Handler and keeps the phase durations of the
// render step's debug record ("web_extract render": open_ms, load_ms,
// settle_ms, serialise_ms) while started.
type phaseLog struct {
	slog.Handler
	*phaseState
}

type phaseState struct {
	mu   sync.Mutex
	on   bool
	runs map[string][]time.Duration
}

func (h *phaseLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &phaseLog{h.Handler.WithAttrs(as), h.phaseState}
}

func (h *phaseLog) WithGroup(name string) slog.Handler {
	return &phaseLog{h.Handler.WithGroup(name), h.phaseState}
}

func (h *phaseLog) Enabled(ctx context.Context, l slog.Level) bool {
	return l == slog.LevelDebug || h.Handler.Enabled(ctx, l)
}

func (h *phaseLog) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "web_extract render") {
		h.mu.Lock()
		if h.on {
			r.Attrs(func(a slog.Attr) bool {
				if strings.HasSuffix(a.Key, "_ms") {
					h.runs[a.Key] = append(h.runs[a.Key], time.Duration(a.Value.Int64())*time.Millisecond)
				}
				return true
			})
		}
		h.mu.Unlock()
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *phaseLog) start() {
	h.mu.Lock()
	h.on, h.runs = true, map[string][]time.Duration{}
	h.mu.Unlock()
}

// median returns the median of the collected phase key (0 when none).
func (h *phaseLog) median(key string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v := h.runs[key]; len(v) > 0 {
		return median(v)
	}
	return 0
}

// take stops collecting and formats the medians.
func (h *phaseLog) take() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.on = false
	var parts []string
	var keys []string
	for k := range h.runs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := h.runs[k]; len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s %v", strings.TrimSuffix(k, "_ms"), median(v)))
		}
	}
	return strings.Join(parts, ", ")
}

// cpuTree returns the CPU time (user+system) used by process pid and its
// descendants, the exited and reaped ones included (/proc/PID/stat fields
// 14-17, in clock ticks of 10 ms).
func cpuTree(pid int) time.Duration {
	kids := map[int][]int{}
	ticks := map[int]int64{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var p int
		if _, err := fmt.Sscanf(e.Name(), "%d", &p); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
		if len(f) < 15 {
			continue
		}
		var ppid int
		var u, st, cu, cs int64
		fmt.Sscanf(f[1], "%d", &ppid)
		fmt.Sscanf(f[11], "%d", &u)
		fmt.Sscanf(f[12], "%d", &st)
		fmt.Sscanf(f[13], "%d", &cu)
		fmt.Sscanf(f[14], "%d", &cs)
		kids[ppid] = append(kids[ppid], p)
		ticks[p] = u + st + cu + cs
	}
	var total int64
	var walk func(int)
	walk = func(p int) {
		total += ticks[p]
		for _, k := range kids[p] {
			walk(k)
		}
	}
	walk(pid)
	return time.Duration(total) * 10 * time.Millisecond
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func minimum(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "render bench:", err)
	os.Exit(1)
}

// loadPage returns the page to serve and its name.
func loadPage(file, shared string) ([]byte, string) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			fatal(err)
		}
		return b, file
	}
	dir := filepath.Join(shared, "bench", "extraction", "html")
	ents, err := os.ReadDir(dir)
	if err == nil && len(ents) > 0 {
		type sized struct {
			name string
			b    []byte
		}
		var all []sized
		for _, e := range ents {
			f, err := os.Open(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			zr, err := gzip.NewReader(f)
			if err == nil {
				b, _ := io.ReadAll(zr)
				all = append(all, sized{e.Name(), b})
			}
			f.Close()
		}
		sort.Slice(all, func(i, j int) bool { return len(all[i].b) < len(all[j].b) })
		m := all[len(all)/2]
		return m.b, "shared bench " + m.name + " (median size)"
	}
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>Harbour lights</title></head><body><article><h1>Harbour lights</h1>")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d: the harbour master kept the lights burning through the long winter nights, and every ship that passed the rocks owed him its safe passage home.</p>", i)
	}
	b.WriteString("</article></body></html>")
	return []byte(b.String()), "synthetic article"
}
