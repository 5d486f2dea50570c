package nodeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestNodeSpares: a node keeps spare sessions in its free slots only; a
// spare's proxy refuses every request until an open binds a policy; an
// open is answered from a spare; a spare never used carries nothing of an
// earlier session (cookies, storage, history); a full node holds no spare
// and refuses with browser_capacity.
func TestNodeSpares(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	reg := node.NewRegistry(rdb)
	const capacity = 3
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Config: config.Default(), Home: t.TempDir(), Listen: "127.0.0.1:0",
		Registry: reg, Resolver: testResolver{}, MaxSessions: capacity, Spares: 2, MaxSpares: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	var mu sync.Mutex
	var cookies []string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "seen", Value: "yes", Path: "/"})
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>state</title><p>state</p><script>localStorage.setItem("k", "v"); sessionStorage.setItem("k", "v"); history.pushState({}, "", "#pushed")</script>`)
	}))
	defer site.Close()
	u, _ := url.Parse(site.URL)
	pageURL := "http://state.test:" + u.Port() + "/"
	waitFor(t, 30*time.Second, "two spare sessions", func() bool { return s.SpareStats().Ready == 2 })

	// Before an open binds it, a spare's proxy reaches nothing.
	for _, p := range s.SpareProxies() {
		user, pass := p.Credentials()
		pu, _ := url.Parse(p.URL())
		pu.User = url.UserPassword(user, pass)
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		resp, err := c.Get(pageURL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 || resp.Header.Get(egress.ProxyReasonHeader) != string(reason.PolicyBlocked) {
			t.Fatalf("a spare's proxy before binding: %d %q, want refused (policy_blocked)", resp.StatusCode, resp.Header.Get(egress.ProxyReasonHeader))
		}
	}
	mu.Lock()
	if len(cookies) != 0 {
		t.Fatalf("the site was reached through an unbound spare: %d requests", len(cookies))
	}
	mu.Unlock()

	cfg := config.Default()
	cfg.Security.AllowPrivateURLs = true // the site is on loopback
	// The node's own spares, taken by opens: the replica holds none
	// (TestHeldSpares covers those).
	m, _ := browser.New(browser.Options{Config: cfg, Home: t.TempDir(), Resolver: testResolver{}, Nodes: &browser.NodeOptions{Registry: reg, Spares: -1}})
	defer m.Close()
	ctx := context.Background()
	state := func(task string) []any {
		t.Helper()
		r := m.Console(ctx, task, browser.ConsoleInput{Expression: `JSON.stringify([document.cookie, localStorage.length, sessionStorage.length, history.length])`})
		if !r.Success {
			t.Fatalf("console on %s: %+v", task, r.Page)
		}
		var js string
		var out []any
		if err := json.Unmarshal(r.Result, &js); err != nil || json.Unmarshal([]byte(js), &out) != nil {
			t.Fatalf("console result %s", r.Result)
		}
		return out
	}
	// Session a (from a spare) leaves a cookie, storage and history.
	if r := m.Navigate(ctx, "a", browser.NavigateInput{URL: pageURL}); !r.Success || r.Backend != "node" {
		t.Fatalf("navigate a = %+v", r.Page)
	}
	if st := s.SpareStats(); st.Hits != 1 {
		t.Fatalf("spare pool after the first open: %+v, want it served by a spare", st)
	}
	// A new session's page reads one cookie, one key in each storage and a
	// history of 3 (the tab's first entry, the page, its pushState): the
	// same with spares off (Spares -1), measured.
	const fresh = "[seen=yes 1 1 3]"
	a := state("a")
	if fmt.Sprint(a) != fresh {
		t.Fatalf("session a's state = %v", a)
	}
	m.CloseSessions(ctx, "a")
	waitFor(t, 30*time.Second, "the spares to be refilled", func() bool { return s.SpareStats().Ready == 2 && s.Sessions() == 0 })
	// Session b, from another spare: as new as a session made for it.
	if r := m.Navigate(ctx, "b", browser.NavigateInput{URL: pageURL}); !r.Success {
		t.Fatalf("navigate b = %+v", r.Page)
	}
	if st := s.SpareStats(); st.Hits != 2 {
		t.Fatalf("spare pool after the second open: %+v, want it served by a spare", st)
	}
	mu.Lock()
	if len(cookies) != 2 || cookies[1] != "" {
		t.Fatalf("the site saw cookies %q: session b carried session a's", cookies)
	}
	mu.Unlock()
	// b's own page set its cookie and storage; nothing of a's is there:
	// the same state as a new session's.
	if b := state("b"); fmt.Sprint(b) != fresh {
		t.Fatalf("session b's state = %v, want a new session's", b)
	}

	// Capacity: the spares live in free slots only; a full node has none
	// and refuses the next session.
	for _, task := range []string{"c", "d"} {
		if r := m.Navigate(ctx, task, browser.NavigateInput{URL: pageURL}); !r.Success {
			t.Fatalf("navigate %s = %+v", task, r.Page)
		}
		if st := s.SpareStats(); st.Ready+st.Making+s.Sessions() > capacity+2 {
			t.Fatalf("spares %+v with %d sessions: over capacity", st, s.Sessions())
		}
	}
	waitFor(t, 10*time.Second, "no spare on the full node", func() bool { st := s.SpareStats(); return st.Ready == 0 && st.Making == 0 })
	if r := m.Navigate(ctx, "e", browser.NavigateInput{URL: pageURL}); r.Success || r.Reason != reason.BrowserCapacity {
		t.Fatalf("a fourth session on a node of capacity 3 = %+v, want browser_capacity", r.Page)
	}
	m.CloseSessions(ctx, "c")
	waitFor(t, 30*time.Second, "a spare in the freed slot", func() bool { return s.SpareStats().Ready == 1 })

	// A relay-tied session (no handle) from a spare: when its relay closes
	// (the replica is gone) the node closes it and disposes the context it
	// made; only the spares' contexts are left.
	m.Close() // its handle sessions live on until their index keys expire
	rc := newTestClient(t, s, strings.Repeat("ef", 16), "")
	ws, _ := rc.dial()
	waitFor(t, 30*time.Second, "a spare", func() bool { return s.SpareStats().Ready >= 1 })
	before := s.Sessions()
	st, body := rc.openWith(node.Policy{Version: node.PolicyVersion, Active: true})
	var or node.OpenResponse
	if json.Unmarshal(body, &or); st != http.StatusOK || or.Context == "" || or.Target == "" {
		t.Fatalf("a relay-tied open with a spare ready: HTTP %d %s, want the spare's context and target", st, body)
	}
	ws.Close()
	waitFor(t, 10*time.Second, "the relay's session to close", func() bool { return s.Sessions() == before })
	cdp, _ := newTestClient(t, s, strings.Repeat("cd", 16), "").dial()
	defer cdp.Close()
	var bc struct {
		IDs []string `json:"browserContextIds"`
	}
	waitFor(t, 10*time.Second, "the relay session's context to be disposed", func() bool {
		json.Unmarshal(cdpCall(t, cdp, 1, "Target.getBrowserContexts", map[string]any{}), &bc)
		for _, id := range bc.IDs {
			if id == or.Context {
				return false
			}
		}
		return true
	})
}
