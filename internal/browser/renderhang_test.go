package browser

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

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
	if took > renderLoadTimeout+10*time.Second {
		t.Errorf("the render of a spinning page cost %v", took)
	}
}
