package egress_test

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// proxyClient sends requests through p, ignoring the environment.
func proxyClient(t *testing.T, p *egress.ProxySession) *http.Client {
	t.Helper()
	pu, _ := url.Parse(p.URL())
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
}

func TestProxyDecidesEveryRequest(t *testing.T) {
	srv, hits, ap := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok "+r.Host) })
	res := newResolver()
	port := fmt.Sprint(ap.Port())
	res.set("allowed.test", []string{"127.0.0.1"})
	res.set("blocked.test", []string{"127.0.0.1"})
	res.set("rebind.test", []string{"10.0.0.7"})
	g := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{ap}})
	dec := egress.HostDeciderFunc(func(_, host string, _ uint16) *reason.Error {
		if host == "blocked.test" {
			return reason.New(reason.PolicyBlocked, reason.GatePolicy, "blocked by test policy")
		}
		return nil
	})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "task1", Guard: g, Decider: dec})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := proxyClient(t, p)
	_ = srv

	cases := []struct {
		name   string
		url    string
		status int
		reason reason.Code
	}{
		{"allowed host reaches the server", "http://allowed.test:" + port + "/", 200, ""},
		{"policy-blocked host refused before dialing", "http://blocked.test:" + port + "/", 403, reason.PolicyBlocked},
		{"name resolving to private space refused at dial time", "http://rebind.test:" + port + "/", 403, reason.SSRFPrivate},
		{"metadata literal refused", "http://169.254.169.254/latest/meta-data/", 403, reason.SSRFMetadata},
		{"metadata host name refused", "http://metadata.google.internal/", 403, reason.SSRFMetadata},
		{"unresolvable host fails closed", "http://nowhere.test/", 403, reason.DNSUnresolvable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := reason.Code(resp.Header.Get(egress.ProxyReasonHeader)); got != tc.reason {
				t.Fatalf("reason %q, want %q", got, tc.reason)
			}
		})
	}
	if hits.Load() != 1 {
		t.Errorf("server saw %d requests, want 1 (only the allowed one)", hits.Load())
	}
	st := p.Stats()
	if st.Allowed != 1 || st.Refused != 5 {
		t.Errorf("stats %+v, want 1 allowed, 5 refused", st)
	}
	if n := len(p.Refusals()); n != 5 {
		t.Errorf("%d refusals kept, want 5", n)
	}
}

// connect opens a CONNECT tunnel through the proxy and returns the status line
// and the connection.
func connect(t *testing.T, p *egress.ProxySession, target string) (int, net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
	}
	return resp.StatusCode, conn, br
}

func TestProxyConnectTunnels(t *testing.T) {
	_, hits, ap := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tunnel ok") })
	res := newResolver()
	res.set("allowed.test", []string{"127.0.0.1"})
	res.set("blocked.test", []string{"127.0.0.1"})
	g := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{ap}})
	dec := egress.HostDeciderFunc(func(_, host string, _ uint16) *reason.Error {
		if strings.HasSuffix(host, "blocked.test") {
			return reason.New(reason.PolicyBlocked, reason.GatePolicy, "blocked")
		}
		return nil
	})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "s", Guard: g, Decider: dec})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	port := fmt.Sprint(ap.Port())

	code, conn, br := connect(t, p, "allowed.test:"+port)
	if code != 200 {
		t.Fatalf("allowed CONNECT: status %d", code)
	}
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	conn.Close()
	if string(body) != "tunnel ok" {
		t.Fatalf("tunnel body %q", body)
	}
	for _, target := range []string{"blocked.test:" + port, "169.254.169.254:80", "10.1.2.3:443", "[::1]:" + port + "0"} {
		code, conn, _ := connect(t, p, target)
		conn.Close()
		if code != 403 {
			t.Errorf("CONNECT %s: status %d, want 403", target, code)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("server saw %d requests, want 1", hits.Load())
	}
	// Close cuts open tunnels and stops the listener.
	code, conn, _ = connect(t, p, "allowed.test:"+port)
	if code != 200 {
		t.Fatalf("second CONNECT: %d", code)
	}
	p.Close()
	conn.SetReadDeadline(timeNowPlus(2))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("tunnel still open after Close")
	}
	conn.Close()
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Error("listener still accepting after Close")
	}
}

func timeNowPlus(s int) time.Time { return time.Now().Add(time.Duration(s) * time.Second) }

