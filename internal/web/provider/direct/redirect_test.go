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
