package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud/cloudfake"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// countingResolver is hostResolver that counts the lookups of each name.
// Only the egress guards consult a Manager's resolver, so a lookup of a
// name that appears nowhere but in the CDP URL is the guard dialing it.
type countingResolver struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingResolver) LookupNetIP(ctx context.Context, nw, host string) ([]netip.Addr, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[host]++
	c.mu.Unlock()
	if host == decimalLoopback {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return hostResolver{}.LookupNetIP(ctx, nw, host)
}

func (c *countingResolver) count(host string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[host]
}

func (c *countingResolver) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

// decimalLoopback is 127.0.0.1 written as one decimal number: Chromium
// takes it for an IP address (its DevTools server refuses a Host header
// that is not one), Go's resolvers do not, so only a dial through a guard
// that asks countingResolver can connect to it.
const decimalLoopback = "2130706433"

// wsDebuggerURL asks the Chromium at root for its WebSocket debugger URL.
func wsDebuggerURL(t *testing.T, root string) string {
	t.Helper()
	resp, err := http.Get(root + "/json/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.WS == "" {
		t.Fatalf("/json/version: %v %q", err, v.WS)
	}
	return v.WS
}

// TestCDPOverrideWebSocketDialedByTheGuard: a user's Chromium on loopback,
// attached through browser.cdp_url by a host only the Manager's resolver
// answers (decimalLoopback): the session works, and the WebSocket's host
// was resolved by the egress guard — chromedp's own dialer would have asked
// the system resolver, which has no answer.
func TestCDPOverrideWebSocketDialedByTheGuard(t *testing.T) {
	_, ps := manager(t)
	root, _ := userChromium(t)
	ws := wsDebuggerURL(t, root) // ws://127.0.0.1:PORT/devtools/browser/ID
	cfg := config.Default()
	cfg.Browser.CDPURL = strings.Replace(ws, "127.0.0.1", decimalLoopback, 1)
	res := &countingResolver{}
	ap := netip.MustParseAddrPort(ps.Listener.Addr().String())
	m, warns := New(Options{Config: cfg, Home: t.TempDir(), Resolver: res, AllowAddrPorts: []netip.AddrPort{ap}})
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	defer m.Close()
	nr := m.Navigate(context.Background(), "cdp-guard", NavigateInput{URL: ps.url("allowed.test", "/form")})
	if !nr.Success || !strings.Contains(nr.Snapshot, "Sign up") {
		t.Fatalf("navigate over the CDP override: %+v", nr)
	}
	if n := res.count(decimalLoopback); n == 0 {
		t.Error("the CDP WebSocket was not dialed by the egress guard (its resolver never saw the host)")
	}
}

// TestCDPOverrideGates: a CDP URL at a metadata address is refused before
// anything is dialed or resolved; a /json/version answer or a redirect of
// the discovery that names a metadata address is refused too, and so is a
// WebSocket host that resolves to one (judged at connect time).
func TestCDPOverrideGates(t *testing.T) {
	_, ps := manager(t)
	var fakeWS string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/json/version":
			http.NotFound(w, r)
		case fakeWS == "redirect":
			http.Redirect(w, r, "http://169.254.169.254/json/version", http.StatusFound)
		default:
			json.NewEncoder(w).Encode(map[string]string{"webSocketDebuggerUrl": fakeWS})
		}
	}))
	defer fake.Close()
	fakeHost := strings.TrimPrefix(fake.URL, "http://")
	_, port, _ := strings.Cut(fakeHost, ":")
	cases := []struct {
		name, cdpURL, ws string
		lookups          bool // whether a DNS lookup may happen before the refusal
	}{
		{name: "metadata IP", cdpURL: "http://169.254.169.254:9222"},
		{name: "metadata IP, WebSocket URL", cdpURL: "ws://169.254.169.254/devtools/browser/x"},
		{name: "metadata name", cdpURL: "http://metadata.google.internal:9222"},
		{name: "metadata name, WebSocket URL", cdpURL: "ws://metadata.google.internal/devtools/browser/x"},
		{name: "discovery names a metadata IP", cdpURL: fake.URL, ws: "ws://169.254.169.254/devtools/browser/x"},
		{name: "discovery names a metadata host", cdpURL: fake.URL, ws: "ws://metadata.google.internal:" + port + "/devtools/browser/x"},
		{name: "discovery names a host resolving to metadata", cdpURL: fake.URL, ws: "ws://metadata-rebind.test:" + port + "/devtools/browser/x", lookups: true},
		{name: "discovery redirected to metadata", cdpURL: "ws://" + fakeHost, ws: "redirect"},
	}
	ap := netip.MustParseAddrPort(ps.Listener.Addr().String())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fakeWS = c.ws
			cfg := config.Default()
			cfg.Browser.CDPURL = c.cdpURL
			res := &countingResolver{}
			m, _ := New(Options{Config: cfg, Home: t.TempDir(), Resolver: res, AllowAddrPorts: []netip.AddrPort{ap}})
			defer m.Close()
			r := m.Navigate(context.Background(), "t", NavigateInput{URL: ps.url("allowed.test", "/next")})
			if r.Success || r.Reason != reason.SSRFMetadata {
				t.Fatalf("CDP URL %s: %+v", c.cdpURL, r)
			}
			if n := res.total() - res.count("allowed.test"); !c.lookups && n != 0 {
				t.Errorf("%d DNS lookups before the refusal", n)
			}
		})
	}
}

