package browser

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud/cloudfake"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// camofoxFake is a local fake of the Camofox REST API (camofox-browser's
// documented shapes): tabs per userId with a URL and history; navigate
// answers {ok, url, title}; snapshot {url, snapshot, refsCount, hasMore,
// nextOffset} paginated at 80,000 chars; click e9 follows a link; stats
// {tabId, url}; evaluate {ok, result}; DELETE closes. It records every
// request.
type camofoxFake struct {
	*cloudfake.Server
	mu       sync.Mutex
	tabs     map[string]*fakeTab
	next     int
	noEval   bool
	redirect map[string]string // navigate target → final URL
}

type fakeTab struct {
	user, session string
	hist          []string
	typed         map[string]string
}

func (t *fakeTab) url() string { return t.hist[len(t.hist)-1] }

func newCamofoxFake(t *testing.T) *camofoxFake {
	f := &camofoxFake{tabs: map[string]*fakeTab{}, redirect: map[string]string{}}
	f.Server = cloudfake.New(t, f.serve)
	return f
}

func (f *camofoxFake) serve(rq cloudfake.Request) (int, any) {
	r, _ := http.NewRequest(rq.Method, rq.Path, nil) // the path and query, parsed
	f.mu.Lock()
	defer f.mu.Unlock()
	user, _ := rq.Body["userId"].(string)
	if user == "" {
		user = r.URL.Query().Get("userId")
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.URL.Path == "/health" {
		return 200, map[string]any{"ok": true, "engine": "camoufox", "browserConnected": true}
	}
	if parts[0] != "tabs" || user == "" {
		return 400, map[string]any{"error": "userId required"}
	}
	if len(parts) == 1 && r.Method == "POST" {
		sk, _ := rq.Body["sessionKey"].(string)
		if sk == "" {
			return 400, map[string]any{"error": "sessionKey required"}
		}
		f.next++
		id := fmt.Sprintf("tab-%d", f.next)
		f.tabs[id] = &fakeTab{user: user, session: sk, hist: []string{"about:blank"}, typed: map[string]string{}}
		return 200, map[string]any{"tabId": id, "url": "about:blank"}
	}
	tab, ok := f.tabs[parts[1]]
	if !ok || tab.user != user {
		return 404, map[string]any{"error": "Tab not found"}
	}
	op := ""
	if len(parts) > 2 {
		op = parts[2]
	}
	title := func(u string) string {
		if strings.Contains(u, "captcha") {
			return "Just a moment..."
		}
		return "Page " + u
	}
	switch {
	case r.Method == "DELETE" && op == "":
		delete(f.tabs, parts[1])
		return 200, map[string]any{"ok": true}
	case op == "navigate":
		u, _ := rq.Body["url"].(string)
		if fin, ok := f.redirect[u]; ok {
			u = fin
		}
		tab.hist = append(tab.hist, u)
		return 200, map[string]any{"ok": true, "tabId": parts[1], "url": u, "title": title(u), "refsAvailable": true}
	case op == "snapshot":
		u := tab.url()
		text := "[heading] " + title(u) + "\n[button e1] Press\n[textbox e2] Name"
		if v := tab.typed["e2"]; v != "" {
			text += ": " + v
		}
		text += "\n[link e9] Next page"
		if strings.Contains(u, "/big") {
			text += "\n" + strings.Repeat("[paragraph] lorem ipsum dolor sit amet\n", 5000) + "[paragraph] THE END"
		}
		off := 0
		fmt.Sscan(r.URL.Query().Get("offset"), &off)
		const page = 80000
		end := min(off+page, len(text))
		resp := map[string]any{"url": u, "snapshot": text[off:end], "refsCount": 3}
		if end < len(text) {
			resp["truncated"], resp["hasMore"], resp["nextOffset"], resp["totalChars"] = true, true, end, len(text)
		}
		return 200, resp
	case op == "click":
		if rq.Body["ref"] == "e9" {
			tab.hist = append(tab.hist, strings.TrimSuffix(tab.url(), "/")+"/next")
		}
		return 200, map[string]any{"ok": true, "url": tab.url()}
	case op == "type":
		ref, _ := rq.Body["ref"].(string)
		txt, _ := rq.Body["text"].(string)
		tab.typed[ref] = txt
		return 200, map[string]any{"ok": true}
	case op == "scroll", op == "press":
		return 200, map[string]any{"ok": true}
	case op == "back":
		if len(tab.hist) > 1 {
			tab.hist = tab.hist[:len(tab.hist)-1]
		}
		return 200, map[string]any{"ok": true, "url": tab.url()}
	case op == "stats":
		return 200, map[string]any{"tabId": parts[1], "url": tab.url(), "toolCalls": len(f.All())}
	case op == "evaluate":
		if f.noEval {
			return 501, map[string]any{"error": "Not implemented"}
		}
		if rq.Body["expression"] == "goToMetadata()" { // a page function that moves the tab

			tab.hist = append(tab.hist, "http://169.254.169.254/")
		}
		return 200, map[string]any{"ok": true, "result": map[string]any{"answer": 42}}
	default:
		return 404, map[string]any{"error": "no route"}
	}
}

func (f *camofoxFake) navigated() []string {
	var out []string
	for _, r := range f.All() {
		if strings.HasSuffix(r.Path, "/navigate") {
			u, _ := r.Body["url"].(string)
			out = append(out, u)
		}
	}
	return out
}

func camofoxManager(t *testing.T, f *camofoxFake, host string, mut func(*config.Config), lo LifecycleOptions, env map[string]string) (*Manager, *syncBuf) {
	t.Helper()
	cfg := config.Default()
	if mut != nil {
		mut(cfg)
	}
	_, port, _ := net.SplitHostPort(f.Listener.Addr().String())
	e := map[string]string{"CAMOFOX_URL": "http://" + host + ":" + port, "CAMOFOX_API_KEY": "camo-secret-1"}
	for k, v := range env {
		e[k] = v
	}
	if lo.Tick == 0 {
		lo.Tick = time.Hour
	}
	logs := &syncBuf{}
	m, warns := New(Options{Config: cfg, Home: t.TempDir(), Resolver: cloudResolver{}, Env: e, Lifecycle: lo,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if len(warns) > 0 {
		t.Fatalf("warnings: %v", warns)
	}
	t.Cleanup(func() { m.Close() })
	return m, logs
}

// TestCamofoxToolsDriveTheRESTAPI: every browser tool maps onto the
// documented Camofox calls, with userId/sessionKey and the Bearer key, and
// the results keep Gatehouse's shapes.
func TestCamofoxToolsDriveTheRESTAPI(t *testing.T) {
	f := newCamofoxFake(t)
	// A cloud provider is configured too, but CAMOFOX_URL with no
	// browser.cloud_provider selects Camofox; a private URL keeps the bare key.
	m, logs := camofoxManager(t, f, "127.0.0.1", nil, LifecycleOptions{}, map[string]string{"BROWSER_USE_API_KEY": "bu"})
	if m.Available() != nil || m.camo == nil || !m.route.Camofox || m.route.CloudProvider {
		t.Fatalf("Camofox mode not selected: %+v", m.route)
	}
	ctx := context.Background()
	nr := m.Navigate(ctx, "cf", NavigateInput{URL: "http://localhost:3000/app"})
	if !nr.Success || nr.SessionKey != "cf" || nr.Backend != "camofox" || nr.ElementCount != 3 || !strings.Contains(nr.Snapshot, "[button e1] Press") || nr.URL != "http://localhost:3000/app" {
		t.Fatalf("navigate: %+v", nr)
	}
	c := m.Click(ctx, "cf", RefInput{Ref: "@e9"})
	if !c.Success || c.Clicked != "@e9" || !c.Navigated || !strings.HasSuffix(c.URL, "/app/next") {
		t.Errorf("click: %+v", c)
	}
	ty := m.Type(ctx, "cf", TypeInput{Ref: "e2", Text: "Ada"})
	if !ty.Success || ty.Element != "@e2" || !strings.Contains(ty.Delta, "Ada") {
		t.Errorf("type: %+v", ty)
	}
	if s := m.Scroll(ctx, "cf", ScrollInput{Direction: "down"}); !s.Success || s.Scrolled != "down" {
		t.Errorf("scroll: %+v", s)
	}
	if p := m.Press(ctx, "cf", PressInput{Key: "Enter"}); !p.Success {
		t.Errorf("press: %+v", p)
	}
	if b := m.Back(ctx, "cf"); !b.Success || b.URL != "http://localhost:3000/app" {
		t.Errorf("back: %+v", b)
	}
	ev := m.Console(ctx, "cf", ConsoleInput{Expression: "({answer: 6*7})"})
	if !ev.Success || string(ev.Result) != `{"answer":42}` || ev.ResultType != "dict" {
		t.Errorf("evaluate: %+v", ev)
	}
	if cm := m.Console(ctx, "cf", ConsoleInput{}); cm.Reason != reason.BackendUnsupported {
		t.Errorf("console messages: %+v", cm)
	}
	if s := m.Snapshot(ctx, "cf", SnapshotInput{}); !s.Success || !strings.Contains(s.Snapshot, "Name: Ada") {
		t.Errorf("snapshot: %+v", s)
	}

	reqs := f.All()
	var tabID string
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer camo-secret-1" {
			t.Errorf("%s %s without the Bearer key", r.Method, r.Path)
		}
		user, _ := r.Body["userId"].(string)
		if r.Method == "GET" || r.Method == "DELETE" {
			user = strings.TrimPrefix(r.Path[strings.Index(r.Path, "?")+1:], "userId=")
		}
		if !strings.HasPrefix(user, "gatehouse_") {
			t.Errorf("%s %s: userId %q", r.Method, r.Path, user)
		}
		if r.Method == "POST" && r.Path == "/tabs" {
			if r.Body["sessionKey"] != "cf" {
				t.Errorf("create tab body %v", r.Body)
			}
			tabID = "tab-1"
		}
	}
	want := map[string]map[string]any{
		"/tabs/tab-1/navigate": {"url": "http://localhost:3000/app"},
		"/tabs/tab-1/click":    {"ref": "e9"},
		"/tabs/tab-1/type":     {"ref": "e2", "text": "Ada", "clear": true},
		"/tabs/tab-1/scroll":   {"direction": "down", "amount": float64(500)},
		"/tabs/tab-1/press":    {"key": "Enter"},
		"/tabs/tab-1/evaluate": {"expression": "({answer: 6*7})"},
	}
	for path, body := range want {
		found := false
		for _, r := range reqs {
			if r.Method == "POST" && r.Path == path {
				found = true
				for k, v := range body {
					if r.Body[k] != v {
						t.Errorf("%s: %s = %v, want %v", path, k, r.Body[k], v)
					}
				}
			}
		}
		if !found {
			t.Errorf("no request to %s", path)
		}
	}
	if tabID == "" {
		t.Fatal("no tab created")
	}
	if closed := m.CloseTask("cf"); len(closed) != 1 || closed[0] != "cf" {
		t.Errorf("closed %v", closed)
	}
	last := f.All()[len(f.All())-1]
	if last.Method != "DELETE" || !strings.HasPrefix(last.Path, "/tabs/tab-1?userId=gatehouse_") {
		t.Errorf("close request %+v", last)
	}
	if strings.Contains(logs.String(), "camo-secret-1") {
		t.Error("the API key reached the log")
	}
}

// TestCamofoxGates: a remote Camofox (CAMOFOX_URL not on loopback) has the
// SSRF guard on; the metadata floor and the private check run before the URL
// leaves; a redirect to a private address resets the tab; a page the eval
// moved to a refused URL withholds the result.
func TestCamofoxGates(t *testing.T) {
	f := newCamofoxFake(t)
	f.redirect["http://"+cloudPublic+"/go"] = "http://10.0.0.5/admin"
	m, _ := camofoxManager(t, f, "camofox.test", nil, LifecycleOptions{}, nil) // *.test resolves to loopback, but is not a loopback literal
	ctx := context.Background()
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://localhost:3000/", "http://192.168.1.10/"} {
		r := m.Navigate(ctx, "g", NavigateInput{URL: u})
		if r.Success || (r.Reason != reason.SSRFMetadata && r.Reason != reason.SSRFPrivate) || r.SessionKey != "g" {
			t.Errorf("%s: %+v", u, r)
		}
	}
	if n := f.navigated(); len(n) != 0 {
		t.Fatalf("refused URLs reached Camofox: %v", n)
	}
	r := m.Navigate(ctx, "g", NavigateInput{URL: "http://" + cloudPublic + "/go"})
	if r.Success || r.Reason != reason.RedirectPrivate || r.URL != "about:blank" {
		t.Errorf("redirect to private: %+v", r)
	}
	if n := f.navigated(); len(n) != 2 || n[1] != "about:blank" {
		t.Errorf("navigations %v: the tab was not reset", n)
	}
	if b := m.Bindings()["g"]; b != "" {
		t.Errorf("a blocked navigation bound the task: %q", b)
	}
	ok := m.Navigate(ctx, "g", NavigateInput{URL: "http://" + cloudPublic + "/captcha"})
	if !ok.Success || ok.BotDetectionWarning == "" {
		t.Errorf("bot-detection hint: %+v", ok)
	}
	ev := m.Console(ctx, "g", ConsoleInput{Expression: "fetch('http://10.0.0.1/')"})
	if ev.Success || ev.Reason != reason.EvalURLLiteral {
		t.Errorf("private literal: %+v", ev)
	}
	ev = m.Console(ctx, "g", ConsoleInput{Expression: "goToMetadata()"})
	if ev.Success || ev.Reason != reason.PageBlocked || len(ev.Result) != 0 {
		t.Errorf("eval moved the page to metadata: %+v", ev)
	}
	if c := m.Click(ctx, "g", RefInput{Ref: "e1"}); c.Success || c.Reason != reason.PageBlocked {
		t.Errorf("click on a refused page: %+v", c)
	}
	f.mu.Lock()
	f.noEval = true
	f.mu.Unlock()
	m.Navigate(ctx, "g", NavigateInput{URL: "http://" + cloudPublic + "/x"})
	if ev := m.Console(ctx, "g", ConsoleInput{Expression: "1+1"}); ev.Reason != reason.BackendUnsupported {
		t.Errorf("no evaluate endpoint: %+v", ev)
	}
}

