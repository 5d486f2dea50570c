package egress_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// fakeResolver answers from a script: each lookup of a host pops the next answer
// set (the last one repeats). It counts lookups.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
	fail    map[string]bool
}

func newResolver() *fakeResolver {
	return &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}, fail: map[string]bool{}}
}

func (r *fakeResolver) set(host string, seq ...[]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range seq {
		var as []netip.Addr
		for _, x := range s {
			as = append(as, netip.MustParseAddr(x))
		}
		r.answers[host] = append(r.answers[host], as)
	}
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.calls[host]
	r.calls[host]++
	if r.fail[host] {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	seq := r.answers[host]
	if len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if n >= len(seq) {
		n = len(seq) - 1
	}
	return seq[n], nil
}

// countingServer is a loopback server that counts requests.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64, netip.AddrPort) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	return srv, &n, ap
}

func mustParse(t *testing.T, s string) *urlsafe.URL {
	t.Helper()
	u, err := urlsafe.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return u
}

// DNS rebinding: the pre-fetch check sees a public address, the connect-time
// lookup sees 127.0.0.1. The guard judges the dial-time answer, so the loopback
// server (which is really listening) receives zero requests.
func TestDNSRebindingDefeated(t *testing.T) {
	_, hits, ap := countingServer(t, nil)
	res := newResolver()
	res.set("rebind.test", []string{"93.184.216.34"}, []string{"127.0.0.1"})
	g := egress.New(egress.Options{Resolver: res})
	u := mustParse(t, fmt.Sprintf("http://rebind.test:%d/secret", ap.Port()))

	if _, err := g.Check(context.Background(), u); err != nil {
		t.Fatalf("first (public) answer should pass the pre-fetch check: %v", err)
	}
	resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(u.Href)
	if err == nil {
		resp.Body.Close()
		t.Fatal("request to a name that rebinds to loopback succeeded")
	}
	if got := reason.Of(err); got != reason.SSRFPrivate {
		t.Fatalf("reason = %q (%v), want ssrf_private", got, err)
	}
	if hits.Load() != 0 {
		t.Fatalf("loopback server received %d requests, want 0", hits.Load())
	}
	if res.calls["rebind.test"] != 2 {
		t.Fatalf("resolver called %d times, want 2 (check + dial)", res.calls["rebind.test"])
	}
}

// A name with one public and one private answer is refused as a whole (every
// answer is judged; the first bad one decides).
func TestAnyBadAnswerRefuses(t *testing.T) {
	res := newResolver()
	res.set("mixed.test", []string{"93.184.216.34", "10.0.0.1"})
	g := egress.New(egress.Options{Resolver: res})
	_, err := g.Check(context.Background(), mustParse(t, "http://mixed.test/"))
	if err == nil || err.Code != reason.SSRFPrivate {
		t.Fatalf("got %v, want ssrf_private", err)
	}
}

func TestDNSFailureIsItsOwnReason(t *testing.T) {
	res := newResolver()
	g := egress.New(egress.Options{Resolver: res, Gate: urlsafe.Options{AllowPrivate: true}})
	_, err := g.Check(context.Background(), mustParse(t, "https://definitely-not-a-real-host-9f3k.example/private"))
	if err == nil || err.Code != reason.DNSUnresolvable {
		t.Fatalf("got %v, want dns_unresolvable", err)
	}
	if !errors.Is(err, err.Err) || err.Err == nil {
		t.Fatal("cause not kept")
	}
}

// Redirects from an allowed server to 127.0.0.1 and to 169.254.169.254 are
// refused before any connection to them is made.
func TestRedirectToPrivateAndMetadataRefused(t *testing.T) {
	_, privHits, privAP := countingServer(t, nil)
	targets := map[string]reason.Code{
		fmt.Sprintf("http://127.0.0.1:%d/internal", privAP.Port()): reason.SSRFPrivate,
		"http://169.254.169.254/latest/meta-data/":                 reason.SSRFMetadata,
		"http://[::ffff:169.254.169.254]/latest/":                  reason.SSRFMetadata,
		"http://metadata.google.internal/computeMetadata/v1/":      reason.SSRFMetadata,
	}
	for target, want := range targets {
		t.Run(target, func(t *testing.T) {
			_, pubHits, pubAP := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target, http.StatusFound)
			})
			res := newResolver()
			res.set("public.test", []string{"127.0.0.1"})
			res.set("metadata.google.internal", []string{"169.254.169.254"})
			// The redirecting server is reachable only through an explicit allowance.
			g := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{pubAP}})
			resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(fmt.Sprintf("http://public.test:%d/start", pubAP.Port()))
			if err == nil {
				resp.Body.Close()
				t.Fatal("redirect followed")
			}
			if got := reason.Of(err); got != want {
				t.Fatalf("reason = %q (%v), want %q", got, err, want)
			}
			if pubHits.Load() != 1 {
				t.Fatalf("redirecting server hits = %d, want 1", pubHits.Load())
			}
			if privHits.Load() != 0 {
				t.Fatalf("private server hits = %d, want 0", privHits.Load())
			}
			if res.calls["metadata.google.internal"] != 0 {
				t.Fatal("metadata host name was resolved; it must be refused before DNS")
			}
		})
	}
}

