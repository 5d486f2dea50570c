package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

var (
	once    sync.Once
	shared  *backend.Local
	sharedP *egress.ProxySession
	initErr error
)

// browser returns the one Chromium of this test binary, or skips when Chromium
// is absent and CI is unset.
func browser(t *testing.T) *backend.Local {
	t.Helper()
	once.Do(func() {
		path, err := backend.FindChromium("")
		if err != nil {
			initErr = err
			return
		}
		g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
		sharedP, err = egress.NewProxySession(egress.ProxyOptions{Name: "default", Guard: g, AllowPrivateFromPublic: true})
		if err != nil {
			initErr = err
			return
		}
		shared, initErr = backend.Launch(context.Background(), backend.Options{ExecPath: path, DefaultProxy: sharedP.URL()})
	})
	if initErr != nil {
		if os.Getenv("CI") == "" && strings.Contains(initErr.Error(), "not found") {
			t.Skipf("Chromium missing: %v", initErr)
		}
		t.Fatal(initErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	// Profile dirs of this package's browsers (and of the owner processes its
	// tests start) go under a root of this run: TestOwnerRecordAndArgvMarker
	// sweeps os.TempDir() with a 1 ns grace, which in the shared /tmp would
	// reap the live browsers of every other Gatehouse process on the machine
	// (other test binaries, a developer's own server).
	// An owner helper process (startOwner) inherits its parent's root.
	root := ""
	if os.Getenv("GATEHOUSE_OWNER_HELPER") == "" {
		var err error
		if root, err = os.MkdirTemp("", "gh-backend-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv("TMPDIR", root)
	}
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
		}
		sharedP.Close()
		if left := backend.MarkedProcesses(os.Getpid()); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "leaked Chromium processes: %v\n", left)
			code = 1
		}
		if _, err := os.Stat(shared.UserDataDir()); err == nil {
			fmt.Fprintln(os.Stderr, "user-data-dir left behind:", shared.UserDataDir())
			code = 1
		}
	}
	// Exited Chromium children are reaped (the process is their subreaper).
	deadline := time.Now().Add(3 * time.Second)
	for len(backend.Zombies()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if z := backend.Zombies(); len(z) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: unreaped Chromium zombies: %v\n", z)
		code = 1
	}
	if root != "" {
		os.RemoveAll(root)
	}
	os.Exit(code)
}

func newTab(t *testing.T, l *backend.Local) *backend.Tab {
	t.Helper()
	g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: t.Name(), Guard: g, AllowPrivateFromPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tab, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	return tab
}

