package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/web"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
)

// The janitor stops the browser once no browser session is left
// (stopIdleBrowser); a web_extract render in flight is not a session, and
// stopping the browser under it cost the render its tab ("The browser
// session was closed": a CI failure of
// TestRenderUnderDeadlineKeepsTheFetchedPage after another test's session
// ended). Here the janitor's stop is attempted every 20 ms while a render
// runs: the render must finish, and the browser is stopped after it.
func TestIdleStopWaitsForRender(t *testing.T) {
	srv := newSPAServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(1500 * time.Millisecond)
			fmt.Fprint(w, `{"text":"late data"}`)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Slow</title></head><body><article><h1>Waiting page</h1><p id=p>This page asks its server for data that arrives late, and shows it when it does.</p></article>
<script>fetch("/slow").then(r => r.json()).then(d => { document.getElementById("p").textContent += " " + d.text; });</script></body></html>`)
	})
	m, _ := New(Options{Config: config.Default(), Home: t.TempDir(), Resolver: hostResolver{}})
	t.Cleanup(func() { m.Close() })
	if err := m.Available(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Chromium missing (CI unset): %v", err)
		}
		t.Fatal(err)
	}
	guard, _ := web.NewGuard(config.Default(), hostResolver{}, []netip.AddrPort{srv.ap})
	d := direct.New(direct.Options{Guard: guard, Timeout: 30 * time.Second, Render: provider.RenderAlways, Renderer: m})

	var done atomic.Bool
	go func() {
		for !done.Load() {
			m.stopIdleBrowser()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	p := d.FetchMode(context.Background(), srv.url("slow.test", "/page"), provider.RenderAlways)
	done.Store(true)
	if p.Err != nil || p.RenderUnavailable != "" || !p.Rendered {
		t.Fatalf("render with the idle stop attempted meanwhile: err=%v rendered=%v unavailable=%q notes=%v", p.Err, p.Rendered, p.RenderUnavailable, p.Notes)
	}
	if !strings.Contains(p.Content, "late data") {
		t.Errorf("the rendered page misses the late data: %.300q", p.Content)
	}
	if !m.stopIdleBrowser() || m.BrowserPID() != 0 {
		t.Error("the idle browser was not stopped once the render ended")
	}
}