func TestTooManyRedirects(t *testing.T) {
	var srvURL string
	srv, hits, ap := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srvURL+"/again", http.StatusFound)
	})
	srvURL = srv.URL
	g := egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap}})
	_, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(srv.URL)
	if reason.Of(err) != reason.TooManyRedirects {
		t.Fatalf("got %v, want too_many_redirects", err)
	}
	if hits.Load() != 11 { // the first request and 10 followed hops
		t.Fatalf("hits = %d, want 11", hits.Load())
	}
}

// Without the allowance, a loopback server is refused at dial time even when the
// URL is an IP literal and the caller skipped Check.
func TestDialRefusesLoopbackWithoutAllowance(t *testing.T) {
	srv, hits, _ := countingServer(t, nil)
	g := egress.New(egress.Options{})
	_, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(srv.URL)
	if reason.Of(err) != reason.SSRFPrivate || hits.Load() != 0 {
		t.Fatalf("err=%v hits=%d", err, hits.Load())
	}
	// An allowance for another port does not open this one.
	other := netip.MustParseAddrPort("127.0.0.1:1")
	g = egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{other}})
	_, err = g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(srv.URL)
	if reason.Of(err) != reason.SSRFPrivate || hits.Load() != 0 {
		t.Fatalf("err=%v hits=%d", err, hits.Load())
	}
}

// Proxy environment variables never reroute the guard's client.
func TestProxyEnvIgnored(t *testing.T) {
	_, proxyHits, proxyAP := countingServer(t, nil)
	srv, hits, ap := countingServer(t, nil)
	t.Setenv("HTTP_PROXY", "http://"+proxyAP.String())
	t.Setenv("http_proxy", "http://"+proxyAP.String())
	g := egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap}})
	resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" || hits.Load() != 1 || proxyHits.Load() != 0 {
		t.Fatalf("body=%q hits=%d proxyHits=%d", b, hits.Load(), proxyHits.Load())
	}
}

func TestUnixNetworkRefused(t *testing.T) {
	g := egress.New(egress.Options{})
	_, err := g.DialContext(context.Background(), "unix", "/tmp/x.sock")
	if err == nil {
		t.Fatal("unix dial allowed")
	}
}

// Metadata addresses are refused even with allow_private_urls and an explicit allowance.
func TestMetadataNeverAllowed(t *testing.T) {
	g := egress.New(egress.Options{
		Gate:           urlsafe.Options{AllowPrivate: true},
		AllowAddrPorts: []netip.AddrPort{netip.MustParseAddrPort("169.254.169.254:80")},
	})
	_, err := g.Check(context.Background(), mustParse(t, "http://169.254.169.254/"))
	if err == nil || err.Code != reason.SSRFMetadata {
		t.Fatalf("got %v", err)
	}
	_, derr := g.DialContext(context.Background(), "tcp", "169.254.169.254:80")
	if reason.Of(derr) != reason.SSRFMetadata {
		t.Fatalf("dial got %v", derr)
	}
}

// A redirect hop with userinfo is refused (it would become an Authorization
// header), and a hop's host is dialed in its canonical form.
func TestRedirectHopCredentialsAndCanonicalHost(t *testing.T) {
	_, targetHits, targetAP := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("credentials reached the target")
		}
		fmt.Fprint(w, "landed")
	})
	for _, tc := range []struct {
		location string
		want     reason.Code
	}{
		{fmt.Sprintf("http://u:pw@127.0.0.1:%d/echo", targetAP.Port()), reason.CredentialsInURL},
		{fmt.Sprintf("http://u@127.0.0.1:%d/echo", targetAP.Port()), reason.CredentialsInURL},
		{fmt.Sprintf("http://0x7f000001:%d/echo", targetAP.Port()), ""},
	} {
		_, _, hopAP := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, tc.location, http.StatusFound)
		})
		res := newResolver() // knows no names: a hex host must never reach DNS
		g := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{hopAP, targetAP}})
		resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get("http://" + hopAP.String() + "/go")
		if tc.want != "" {
			if reason.Of(err) != tc.want {
				t.Errorf("%s: got %v, want %s", tc.location, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.location, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "landed" || resp.Request.URL.Host != "127.0.0.1:"+fmt.Sprint(targetAP.Port()) {
			t.Errorf("%s: body %q final %s", tc.location, b, resp.Request.URL)
		}
	}
	if targetHits.Load() != 1 {
		t.Errorf("target hits = %d, want 1 (only the canonical-host hop)", targetHits.Load())
	}
}

// The trailing dot of a host name is dropped before DNS at dial time too, so
// the host judged by Check is the host resolved and dialed.
func TestTrailingDotResolvedWithoutDot(t *testing.T) {
	_, hits, ap := countingServer(t, nil)
	res := newResolver()
	res.set("trail.test", []string{"127.0.0.1"})
	g := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{ap}})
	u := mustParse(t, fmt.Sprintf("http://trail.test.:%d/", ap.Port()))
	if _, err := g.Check(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(u.Href)
	if err != nil {
		t.Fatalf("fetch %s: %v", u.Href, err)
	}
	resp.Body.Close()
	if hits.Load() != 1 || res.calls["trail.test."] != 0 {
		t.Fatalf("hits %d, lookups of the dotted name %d", hits.Load(), res.calls["trail.test."])
	}
}
