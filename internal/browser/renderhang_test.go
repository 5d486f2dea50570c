package browser

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/renderstep"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// An application shell whose script never ends: the render is attempted,
// bounded, and the page's failure says so (the render's reason and that the
// script kept the page busy), instead of a bare empty_content that sends the
// agent to the browser tools, which the page hangs too (breaker5 D21).
func TestRenderOfSpinningShellIsBoundedAndReported(t *testing.T) {
	srv := newSPAServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Spin</title></head><body><div id="root"></div><script>while(true){}</script></body></html>`)
	})
	_, d := renderSetup(t, srv, provider.RenderAuto)
	start := time.Now()
	p := d.FetchMode(context.Background(), srv.url("spin.test", "/app"), provider.RenderAuto)
	took := time.Since(start)
	t.Logf("took %v: err=%v unavailable=%q notes=%v", took, p.Err, p.RenderUnavailable, p.Notes)
	if p.Err == nil || p.RenderUnavailable == "" {
		t.Fatalf("err=%v render_unavailable=%q, want a failed page that says the render failed", p.Err, p.RenderUnavailable)
	}
	msg := reason.As(p.Err).Message
	if !strings.Contains(msg, "render") || !strings.Contains(msg, p.RenderUnavailable) || strings.Contains(msg, "try the browser tools") {
		t.Errorf("message %q: want the render attempt and its reason %s, and no advice to use the browser tools", msg, p.RenderUnavailable)
	}
	if took > renderstep.LoadTimeout+10*time.Second {
		t.Errorf("the render of a spinning page cost %v", took)
	}
}

// A page whose script never ends, rendered under a call deadline
// (web.extract_timeout): the render stops before the deadline and the page
// comes back as fetched, instead of an empty extract_timeout row
// (breaker6 D13).
func TestRenderUnderDeadlineKeepsTheFetchedPage(t *testing.T) {
	srv := newSPAServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Loop</title></head><body><article><h1>Before the loop</h1><p>This paragraph was sent by the server before the script that never ends; it is the page as fetched and must reach the agent.</p></article><script>while(true){}</script></body></html>`)
	})
	_, d := renderSetup(t, srv, provider.RenderAlways)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	start := time.Now()
	p := d.FetchMode(ctx, srv.url("loop.test", "/page"), provider.RenderAlways)
	took := time.Since(start)
	t.Logf("took %v: err=%v unavailable=%q notes=%v", took, p.Err, p.RenderUnavailable, p.Notes)
	if p.Err != nil || !strings.Contains(p.Content, "sent by the server before the script") {
		t.Fatalf("err=%v content=%.200q: want the page as fetched", p.Err, p.Content)
	}
	if p.Rendered || p.RenderUnavailable != string(reason.ExtractTimeout) {
		t.Errorf("rendered=%v render_unavailable=%q, want false and %q", p.Rendered, p.RenderUnavailable, reason.ExtractTimeout)
	}
	if took >= 6*time.Second {
		t.Errorf("the page came back after %v, at or past the call's deadline", took)
	}
}