func TestIsolatedWorldPersistsPerDocument(t *testing.T) {
	l := browser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<html><head><title>T</title></head><body><button id=b onclick="document.title='clicked'">Go</button><script>window.pageVar=1</script></body></html>`)
	}))
	defer srv.Close()
	tab := newTab(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := tab.Navigate(ctx, srv.URL)
	if err != nil || res.ErrorText != "" {
		t.Fatalf("navigate: %v %q", err, res.ErrorText)
	}
	if res.Title != "T" {
		t.Fatalf("title %q", res.Title)
	}
	if _, err := tab.CallIsolated(ctx, `function(){ globalThis.__x = 42; return typeof window.pageVar }`); err != nil {
		t.Fatal(err)
	}
	raw, err := tab.CallIsolated(ctx, `function(){ return [globalThis.__x, typeof window.pageVar] }`)
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	json.Unmarshal(raw, &got)
	if len(got) != 2 || got[0] != float64(42) || got[1] != "undefined" {
		t.Fatalf("isolated world state %s: want [42,\"undefined\"] (same world reused, page globals hidden)", raw)
	}
	pv, err := tab.EvalPage(ctx, "window.pageVar + 1")
	if err != nil || string(pv.Value) != "2" {
		t.Fatalf("page world eval %s %v", pv.Value, err)
	}
	raw, err = tab.CallIsolated(ctx, `function(){ const r = document.getElementById('b').getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2] }`)
	if err != nil {
		t.Fatal(err)
	}
	var xy []float64
	json.Unmarshal(raw, &xy)
	if err := tab.Click(ctx, xy[0], xy[1]); err != nil {
		t.Fatal(err)
	}
	cur, _ := tab.Current(ctx)
	if cur.Title != "clicked" {
		t.Fatalf("title after click %q", cur.Title)
	}
}

// A session's proxy port serves only its own BrowserContext: the tab given the
// session's proxy credential loads pages through it (page, sub-resources, a
// fetch and a WebSocket-free worker request), a tab of another context on the
// same port without the credential gets nothing through, and a plain client
// on the host is answered 407; the refusals are counted on that session only.
func TestProxyCredentialAttributesRequests(t *testing.T) {
	l := browser(t)
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/page":
			io.WriteString(w, `<html><head><title>P</title></head><body><img src="/img"><script>fetch("/fetch")</script></body></html>`)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	count := func(p string) int { mu.Lock(); defer mu.Unlock(); return hits[p] }
	g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
	mine, err := egress.NewProxySession(egress.ProxyOptions{Name: "mine", Guard: g, Authenticate: true, AllowPrivateFromPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	other, err := egress.NewProxySession(egress.ProxyOptions{Name: "other", Guard: g, Authenticate: true, AllowPrivateFromPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user, pass := mine.Credentials()
	if len(user) != 32 || len(pass) != 32 {
		t.Fatalf("credential %q:%q, want 128-bit hex user and password", user, pass)
	}
	tab, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: mine.URL(), ProxyUser: user, ProxyPass: pass, ProxyProbeURL: egress.ProxyAuthProbeURL})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	res, err := tab.Navigate(ctx, srv.URL+"/page")
	if err != nil || res.ErrorText != "" || res.Title != "P" {
		t.Fatalf("navigate with the credential: %+v %v", res, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (count("/img") == 0 || count("/fetch") == 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if count("/page") != 1 || count("/img") != 1 || count("/fetch") != 1 {
		t.Fatalf("hits with the credential: %v", hits)
	}
	// Chromium is challenged once (the probe at tab creation); later requests
	// carry the credential from the context's auth cache.
	if st := mine.Stats(); st.Allowed < 3 || st.Unauthenticated != 1 {
		t.Errorf("stats of the session with the credential: %+v; refused %+v", st, mine.RefusedSince(time.Time{}))
	}

	// Another BrowserContext pointed at the same port, without the credential.
	intruder, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: mine.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer intruder.Close()
	before := mine.Stats()
	ir, err := intruder.Navigate(ctx, srv.URL+"/intruder")
	if err == nil && ir.ErrorText == "" && ir.Title == "ok" {
		t.Fatalf("a context without the credential loaded a page: %+v", ir)
	}
	if count("/intruder") != 0 {
		t.Fatalf("the server saw a request of the context without the credential")
	}
	if st := mine.Stats(); st.Unauthenticated <= before.Unauthenticated || st.Allowed != before.Allowed {
		t.Errorf("refusal of the context without the credential not counted: %+v → %+v", before, st)
	}

	// A plain client on the host, with no or a wrong credential.
	pu, _ := url.Parse(mine.URL())
	before = mine.Stats()
	for _, cred := range []*url.Userinfo{nil, url.UserPassword(user, "wrong")} {
		pu.User = cred
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		resp, err := c.Get(srv.URL + "/outsider")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusProxyAuthRequired || resp.Header.Get(egress.ProxyReasonHeader) != "proxy_auth_required" {
			t.Errorf("outsider (%v): status %d reason %q, want 407 proxy_auth_required", cred, resp.StatusCode, resp.Header.Get(egress.ProxyReasonHeader))
		}
	}
	if count("/outsider") != 0 {
		t.Fatalf("the server saw an outsider's request")
	}
	if st := mine.Stats(); st.Unauthenticated != before.Unauthenticated+2 {
		t.Errorf("outsider refusals counted %+v → %+v, want +2", before, st)
	}
	if st := other.Stats(); st != (egress.ProxyStats{}) {
		t.Errorf("refusals leaked to another session: %+v", st)
	}
}

// TestFindBrowserPrefersHeadlessShell: a headless browser gets the headless
// shell when installed and nothing is configured; a configured path or
// CHROME_PATH, or a headed browser, gets FindChromium's answer.
func TestFindBrowserPrefersHeadlessShell(t *testing.T) {
	t.Setenv("CHROME_PATH", "")
	exe := t.TempDir() + "/my-chrome"
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := backend.FindBrowser(exe, false); err != nil || p != exe {
		t.Errorf("configured: %q, %v; want %q", p, err, exe)
	}
	full, ferr := backend.FindChromium("")
	if p, err := backend.FindBrowser("", true); p != full || (err == nil) != (ferr == nil) {
		t.Errorf("headed: %q, %v; want FindChromium's %q, %v", p, err, full, ferr)
	}
	_, shellErr := os.Stat(backend.DefaultHeadlessShellPath)
	p, err := backend.FindBrowser("", false)
	switch {
	case shellErr == nil && p != backend.DefaultHeadlessShellPath:
		t.Errorf("headless with the shell installed: %q, %v; want %q", p, err, backend.DefaultHeadlessShellPath)
	case shellErr != nil && p != full && !strings.HasSuffix(p, "chromium-headless-shell"):
		t.Errorf("headless without the shell at %s: %q, %v; want %q or one on PATH", backend.DefaultHeadlessShellPath, p, err, full)
	}
	t.Setenv("CHROME_PATH", exe)
	if p, err := backend.FindBrowser("", false); err != nil || p != exe {
		t.Errorf("CHROME_PATH: %q, %v; want %q", p, err, exe)
	}
}

// TestNewTabsNeverTakeEachOtherAsPopups: tabs opened at the same time (each
// priming its proxy credential, as the spare pool's makers do) record no
// popup: a target made over CDP, in another BrowserContext, has no opener and
// is never a popup of the tab being opened.
func TestNewTabsNeverTakeEachOtherAsPopups(t *testing.T) {
	l := browser(t)
	g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
	const n = 4
	tabs := make([]*backend.Tab, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for round := 0; round < 2; round++ {
		for i := 0; i < n; i++ {
			p, err := egress.NewProxySession(egress.ProxyOptions{Name: fmt.Sprint(t.Name(), i), Guard: g, Authenticate: true, AllowPrivateFromPublic: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			user, pass := p.Credentials()
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				tabs[i], errs[i] = l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), ProxyUser: user, ProxyPass: pass, ProxyProbeURL: egress.ProxyAuthProbeURL})
			}()
		}
		wg.Wait()
		for i, tab := range tabs {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if pops := tab.TakePopups(); len(pops) != 0 {
				t.Errorf("round %d: tab %d recorded %d popups it never opened: %+v", round, i, len(pops), pops)
			}
			tab.Close()
		}
	}
}