// TestCamofoxIdentityPaginationAndReap: identity overrides reach the
// requests, a snapshot over Camofox's 80,000-char page is fetched whole, and
// the janitor closes an idle tab (session_expired next).
func TestCamofoxIdentityPaginationAndReap(t *testing.T) {
	f := newCamofoxFake(t)
	m, logs := camofoxManager(t, f, "localhost", func(c *config.Config) {
		c.Browser.CloudProvider, c.Browser.CloudProviderSet = "camofox", true
		c.Browser.Camofox.RewriteLoopbackURLs = true
	}, LifecycleOptions{Tick: 100 * time.Millisecond, Idle: 400 * time.Millisecond},
		map[string]string{"CAMOFOX_USER_ID": "alice", "CAMOFOX_SESSION_KEY": "shared"})
	ctx := context.Background()
	nr := m.Navigate(ctx, "p", NavigateInput{URL: "http://127.0.0.1:8080/big"})
	if !nr.Success || !nr.Truncated {
		t.Fatalf("navigate: %+v", nr)
	}
	if n := f.navigated(); len(n) != 1 || n[0] != "http://host.docker.internal:8080/big" {
		t.Errorf("loopback rewrite: %v", n)
	}
	var pages []string
	for _, r := range f.All() {
		if strings.Contains(r.Path, "/snapshot") {
			pages = append(pages, r.Path)
		}
		if r.Method == "POST" && r.Path == "/tabs" && (r.Body["userId"] != "alice" || r.Body["sessionKey"] != "shared") {
			t.Errorf("identity override: %v", r.Body)
		}
	}
	if len(pages) != 3 || !strings.Contains(pages[1], "offset=80000") {
		t.Errorf("snapshot pages %v", pages)
	}
	// The whole text was fetched: the stored copy ends with the last page.
	s := m.Snapshot(ctx, "p", SnapshotInput{})
	sm := regexp.MustCompile(`web_read path="([^"]+)"`).FindStringSubmatch(s.Snapshot)
	if !s.Success || sm == nil {
		t.Fatalf("snapshot over the threshold: %.300s", s.Snapshot)
	}
	if b, err := os.ReadFile(sm[1]); err != nil || !strings.HasSuffix(strings.TrimSpace(string(b)), "THE END") {
		t.Errorf("stored snapshot (%v) does not end with the last page", err)
	}
	waitFor(t, "the reap", 5*time.Second, func() bool { return strings.Contains(logs.String(), "Cleaning up inactive session") })
	if c := m.Click(ctx, "p", RefInput{Ref: "e1"}); c.Reason != reason.SessionExpired {
		t.Errorf("click after reap: %+v", c)
	}
	del := 0
	for _, r := range f.All() {
		if r.Method == "DELETE" {
			del++
		}
	}
	if del != 1 {
		t.Errorf("%d tab closes, want 1", del)
	}
	if nr := m.Navigate(ctx, "p", NavigateInput{URL: "http://127.0.0.1:8080/again"}); !nr.Success {
		t.Errorf("navigate after reap: %+v", nr)
	}
}