// With Authenticate, the port is not enough: a request or tunnel without the
// session's credential (or with a wrong one) is answered 407, never dialed,
// and counted for that session; the probe URL answers 204 only to the
// credential; the credential is not forwarded upstream.
func TestProxyCredentialRequired(t *testing.T) {
	var sawAuth atomic.Value
	_, hits, ap := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		sawAuth.Store(r.Header.Get("Proxy-Authorization"))
		io.WriteString(w, "ok")
	})
	res := newResolver()
	res.set("allowed.test", []string{"127.0.0.1"})
	g := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{ap}})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "task1", Guard: g, Authenticate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	user, pass := p.Credentials()
	target := fmt.Sprintf("http://allowed.test:%d/", ap.Port())
	get := func(cred *url.Userinfo, u string) *http.Response {
		pu, _ := url.Parse(p.URL())
		pu.User = cred
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, cred := range []*url.Userinfo{nil, url.UserPassword(user, "x"), url.UserPassword("x", pass)} {
		for _, u := range []string{target, egress.ProxyAuthProbeURL} {
			r := get(cred, u)
			if r.StatusCode != http.StatusProxyAuthRequired || r.Header.Get(egress.ProxyReasonHeader) != string(reason.ProxyAuthRequired) ||
				!strings.HasPrefix(r.Header.Get("Proxy-Authenticate"), "Basic ") {
				t.Errorf("%v %s: %d %q, want 407 proxy_auth_required with a Basic challenge", cred, u, r.StatusCode, r.Header.Get(egress.ProxyReasonHeader))
			}
		}
	}
	// A CONNECT tunnel without the credential.
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", ap.Port(), ap.Port())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	c.Close()
	if err != nil || resp.StatusCode != http.StatusProxyAuthRequired {
		t.Fatalf("CONNECT without the credential: %v %v", resp, err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the server saw %d requests without the credential", hits.Load())
	}
	if st := p.Stats(); st.Unauthenticated != 7 || st.Allowed != 0 || st.Refused != 0 {
		t.Fatalf("stats %+v, want 7 unauthenticated, nothing else", st)
	}
	if r := get(url.UserPassword(user, pass), egress.ProxyAuthProbeURL); r.StatusCode != http.StatusNoContent {
		t.Fatalf("probe with the credential: %d, want 204", r.StatusCode)
	}
	if r := get(url.UserPassword(user, pass), target); r.StatusCode != 200 || hits.Load() != 1 {
		t.Fatalf("with the credential: %d, hits %d", r.StatusCode, hits.Load())
	}
	if a, _ := sawAuth.Load().(string); a != "" {
		t.Fatalf("the credential was forwarded upstream: %q", a)
	}
}

// TestProxyUnboundRefusesUntilBind: an Unbound session (a browser node's
// spare, issue 19) answers the auth probe but refuses every request, plain
// and CONNECT, until Bind; Bind happens once and never widens later.
func TestProxyUnboundRefusesUntilBind(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	res := newResolver()
	res.set("allowed.test", []string{"127.0.0.1"})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "spare", Authenticate: true, Unbound: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	user, pass := p.Credentials()
	target := fmt.Sprintf("http://allowed.test:%d/", ap.Port())
	get := func(u string) *http.Response {
		pu, _ := url.Parse(p.URL())
		pu.User = url.UserPassword(user, pass)
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	connect := func() int {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\nProxy-Authorization: Basic %s\r\n\r\n", ap.Port(), ap.Port(), auth)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if r := get(egress.ProxyAuthProbeURL); r.StatusCode != http.StatusNoContent {
		t.Fatalf("probe before Bind: %d, want 204 (the credential can be primed)", r.StatusCode)
	}
	if r := get(target); r.StatusCode == 200 || r.Header.Get(egress.ProxyReasonHeader) != string(reason.PolicyBlocked) {
		t.Fatalf("before Bind: %d %q, want a policy_blocked refusal", r.StatusCode, r.Header.Get(egress.ProxyReasonHeader))
	}
	if code := connect(); code == 200 {
		t.Fatal("CONNECT before Bind was tunnelled")
	}
	if hits.Load() != 0 || p.Stats().Refused != 2 {
		t.Fatalf("before Bind: %d hits, stats %+v", hits.Load(), p.Stats())
	}
	strict := egress.New(egress.Options{Resolver: res})
	open := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{ap}})
	if err := p.Bind(egress.ProxyOptions{Guard: strict}); err != nil {
		t.Fatal(err)
	}
	if err := p.Bind(egress.ProxyOptions{Guard: open, AllowPrivateFromPublic: true}); !errors.Is(err, egress.ErrBound) {
		t.Fatalf("second Bind: %v, want ErrBound", err)
	}
	if r := get(target); r.StatusCode == 200 || hits.Load() != 0 {
		t.Fatalf("after Bind with the strict guard: %d, hits %d (the second Bind widened it)", r.StatusCode, hits.Load())
	}
	// A session made with a policy is never re-bound.
	q, err := egress.NewProxySession(egress.ProxyOptions{Name: "q", Guard: strict})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Bind(egress.ProxyOptions{Guard: open}); !errors.Is(err, egress.ErrBound) {
		t.Fatalf("Bind on a bound session: %v", err)
	}
	// Bound with the open guard, the same request passes.
	p2, err := egress.NewProxySession(egress.ProxyOptions{Name: "spare2", Unbound: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if err := p2.Bind(egress.ProxyOptions{Guard: open, AllowPrivateFromPublic: true}); err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(p2.URL())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	resp, err := c.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || hits.Load() != 1 {
		t.Fatalf("after Bind with the open guard: %d, hits %d", resp.StatusCode, hits.Load())
	}
}