// TestCloudConnectURLIsJudged: a provider's connect URL is vendor data: one
// at a metadata address, a private address or this machine's loopback (the
// provider's real Chromium, without the test allowance) is refused with
// the gate's code before it is dialed, the provider session is released,
// and the session falls back to the local Chromium saying why.
func TestCloudConnectURLIsJudged(t *testing.T) {
	ws, _ := providerChromium(t)
	pages := newCloudPages(t)
	ap := netip.MustParseAddrPort(pages.Listener.Addr().String())
	cases := []struct {
		name, connect string
		want          reason.Code
	}{
		{"metadata IP", "ws://169.254.169.254/devtools/browser/x", reason.SSRFMetadata},
		{"metadata name", "wss://metadata.google.internal/devtools/browser/x", reason.SSRFMetadata},
		{"private IP", "ws://10.1.2.3:9222/devtools/browser/x", reason.SSRFPrivate},
		{"loopback", ws, reason.SSRFPrivate},
		{"http root on loopback", strings.Replace(strings.SplitN(ws, "/devtools/", 2)[0], "ws://", "http://", 1), reason.SSRFPrivate},
	}
	var cur atomic.Int32 // the case the fake answers
	fake := cloudfake.New(t, func(r cloudfake.Request) (int, any) {
		switch {
		case r.Method == "POST" && r.Path == "/v1/sessions":
			return 201, map[string]any{"id": "bb-x", "connectUrl": cases[cur.Load()].connect, "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
		case r.Method == "POST" && r.Path == "/v1/sessions/bb-x":
			return 200, map[string]any{"id": "bb-x", "status": "COMPLETED"}
		}
		return 404, map[string]any{}
	})
	cfg := cloudConfig("browserbase")
	cfg.Browser.AutoLocalForPrivateURLs = false // the test page is on loopback: keep it on the bare key
	env := map[string]string{"BROWSERBASE_API_KEY": "bb_k", "BROWSERBASE_PROJECT_ID": "p", "BROWSERBASE_BASE_URL": fake.URL}
	m, logs := cloudManager(t, cfg, env, LifecycleOptions{Tick: time.Hour}, ap)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur.Store(int32(i))
			released := fake.Count("POST", "/v1/sessions/bb-x")
			nr := m.Navigate(context.Background(), fmt.Sprintf("c%d", i), NavigateInput{URL: "http://fallback.test:" + pages.port + "/fb"})
			if !nr.Success || !nr.FallbackFromCloud || nr.FallbackCode != c.want || nr.Backend != "local" {
				t.Fatalf("connect URL %s: %+v\n%s", c.connect, nr.BackendInfo, logs.String())
			}
			if fake.Count("POST", "/v1/sessions/bb-x") != released+1 {
				t.Errorf("the refused provider session was not released: %+v", fake.All())
			}
		})
	}
}
