package direct_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
)

type mapResolver map[string]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestFetchRedirectThroughBlockedHost: the direct backend used on its own
// (no pipeline in front) refuses a hop to a blocklisted host before dialing
// it: the blocked server's log stays empty and the page's error names the hop.
func TestFetchRedirectThroughBlockedHost(t *testing.T) {
	var blockedHits atomic.Int64
	blocked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		blockedHits.Add(1)
		fmt.Fprint(w, story)
	}))
	t.Cleanup(blocked.Close)
	bap := netip.MustParseAddrPort(blocked.Listener.Addr().String())
	hop := fmt.Sprintf("http://ads.blocked.test:%d/x", bap.Port())
	start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, hop, http.StatusFound)
	}))
	t.Cleanup(start.Close)
	sap := netip.MustParseAddrPort(start.Listener.Addr().String())
	pol, _ := policy.Load(true, []string{"blocked.test"}, nil, t.TempDir())
	g := egress.New(egress.Options{
		Resolver:       mapResolver{"ads.blocked.test": netip.MustParseAddr("127.0.0.1"), "start.test": netip.MustParseAddr("127.0.0.1")},
		AllowAddrPorts: []netip.AddrPort{bap, sap},
		Policy:         pol,
	})
	d := direct.New(direct.Options{Guard: g})
	p := d.Fetch(context.Background(), fmt.Sprintf("http://start.test:%d/", sap.Port()))
	if reason.Of(p.Err) != reason.PolicyBlocked {
		t.Fatalf("err = %v, want policy_blocked", p.Err)
	}
	var b *policy.Block
	if !errors.As(p.Err, &b) || b.Host != "ads.blocked.test" {
		t.Fatalf("block not carried: %v", p.Err)
	}
	if !strings.Contains(reason.As(p.Err).Message, "redirect hop 1 (to "+hop+")") {
		t.Fatalf("message does not name the hop: %s", reason.As(p.Err).Message)
	}
	if n := blockedHits.Load(); n != 0 {
		t.Fatalf("blocklisted server received %d requests, want 0", n)
	}
}

// TestUnparseableLocationNamed: a Location net/http cannot parse (a
// percent-encoded host, which a browser would decode) is not followed, its
// target gets nothing, and the error says what happened instead of
// "network error".
func TestUnparseableLocationNamed(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(target.Close)
	tap := netip.MustParseAddrPort(target.Listener.Addr().String())
	start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Location"] = []string{fmt.Sprintf("http://evil%%2eblocked.test:%d/x", tap.Port())}
		w.WriteHeader(http.StatusFound)
	}))
	t.Cleanup(start.Close)
	sap := netip.MustParseAddrPort(start.Listener.Addr().String())
	g := egress.New(egress.Options{
		Resolver:       mapResolver{"start.test": netip.MustParseAddr("127.0.0.1"), "evil.blocked.test": netip.MustParseAddr("127.0.0.1")},
		AllowAddrPorts: []netip.AddrPort{tap, sap},
	})
	p := direct.New(direct.Options{Guard: g}).Fetch(context.Background(), fmt.Sprintf("http://start.test:%d/", sap.Port()))
	rerr := reason.As(p.Err)
	if rerr == nil || rerr.Code != reason.FetchFailed || !strings.Contains(rerr.Message, "redirected to a Location that cannot be parsed") {
		t.Fatalf("err = %v", p.Err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("redirect target received %d requests", n)
	}
}

// TestRedirectHopWithCredentialParamRefused: a hop whose URL carries a
// credential-named parameter (in the query, in a fragment, or nested in
// another parameter) is refused like the same URL given to web_extract
// (sensitive_query_param), before its server receives the credential.
func TestRedirectHopWithCredentialParamRefused(t *testing.T) {
	var got atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		fmt.Fprint(w, story)
	}))
	t.Cleanup(target.Close)
	tap := netip.MustParseAddrPort(target.Listener.Addr().String())
	for _, loc := range []string{
		"/cb?access_token=abc123",
		"/cb#access_token=abc123",
		"/login?next=%2Fcb%3Faccess_token%3Dabc123",
		"/cb?API-Key=abc123",
	} {
		start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+loc, http.StatusFound)
		}))
		sap := netip.MustParseAddrPort(start.Listener.Addr().String())
		g := egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{tap, sap}})
		p := direct.New(direct.Options{Guard: g}).Fetch(context.Background(), start.URL+"/")
		start.Close()
		if reason.Of(p.Err) != reason.SensitiveQueryParam {
			t.Errorf("hop to %s: err = %v, want sensitive_query_param", loc, p.Err)
			continue
		}
		if m := reason.As(p.Err).Message; !strings.Contains(m, "redirect hop 1") || strings.Contains(m, "abc123") {
			t.Errorf("hop to %s: message %q must name the hop and not echo the credential", loc, m)
		}
	}
	if n := got.Load(); n != 0 {
		t.Fatalf("the hop's server received %d requests, want 0", n)
	}
	// A hop with a neutral parameter is followed.
	start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/cb?next=%2Fdashboard&code=1", http.StatusFound)
	}))
	t.Cleanup(start.Close)
	sap := netip.MustParseAddrPort(start.Listener.Addr().String())
	g := egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{tap, sap}})
	if p := direct.New(direct.Options{Guard: g}).Fetch(context.Background(), start.URL+"/"); p.Err != nil {
		t.Fatalf("neutral hop refused: %v", p.Err)
	}
}
