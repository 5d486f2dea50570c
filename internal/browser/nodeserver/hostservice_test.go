package nodeserver_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestNodeServicesUnreachable: no session on a node reaches the node's own
// services, even with security.allow_private_urls on the replica (the
// session's guard is then the open one): Chromium's debugging port (whose
// /json/list names every principal's tab and whose WebSocket drives it:
// breaker9 D1), the node's listener, on 127.0.0.1, localhost and 0.0.0.0,
// by navigation and by a page's own requests. A page on another loopback
// port stays reachable (the operator allowed private addresses).
func TestNodeServicesUnreachable(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	reg := node.NewRegistry(rdb)
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Config: config.Default(), Home: t.TempDir(), Listen: "127.0.0.1:0",
		Registry: reg, Resolver: testResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	_, debugPort, err := net.SplitHostPort(s.DebugAddr())
	if err != nil || debugPort == "0" {
		t.Fatalf("debugging endpoint %q: %v", s.DebugAddr(), err)
	}
	_, listenPort, _ := net.SplitHostPort(s.Addr())
	cfg := config.Default()
	cfg.Security.AllowPrivateURLs = true
	m, _ := browser.New(browser.Options{Config: cfg, Home: t.TempDir(), Resolver: testResolver{}, Nodes: &browser.NodeOptions{Registry: reg}})
	defer m.Close()
	hs := newHostServer()
	defer hs.Close()
	ctx := context.Background()

	r := m.Navigate(ctx, "svc", browser.NavigateInput{URL: hs.url("allowed.test", "/page")})
	if !r.Success || r.Backend != "node" {
		t.Fatalf("navigate to a loopback page with private URLs allowed = %+v", r)
	}
	for _, u := range []string{
		"http://127.0.0.1:" + debugPort + "/json/list",
		"http://localhost:" + debugPort + "/json/version",
		"http://0.0.0.0:" + debugPort + "/json/list",
		"http://[::ffff:127.0.0.1]:" + debugPort + "/json/list",
		"http://127.0.0.1:" + listenPort + "/v1/sessions",
	} {
		r := m.Navigate(ctx, "svc", browser.NavigateInput{URL: u})
		if r.Success || r.Reason != reason.SSRFPrivate {
			t.Errorf("navigate to the node's own service %s = success %v, reason %s, url %q; want ssrf_private (title %q snapshot %.300q)", u, r.Success, r.Reason, r.URL, r.Title, r.Snapshot)
		}
	}
	// A page's own request to the debugging port is refused by the proxy.
	sess, _ := m.Session("svc")
	before := sess.ProxyStats().Refused
	c := m.Console(ctx, "svc", browser.ConsoleInput{Expression: `fetch("http://127.0.0.1:` + debugPort + `/json/list").then(r => r.text()).catch(e => "refused")`})
	if c.Success && string(c.Result) != `"refused"` {
		t.Errorf("a page fetched the node's debugging endpoint: %s (%s %s)", c.Result, c.Reason, c.Error)
	}
	waitFor(t, 5*time.Second, "the proxy to refuse the page's request to the debugging port", func() bool {
		return sess.ProxyStats().Refused > before
	})

	// Without allow_private_urls a node session is remote: the SSRF guard
	// is on, and a loopback page is refused before anything is dialed.
	m2, _ := browser.New(browser.Options{Config: config.Default(), Home: t.TempDir(), Resolver: testResolver{}, Nodes: &browser.NodeOptions{Registry: reg}})
	defer m2.Close()
	r = m2.Navigate(ctx, "strict", browser.NavigateInput{URL: hs.url("allowed.test", "/page")})
	if r.Success || r.Reason != reason.SSRFPrivate {
		t.Errorf("navigate a node session to a loopback page with the default config = success %v reason %s; want ssrf_private", r.Success, r.Reason)
	}
}

// privateConfig is a replica's config with security.allow_private_urls on:
// a node session is remote (the SSRF guard applies) unless it is set, and
// the tests' pages are on loopback.
func privateConfig() *config.Config {
	cfg := config.Default()
	cfg.Security.AllowPrivateURLs = true
	return cfg
}
