package nodeserver_test

import (
	"context"
	"encoding/json"
	"net/http"
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

// TestNodePolicyPerSession: a node judges each session with the policy its
// replica sent, not with its own config. Two replicas share one node at
// the same time: A's config blocks blocked.test, B's blocks nothing, and
// the node's own config blocks nodeonly.test. A's page reaches blocked.test
// by no request kind; B's page, on the same node at the same time,
// reaches it; B reaches nodeonly.test.
func TestNodePolicyPerSession(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	reg := node.NewRegistry(rdb)
	nodeCfg := config.Default()
	nodeCfg.Security.WebsiteBlocklist.Enabled = true
	nodeCfg.Security.WebsiteBlocklist.Domains = []string{"nodeonly.test"}
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Config: nodeCfg, Home: t.TempDir(), Listen: "127.0.0.1:0",
		Registry: reg, Resolver: testResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	cfgA := privateConfig()
	cfgA.Security.WebsiteBlocklist.Enabled = true
	cfgA.Security.WebsiteBlocklist.Domains = []string{"blocked.test"}
	mA, _ := browser.New(browser.Options{Config: cfgA, Home: t.TempDir(), Resolver: testResolver{}, Nodes: &browser.NodeOptions{Registry: reg}})
	defer mA.Close()
	mB, _ := browser.New(browser.Options{Config: privateConfig(), Home: t.TempDir(), Resolver: testResolver{}, Nodes: &browser.NodeOptions{Registry: reg}})
	defer mB.Close()
	hs := newHostServer()
	defer hs.Close()
	ctx := context.Background()

	var wg sync.WaitGroup
	res := map[string]browser.NavigateResult{}
	var mu sync.Mutex
	for who, m := range map[string]*browser.Manager{"a": mA, "b": mB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := m.Navigate(ctx, "task-"+who, browser.NavigateInput{URL: hs.url("allowed.test", "/egress?w="+who)})
			mu.Lock()
			res[who] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	for who, r := range res {
		if !r.Success || r.Backend != "node" || r.BrowserNode != s.ID() {
			t.Fatalf("navigate of %s on the node = %+v", who, r)
		}
	}
	if n := s.Sessions(); n != 2 {
		t.Fatalf("the node holds %d sessions, want both replicas' at once", n)
	}
	sa, _ := mA.Session("task-a")
	sb, _ := mB.Session("task-b")
	waitFor(t, 10*time.Second, "A's node proxy to refuse its page's requests to blocked.test", func() bool {
		return sa.ProxyStats().Refused >= 6
	})
	waitFor(t, 10*time.Second, "B's page to reach blocked.test through the same node", func() bool {
		return hs.countFor("blocked.test", "b") >= 4
	})
	time.Sleep(300 * time.Millisecond)
	if n := hs.countFor("blocked.test", "a"); n != 0 {
		t.Errorf("blocked.test was reached %d times from A's session (A's config blocks it)", n)
	}
	if st := sb.ProxyStats(); st.Refused != 0 {
		t.Errorf("B's session had %d refusals; B's config blocks nothing", st.Refused)
	}

	// The node's own blocklist plays no part.
	if r := mB.Navigate(ctx, "task-b", browser.NavigateInput{URL: hs.url("nodeonly.test", "/x")}); !r.Success {
		t.Errorf("B's navigate to a host only the node's config blocks = %+v", r.Page)
	}
	if n := hs.count("nodeonly.test"); n == 0 {
		t.Error("nodeonly.test was not reached from B's session")
	}
}

// TestNodeOpenPolicy: the node's open endpoint takes only a request with a
// valid policy (an old-shaped one, without a policy, is refused with an
// error naming the fix, never judged by the node's config), and a policy
// never widens the metadata floor: a session opened with the widest policy
// (private URLs allowed, SSRF guard off, a fake-IP range) still has every
// metadata target refused by the node's proxy, while a strict policy
// refuses the private address the wide one allows. A full node refuses the
// next open with browser_capacity and Retry-After.
func TestNodeOpenPolicy(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Listen: "127.0.0.1:0", Registry: node.NewRegistry(rdb),
		Resolver: testResolver{}, MaxSessions: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	c := newTestClient(t, s, strings.Repeat("ef", 16), "")
	ws, _ := c.dial()
	defer ws.Close()

	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"old shape (active, no policy)", `{"name":"t","active":true}`, http.StatusBadRequest, "no session policy"},
		{"no policy", `{"name":"t"}`, http.StatusBadRequest, "no session policy"},
		{"null policy", `{"name":"t","policy":null}`, http.StatusBadRequest, "no session policy"},
		{"unknown field in the policy", `{"name":"t","policy":{"version":1,"allow_metadata":true}}`, http.StatusBadRequest, "unknown field"},
		{"unknown field beside the policy", `{"name":"t","active":false,"policy":{"version":1}}`, http.StatusBadRequest, "unknown field"},
		{"newer policy version", `{"name":"t","policy":{"version":2}}`, http.StatusBadRequest, "version 2"},
		{"metadata as a fake-IP range", `{"name":"t","policy":{"version":1,"fake_ip_ranges":["169.254.0.0/16"]}}`, http.StatusBadRequest, "169.254"},
		{"uncanonical fake-IP range", `{"name":"t","policy":{"version":1,"fake_ip_ranges":["198.18.0.1/15"]}}`, http.StatusBadRequest, "canonical"},
		{"trailing data", `{"name":"t","policy":{"version":1}}{}`, http.StatusBadRequest, "trailing data"},
		{"bad glob", `{"name":"t","policy":{"version":1,"blocklist":{"enabled":true,"sources":[{"source":"config","patterns":["*.[z-a]"]}]}}}`, http.StatusBadRequest, "glob"},
	} {
		st, body := c.openRaw([]byte(tc.body))
		if st != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: HTTP %d %q, want %d naming %q", tc.name, st, body, tc.status, tc.want)
		}
	}
	if n := s.Sessions(); n != 0 {
		t.Fatalf("refused open requests left %d sessions", n)
	}

	hs := newHostServer()
	defer hs.Close()
	get := func(pol node.Policy, target string) (int, reason.Code) {
		t.Helper()
		st, body := c.openWith(pol)
		if st != http.StatusOK {
			t.Fatalf("open with %+v: HTTP %d %s", pol, st, body)
		}
		var or node.OpenResponse
		if err := json.Unmarshal(body, &or); err != nil {
			t.Fatal(err)
		}
		pu, _ := url.Parse(or.Proxy)
		pu.User = url.UserPassword(or.User, or.Pass)
		hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 10 * time.Second}
		defer hc.CloseIdleConnections()
		resp, err := hc.Get(target)
		if err != nil {
			t.Fatalf("GET %s through the node's proxy: %v", target, err)
		}
		resp.Body.Close()
		return resp.StatusCode, reason.Code(resp.Header.Get(egress.ProxyReasonHeader))
	}
	widest := node.Policy{Version: node.PolicyVersion, Active: false, AllowPrivateURLs: true, FakeIPRanges: []string{"198.18.0.0/15"}}
	for _, target := range []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://metadata.google.internal/computeMetadata/v1/",
		hs.url("metadata-rebind.test", "/x"), // resolves to 169.254.169.254
		"http://[fd00:ec2::254]/latest/meta-data/",
	} {
		if st, code := get(widest, target); st != http.StatusForbidden || code != reason.SSRFMetadata {
			t.Errorf("GET %s with the widest policy = %d %s, want 403 %s", target, st, code, reason.SSRFMetadata)
		}
	}
	if st, _ := get(widest, hs.url("allowed.test", "/x")); st != http.StatusOK {
		t.Errorf("GET of a loopback page with private URLs allowed = %d, want 200", st)
	}
	// The same policy with the SSRF guard on (the node compiles a policy
	// once; Active still picks the guard per session).
	wideActive := widest
	wideActive.Active = true
	if st, code := get(wideActive, hs.url("allowed.test", "/x")); st != http.StatusForbidden || code != reason.SSRFPrivate {
		t.Errorf("GET of a loopback page with the widest policy but the SSRF guard on = %d %s, want 403 %s", st, code, reason.SSRFPrivate)
	}
	strict := node.Policy{Version: node.PolicyVersion, Active: true}
	if st, code := get(strict, hs.url("allowed.test", "/x")); st != http.StatusForbidden || code != reason.SSRFPrivate {
		t.Errorf("GET of a loopback page with the SSRF guard active = %d %s, want 403 %s", st, code, reason.SSRFPrivate)
	}

	// A full node refuses the next session: browser_capacity, Retry-After.
	for s.Sessions() < s.Capacity() {
		if st, body := c.openWith(strict); st != http.StatusOK {
			t.Fatalf("open below capacity: HTTP %d %s", st, body)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+node.PathSessions, strings.NewReader(`{"name":"t","policy":{"version":1}}`))
	req.Header = c.header()
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Reason reason.Code }
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != node.CapacityStatus || body.Reason != reason.BrowserCapacity || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("open on a full node = HTTP %d, reason %q, Retry-After %q; want %d browser_capacity, 1", resp.StatusCode, body.Reason, resp.Header.Get("Retry-After"), node.CapacityStatus)
	}
}
