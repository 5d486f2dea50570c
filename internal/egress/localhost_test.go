package egress_test

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// TestLocalhostNamesNeverResolved: *.localhost and localhost. are loopback
// by definition (RFC 6761 §6.3). They are refused as ssrf_private, not
// dns_unresolvable, without a DNS query; with private URLs allowed they are
// dialed on loopback, still without DNS (a resolver could answer anything).
func TestLocalhostNamesNeverResolved(t *testing.T) {
	res := newResolver()
	res.set("app.localhost", []string{"93.184.216.34"}) // a lying resolver must not be asked
	g := egress.New(egress.Options{Resolver: res})
	for _, raw := range []string{"http://app.localhost/", "http://localhost./", "http://x.y.LOCALHOST:8080/"} {
		_, err := g.Check(context.Background(), mustParse(t, raw))
		if err == nil || err.Code != reason.SSRFPrivate {
			t.Errorf("Check(%s) = %v, want ssrf_private", raw, err)
		}
	}
	_, hits, ap := countingServer(t, nil)
	open := egress.New(egress.Options{Resolver: res, Gate: urlsafe.Options{AllowPrivate: true}})
	u := mustParse(t, fmt.Sprintf("http://app.localhost:%d/", ap.Port()))
	addrs, err := open.Check(context.Background(), u)
	if err != nil || len(addrs) == 0 || !addrs[0].IsLoopback() {
		t.Fatalf("Check with allow_private = %v, %v; want loopback answers", addrs, err)
	}
	resp, gerr := open.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(u.Href)
	if gerr != nil {
		t.Fatalf("GET %s: %v", u.Href, gerr)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("loopback server got %d requests, want 1", hits.Load())
	}
	if n := res.calls["app.localhost"]; n != 0 {
		t.Fatalf("resolver asked %d times about a localhost name, want 0", n)
	}
	// A test allowance for the loopback AddrPort lifts the refusal too.
	allow := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{ap}})
	if _, err := allow.Check(context.Background(), u); err != nil {
		t.Fatalf("allowance: %v", err)
	}
}