// TestCamofoxPinnedWithoutURL: selecting camofox without CAMOFOX_URL is a
// clear error, never a silent local browser.
func TestCamofoxPinnedWithoutURL(t *testing.T) {
	cfg := config.Default()
	cfg.Browser.CloudProvider, cfg.Browser.CloudProviderSet = "camofox", true
	m, warns := New(Options{Config: cfg, Home: t.TempDir(), Env: map[string]string{}})
	defer m.Close()
	if len(warns) != 1 || !strings.Contains(warns[0], "CAMOFOX_URL") {
		t.Errorf("warnings %v", warns)
	}
	r := m.Navigate(context.Background(), "t", NavigateInput{URL: "http://" + cloudPublic + "/"})
	if r.Success || r.Reason != reason.SessionCreateFailed || !strings.Contains(r.Error, "CAMOFOX_URL") || m.BrowserPID() != 0 {
		t.Errorf("%+v", r)
	}
}

// TestCamofoxDialogIsUnsupported: browser_dialog in Camofox mode runs the
// Manager's gate sequence on the task's Camofox tab and answers
// backend_unsupported (Camofox has no dialog API). Before the backends
// shared one driver interface, browser_dialog took the local path in
// Camofox mode and opened a session in a local Chromium.
func TestCamofoxDialogIsUnsupported(t *testing.T) {
	f := newCamofoxFake(t)
	m, _ := camofoxManager(t, f, "127.0.0.1", nil, LifecycleOptions{}, nil)
	ctx := context.Background()
	if nr := m.Navigate(ctx, "dlg", NavigateInput{URL: "http://localhost:3000/app"}); !nr.Success {
		t.Fatalf("navigate: %+v", nr)
	}
	d := m.Dialog(ctx, "dlg", DialogInput{Action: "accept"})
	if d.Success || d.Reason != reason.BackendUnsupported || d.SessionKey != "dlg" {
		t.Fatalf("dialog: %+v", d)
	}
	if keys := m.Keys(); len(keys) != 0 {
		t.Errorf("a local session was opened in Camofox mode: %v", keys)
	}
}
