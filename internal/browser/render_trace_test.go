package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// TestRenderTrace is a profiling aid, opt-in (not in CI):
//
//	GATEHOUSE_RENDER_TRACE=/tmp/render-trace.json [GATEHOUSE_RENDER_PAGE=page.html] \
//	  go test ./internal/browser -run TestRenderTrace -v
//
// It renders the page (default: a small article with a style sheet and a
// script, both 404) twice to warm the browser and its spare contexts, then
// records a Chrome trace of a third, warm render (backend.Local.Trace),
// writes it to GATEHOUSE_RENDER_TRACE (open it in Perfetto or
// chrome://tracing) and logs where the document's load went: the document
// request to its response (the CDP Fetch round trip that serves the
// fetched body), the response to the renderer's commit, the commit itself,
// and from the commit to the end of parsing the busy time of the page's
// renderer main thread and its largest kinds of work, and how many
// renderer processes started during the load.
func TestRenderTrace(t *testing.T) {
	out := os.Getenv("GATEHOUSE_RENDER_TRACE")
	if out == "" {
		t.Skip("set GATEHOUSE_RENDER_TRACE=FILE to trace a warm render")
	}
	page := []byte(articlePage(`<link rel="stylesheet" href="/missing.css"><script>document.title += '';</script>`))
	if f := os.Getenv("GATEHOUSE_RENDER_PAGE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		page = b
	}
	srv := newSPAServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/p" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	m, d := renderSetup(t, srv, provider.RenderAlways)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if p := d.FetchMode(ctx, srv.url("spa.test", fmt.Sprintf("/p?warm=%d", i)), provider.RenderAlways); !p.Rendered {
			t.Fatalf("warm render %d: err=%v notes=%v", i, p.Err, p.Notes)
		}
		time.Sleep(700 * time.Millisecond) // the spares refilled
	}
	cats := []string{"devtools.timeline", "blink", "loading", "toplevel", "navigation"}
	var took time.Duration
	evs, err := m.local.Trace(ctx, cats, func() error {
		time.Sleep(100 * time.Millisecond)
		t0 := time.Now()
		p := d.FetchMode(ctx, srv.url("spa.test", "/p?traced=1"), provider.RenderAlways)
		took = time.Since(t0)
		time.Sleep(300 * time.Millisecond)
		if !p.Rendered {
			return fmt.Errorf("traced render: err=%v notes=%v", p.Err, p.Notes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"traceEvents": evs})
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("traced render %v, %d events written to %s", took, len(evs), out)
	t.Log(loadBreakdown(evs))
}

// loadBreakdown summarises the main-frame document load of a render trace
// (times in ms; see TestRenderTrace).
func loadBreakdown(evs []backend.TraceEvent) string {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Ts < evs[j].Ts })
	procName := map[int]string{}
	firstSeen := map[int]float64{}
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "process_name" {
			procName[e.Pid], _ = e.Args["name"].(string)
		}
		if _, ok := firstSeen[e.Pid]; !ok && e.Ts > 0 {
			firstSeen[e.Pid] = e.Ts
		}
	}
	find := func(name string, after float64, pid int) *backend.TraceEvent {
		for i := range evs {
			e := &evs[i]
			if e.Ph == "X" && e.Name == name && e.Ts > after && (pid == 0 || e.Pid == pid) {
				return e
			}
		}
		return nil
	}
	nav := find("NavigationRequest::Create", 0, 0)
	if nav == nil {
		return "no navigation in the trace"
	}
	resp := find("NavigationRequest::OnResponseStarted", nav.Ts, 0)
	if resp == nil {
		return "no document response in the trace"
	}
	commit := find("RenderFrameImpl::CommitNavigation", resp.Ts, 0)
	if commit == nil {
		return "no commit in the trace"
	}
	parsed := find("Document::FinishedParsing", commit.Ts, commit.Pid)
	if parsed == nil {
		return "the document did not finish parsing in the trace"
	}
	// Work on the renderer main thread between the commit and the end of
	// parsing: top-level tasks for the busy time, and by kind.
	kinds := map[string]float64{}
	busy := 0.0
	for _, e := range evs {
		if e.Ph != "X" || e.Pid != commit.Pid || e.Tid != commit.Tid || e.Ts < commit.Ts || e.Ts > parsed.Ts {
			continue
		}
		switch e.Name {
		case "ThreadControllerImpl::RunTask":
			busy += e.Dur
		case "ParseHTML", "EvaluateScript", "v8.compile", "UpdateLayoutTree", "Layout", "Paint", "PrePaint",
			"ParseAuthorStyleSheet", "FunctionCall", "TimerFire", "HTMLDocumentParser::AppendBytes", "LocalFrame::SwapIn":
			kinds[e.Name] += e.Dur
		}
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return kinds[ks[i]] > kinds[ks[j]] })
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, kinds[k]/1000))
	}
	started := 0
	for pid, ts := range firstSeen {
		if procName[pid] == "Renderer" && ts > nav.Ts && ts < parsed.Ts {
			started++
		}
	}
	ms := func(a, b float64) string { return fmt.Sprintf("%.1f", (b-a)/1000) }
	return fmt.Sprintf("document request -> response %s ms, response -> commit %s ms, commit %.1f ms, commit -> parsed %s ms "+
		"(renderer main thread busy %.1f ms: %s); renderer processes started during the load: %d",
		ms(nav.Ts, resp.Ts), ms(resp.Ts, commit.Ts), commit.Dur/1000, ms(commit.Ts, parsed.Ts), busy/1000, strings.Join(parts, ", "), started)
}
