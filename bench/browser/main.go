// Command browser measures Gatehouse's browser tools side by side with
// Playwright MCP (npm @playwright/mcp, --isolated, same Chromium binary, same
// local pages) in one run, and prints the ratios docs/benchmarks.md reports:
// navigate+snapshot latency, click-by-ref latency (Playwright with its default
// settle and with --timeout-settle 0), time to a usable new session (1 s
// apart, back to back, and a new task's first navigate+snapshot back to back),
// memory (PSS) of 10 concurrent sessions, and snapshot size for the same page.
// Gatehouse alone: a burst of new tasks in a fresh Manager (spare pool at its
// floor). Both sides run the binary the Manager runs headless
// (backend.FindBrowser).
//
//	go run ./bench/browser [-rounds 20] [-peer=false]
//
// Gatehouse is called through its tool layer (tools.Registry, JSON in and out,
// the path the MCP server takes) in this process; Playwright MCP through the MCP
// SDK's stdio client (bench/browser/peer/pwmcp.mjs). Needs Chromium and Node.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/bench/internal/proctree"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func catalog(w http.ResponseWriter, _ *http.Request) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Catalog</title></head><body>
<header><nav><a href="/">Home</a> <a href="/deals">Deals</a> <a href="/help">Help</a> <a href="/account">Account</a> <a href="/cart">Cart</a></nav>
<form role=search><input type=search aria-label="Search products"><button>Search</button></form></header>
<main><h1>All products</h1>`)
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, `<section class=item><h2>Product %d</h2><p>A sturdy product number %d, in stock, ships in two days.</p>
<a href="/p/%d">Details of product %d</a> <button onclick="this.textContent='Added'">Add to cart</button></section>`, i, i, i, i)
	}
	b.WriteString(`</main><footer><p>© Shop</p></footer></body></html>`)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(b.String()))
}

func clickPage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(`<!doctype html><title>Click</title><h1>Counter</h1><p id=n>0</p>
<button onclick="document.getElementById('n').textContent = +document.getElementById('n').textContent + 1">Add one</button>`))
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type bench struct {
	r    *tools.Registry
	base string
}

func (b *bench) call(task, tool string, args map[string]any) (map[string]any, time.Duration) {
	start := time.Now()
	res, err := b.r.CallValue(context.Background(), tool, args, tools.Options{Task: task, Surface: tools.SurfaceMCP})
	if err != nil {
		fail("%s: %v", tool, err)
	}
	js, _ := res.JSON(false) // what an MCP client receives
	d := time.Since(start)
	var out map[string]any
	json.Unmarshal(js, &out)
	if res.Refused {
		fail("%s refused: %s", tool, js)
	}
	return out, d
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench/browser: "+f+"\n", a...)
	os.Exit(1)
}

var refRe = regexp.MustCompile(`\[ref=e\d+\]`)

func main() {
	rounds := flag.Int("rounds", 20, "measured repetitions per figure")
	withPeer := flag.Bool("peer", true, "run Playwright MCP too (false: Gatehouse's figures only)")
	flag.Parse()
	chromium, err := backend.FindBrowser("", false) // what the Manager runs headless; the peer gets the same binary
	if err != nil {
		fail("%v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail("%v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/catalog", catalog)
	mux.HandleFunc("/click", clickPage)
	mux.HandleFunc("/blank", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`<!doctype html><title>Blank</title><p>ready</p>`))
	})
	go http.Serve(ln, mux)
	base := "http://" + ln.Addr().String()

	home, _ := os.MkdirTemp("", "gatehouse-bench-")
	defer os.RemoveAll(home)
	cfg := config.Default()
	// Compare whole snapshots: Playwright MCP does not cut its snapshot, so
	// Gatehouse's threshold truncation (15 000 chars by default) is lifted here.
	cfg.Browser.SnapshotThreshold = 1 << 30
	reg, _ := tools.Default(tools.Env{Web: web.Env{Home: home, Config: cfg, Logger: slog.New(slog.DiscardHandler)}})
	b := &bench{r: reg, base: base}
	ours := map[string]float64{}

	b.call("warm", tools.BrowserNavigate, map[string]any{"url": base + "/catalog?warm=1"})
	var nav []float64
	var snapText string
	for i := 0; i < *rounds; i++ {
		out, d := b.call("main", tools.BrowserNavigate, map[string]any{"url": fmt.Sprintf("%s/catalog?r=%d", base, i)})
		nav = append(nav, ms(d))
		snapText, _ = out["snapshot"].(string)
	}
	ours["navigate_snapshot_ms"] = median(nav) // browser_navigate returns the snapshot
	ours["snapshot_chars"] = float64(len([]rune(snapText)))
	ours["snapshot_refs"] = float64(len(refRe.FindAllString(snapText, -1)))
	var snaps []float64
	for i := 0; i < *rounds; i++ {
		_, d := b.call("main", tools.BrowserSnapshot, map[string]any{})
		snaps = append(snaps, ms(d))
	}
	ours["snapshot_ms"] = median(snaps)
	var clicks, navClick []float64
	btn := regexp.MustCompile(`button "Add one" \[ref=(e\d+)\]`)
	for i := 0; i < *rounds; i++ {
		out, dn := b.call("main", tools.BrowserNavigate, map[string]any{"url": fmt.Sprintf("%s/click?r=%d", base, i)})
		navClick = append(navClick, ms(dn))
		m := btn.FindStringSubmatch(out["snapshot"].(string))
		if m == nil {
			fail("no button in %v", out["snapshot"])
		}
		_, d := b.call("main", tools.BrowserClick, map[string]any{"ref": m[1]})
		clicks = append(clicks, ms(d))
	}
	ours["click_ms"] = median(clicks)
	ours["navigate_click_page_ms"] = median(navClick) // the counter page, in a warm session
	// Time to a usable new session: the first call (browser_snapshot) of a new
	// task, 1 s after the previous session started (an agent's think time) and
	// back to back (no pause: the pre-started spare may not be ready).
	for _, pause := range []time.Duration{time.Second, 0} {
		var fresh []float64
		for i := 0; i < min(*rounds, 10); i++ {
			time.Sleep(pause)
			task := fmt.Sprintf("fresh-%d-%d", pause, i)
			_, d := b.call(task, tools.BrowserSnapshot, map[string]any{})
			fresh = append(fresh, ms(d))
			b.call(task, tools.BrowserClose, map[string]any{})
		}
		fmt.Fprintf(os.Stderr, "new sessions (pause %v), ms per round: %.0f\n", pause, fresh)
		if pause > 0 {
			ours["new_session_ms"] = median(fresh)
		} else {
			ours["new_session_b2b_ms"] = median(fresh)
		}
	}
	// A burst of new tasks, one after the other, each doing its first
	// navigate+snapshot (one browser_navigate) of the counter page.
	freshNav := b.newTaskNavigates("fresh-nav", base+"/click?f=%d", min(*rounds, 10))
	fmt.Fprintf(os.Stderr, "new tasks' first navigate, back to back, ms per round: %.0f\n", freshNav)
	ours["new_session_b2b_nav_ms"] = median(freshNav)
	b.call("main", tools.BrowserClose, map[string]any{})
	b.call("warm", tools.BrowserClose, map[string]any{})
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.call(fmt.Sprintf("mem-%d", i), tools.BrowserNavigate, map[string]any{"url": fmt.Sprintf("%s/catalog?m=%d", base, i)})
		}()
	}
	wg.Wait()
	time.Sleep(time.Second)
	ours["mem10_pss_kb"] = float64(proctree.PSS(os.Getpid()))
	reg.Close()
	firstBurst(home, cfg, base, *rounds, ours)
	if !*withPeer {
		js, _ := json.MarshalIndent(ours, "", "  ")
		fmt.Printf("%s\n", js)
		return
	}

	peerDir := filepath.Join("bench", "browser", "peer")
	if _, err := os.Stat(filepath.Join(peerDir, "node_modules")); err != nil {
		c := exec.Command("npm", "install", "--no-audit", "--no-fund", "--silent")
		c.Dir, c.Stderr = peerDir, os.Stderr
		c.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
		if err := c.Run(); err != nil {
			fail("npm install: %v", err)
		}
	}
	var out bytes.Buffer
	c := exec.Command("node", filepath.Join(peerDir, "pwmcp.mjs"), base, strconv.Itoa(*rounds), chromium)
	c.Stdout, c.Stderr = &out, os.Stderr
	if err := c.Run(); err != nil {
		fail("peer: %v", err)
	}
	var peer map[string]float64
	if err := json.Unmarshal(out.Bytes(), &peer); err != nil {
		fail("peer output %q: %v", out.String(), err)
	}
	rows := []struct{ what, ok, pk string }{
		{"navigate + snapshot (ms, median)", "navigate_snapshot_ms", "navigate_snapshot_ms"},
		{"snapshot alone (ms, median)", "snapshot_ms", "snapshot_ms"},
		{"click by ref vs default settle (ms)", "click_ms", "click_ms_default_settle"},
		{"click by ref vs --timeout-settle 0 (ms)", "click_ms", "click_ms_settle0"},
		{"new session usable, 1 s after the last (ms)", "new_session_ms", "new_session_ms"},
		{"new session usable, back to back (ms)", "new_session_b2b_ms", "new_session_b2b_ms"},
		{"new task's first navigate+snapshot, b2b (ms)", "new_session_b2b_nav_ms", "new_session_b2b_nav_ms"},
		{"PSS of 10 concurrent sessions (MB)", "mem10_pss_kb", "mem10_pss_kb"},
		{"snapshot size, same page (chars)", "snapshot_chars", "snapshot_chars"},
		{"refs in that snapshot", "snapshot_refs", "snapshot_refs"},
	}
	fmt.Printf("%-42s %12s %12s %8s\n", "figure", "gatehouse", "playwright", "ratio")
	for _, r := range rows {
		o, p := ours[r.ok], peer[r.pk]
		if strings.Contains(r.what, "MB") {
			o, p = o/1024, p/1024
		}
		fmt.Printf("%-42s %12.1f %12.1f %7.2fx\n", r.what, o, p, o/p)
	}
	fmt.Printf("Gatehouse only: navigate+snapshot of the counter page in a warm session %.1f ms; first burst of 10 new tasks in a fresh Manager (pool at its floor): median %.1f ms, max %.1f ms\n",
		ours["navigate_click_page_ms"], ours["first_burst_nav_ms"], ours["first_burst_nav_max_ms"])
	os.MkdirAll(filepath.Join("bench", "out"), 0o755)
	js, _ := json.MarshalIndent(map[string]any{"gatehouse": ours, "playwright_mcp": peer, "rounds": *rounds, "chromium": chromium}, "", "  ")
	os.WriteFile(filepath.Join("bench", "out", "browser.json"), js, 0o644)
}

// firstBurst measures a burst of new tasks (one after the other, each doing
// its first browser_navigate) in a fresh Manager whose spare pool has only
// its floor ready (nothing learned yet): the case the demand-sized pool
// cannot cover from stock.
func firstBurst(home string, cfg *config.Config, base string, rounds int, ours map[string]float64) {
	reg, _ := tools.Default(tools.Env{Web: web.Env{Home: home, Config: cfg, Logger: slog.New(slog.DiscardHandler)}})
	defer reg.Close()
	b := &bench{r: reg, base: base}
	b.call("burst-warm", tools.BrowserNavigate, map[string]any{"url": base + "/blank"})
	time.Sleep(3 * time.Second) // the floor's spares are made
	ds := b.newTaskNavigates("burst", base+"/click?burst=%d", min(rounds, 10))
	fmt.Fprintf(os.Stderr, "first burst in a fresh Manager, ms per round: %.0f\n", ds)
	ours["first_burst_nav_ms"] = median(ds)
	sort.Float64s(ds)
	ours["first_burst_nav_max_ms"] = ds[len(ds)-1]
}

// newTaskNavigates runs n new tasks one after the other (named prefix-0 …),
// each doing its first browser_navigate, to fmt.Sprintf(urlf, i), then
// browser_close; it returns each navigate's time in ms.
func (b *bench) newTaskNavigates(prefix, urlf string, n int) []float64 {
	var ds []float64
	for i := 0; i < n; i++ {
		task := fmt.Sprintf("%s-%d", prefix, i)
		_, d := b.call(task, tools.BrowserNavigate, map[string]any{"url": fmt.Sprintf(urlf, i)})
		ds = append(ds, ms(d))
		b.call(task, tools.BrowserClose, map[string]any{})
	}
	return ds
}
