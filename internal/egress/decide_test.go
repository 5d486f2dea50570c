package egress_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// hopSite is a named loopback server that logs every request it receives.
type hopSite struct {
	host string
	ap   netip.AddrPort
	hits *atomic.Int64
}

func (s hopSite) url(path string) string {
	return fmt.Sprintf("http://%s:%d%s", s.host, s.ap.Port(), path)
}

// chain starts three named servers: "start" redirects to next(start), "mid"
// redirects to next(mid), "end" serves a page. The guard blocks
// blocked.test by website policy and may reach exactly these servers.
func chain(t *testing.T, names [3]string, next func(from string) string) (*egress.Guard, map[string]hopSite) {
	t.Helper()
	res := newResolver()
	sites := map[string]hopSite{}
	var allow []netip.AddrPort
	for i, n := range names {
		role := [3]string{"start", "mid", "end"}[i]
		_, hits, ap := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			if role == "end" {
				fmt.Fprint(w, "final page")
				return
			}
			http.Redirect(w, r, next(role), http.StatusFound)
		})
		res.set(n, []string{"127.0.0.1"})
		sites[role] = hopSite{host: n, ap: ap, hits: hits}
		allow = append(allow, ap)
	}
	pol, warns := policy.Load(true, []string{"blocked.test"}, nil, t.TempDir())
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	return egress.New(egress.Options{Resolver: res, AllowAddrPorts: allow, Policy: pol}), sites
}

// TestRedirectThroughBlockedHostNeverDialed: a chain allowed → blocked host →
// allowed is refused at the hop, and the blocked server's log stays empty;
// so does the last server's. The error names the hop and carries the block.
func TestRedirectThroughBlockedHostNeverDialed(t *testing.T) {
	var sites map[string]hopSite
	g, sites := chain(t, [3]string{"allowed.test", "blocked.test", "also-allowed.test"}, func(from string) string {
		if from == "start" {
			return sites["mid"].url("/hop")
		}
		return sites["end"].url("/final")
	})
	resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(sites["start"].url("/"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("chain through a blocklisted host was followed")
	}
	rerr := reason.As(err)
	if rerr == nil || rerr.Code != reason.PolicyBlocked || rerr.Gate != reason.GatePolicy {
		t.Fatalf("err = %v, want policy_blocked", err)
	}
	var b *policy.Block
	if !errors.As(err, &b) || b.Host != "blocked.test" || b.Rule != "blocked.test" {
		t.Fatalf("block not carried: %+v", b)
	}
	for _, s := range []string{"redirect hop 1", sites["mid"].url("/hop"), "Blocked by website policy"} {
		if !strings.Contains(rerr.Message, s) {
			t.Errorf("message %q lacks %q", rerr.Message, s)
		}
	}
	if n := sites["mid"].hits.Load(); n != 0 {
		t.Fatalf("blocklisted server received %d requests, want 0", n)
	}
	if n := sites["end"].hits.Load(); n != 0 {
		t.Fatalf("server after the blocked hop received %d requests, want 0", n)
	}
}

// TestRedirectHopGates: every gate of the first URL applies to a hop before
// it is dialed: scheme, secret (also a JWT), SSRF on the dialed IP, policy
// as the last hop. The target server's log stays empty in each case.
func TestRedirectHopGates(t *testing.T) {
	const key = "sk-proj0123456789abcdefABCDEF"
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"
	cases := []struct {
		name   string
		target func(end hopSite) string
		want   reason.Code
	}{
		{"ends on blocked host", func(e hopSite) string { return e.url("/") }, reason.PolicyBlocked},
		{"subdomain of blocked host", func(e hopSite) string { return strings.Replace(e.url("/"), "blocked.test", "www.blocked.test", 1) }, reason.PolicyBlocked},
		{"api key in query", func(e hopSite) string { return e.url("/?api_key=" + key) }, reason.SecretInURL},
		{"encoded key", func(e hopSite) string { return e.url("/?k=" + strings.Replace(key, "-", "%2D", 1)) }, reason.SecretInURL},
		{"jwt in neutral param", func(e hopSite) string { return e.url("/?state=" + jwt) }, reason.SecretInURL},
		{"userinfo", func(e hopSite) string { return strings.Replace(e.url("/"), "://", "://bob@", 1) }, reason.CredentialsInURL},
		{"scheme", func(hopSite) string { return "ftp://files.example/x" }, reason.UnsupportedScheme},
		{"metadata", func(hopSite) string { return "http://169.254.169.254/latest/meta-data/" }, reason.SSRFMetadata},
		{"private literal", func(hopSite) string { return "http://10.0.0.1/" }, reason.SSRFPrivate},
		{"localhost name", func(hopSite) string { return "http://admin.localhost/" }, reason.SSRFPrivate},
		// Judged at connect time (DNS), named as a hop all the same.
		{"unresolvable host", func(hopSite) string { return "http://nx.unresolvable.test/" }, reason.DNSUnresolvable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sites map[string]hopSite
			endHost := "target.test"
			if c.want == reason.PolicyBlocked {
				endHost = "blocked.test"
			}
			g, sites := chain(t, [3]string{"allowed.test", "mid.test", endHost}, func(from string) string {
				if from == "start" {
					return c.target(sites["end"])
				}
				return sites["end"].url("/")
			})
			resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(sites["start"].url("/"))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				t.Fatalf("hop followed (status %d)", resp.StatusCode)
			}
			if got := reason.Of(err); got != c.want {
				t.Fatalf("reason = %q (%v), want %q", got, err, c.want)
			}
			msg := reason.As(err).Message
			if !strings.Contains(msg, "redirect hop 1") {
				t.Errorf("message does not name the hop: %s", msg)
			}
			if strings.Contains(msg, key) || strings.Contains(msg, jwt) {
				t.Errorf("message echoes the secret: %s", msg)
			}
			if n := sites["end"].hits.Load(); n != 0 {
				t.Fatalf("refused target received %d requests, want 0", n)
			}
		})
	}
}

// TestDecideFirstRequest: the client's first request passes Decide too, so a
// caller that skips the pipeline still cannot reach a blocklisted host.
func TestDecideFirstRequest(t *testing.T) {
	var sites map[string]hopSite
	g, sites := chain(t, [3]string{"a.test", "b.test", "blocked.test"}, func(string) string { return "/" })
	resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(sites["end"].url("/"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("first request to a blocklisted host was sent")
	}
	if reason.Of(err) != reason.PolicyBlocked || sites["end"].hits.Load() != 0 {
		t.Fatalf("err %v hits %d", err, sites["end"].hits.Load())
	}
	// The decision itself, as a proxy would call it.
	if _, rerr := g.Decide(context.Background(), "https://www.blocked.test:8443/", egress.Rules{}); rerr == nil || rerr.Code != reason.PolicyBlocked {
		t.Fatalf("Decide = %v, want policy_blocked", rerr)
	}
	port := sites["start"].ap.Port()
	d, rerr := g.Decide(context.Background(), fmt.Sprintf("HTTP://A.TEST:%d/x", port), egress.Rules{Resolve: true})
	if rerr != nil || d.URL.Href != fmt.Sprintf("http://a.test:%d/x", port) || len(d.Addrs) != 1 {
		t.Fatalf("Decide = %+v, %v", d, rerr)
	}
	if _, rerr := g.Decide(context.Background(), "https://a.test/?token=x", egress.Rules{SensitiveParams: true}); rerr == nil || rerr.Code != reason.SensitiveQueryParam {
		t.Fatalf("Decide with SensitiveParams = %v", rerr)
	}
}

// TestRedirectToMappedIPv6OfBlockedAddress: a blocklist rule naming an IPv4
// address also covers its IPv4-mapped IPv6 spelling. A hop to
// http://[::ffff:127.0.0.1]:port/ reaches 127.0.0.1, so with the rule
// "127.0.0.1" it is refused before it is dialed and the server behind that
// address receives nothing.
func TestRedirectToMappedIPv6OfBlockedAddress(t *testing.T) {
	_, endHits, endAP := countingServer(t, nil)
	_, startHits, startAP := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/x", endAP.Port()), http.StatusFound)
	})
	res := newResolver()
	res.set("allowed.test", []string{"127.0.0.1"})
	pol, warns := policy.Load(true, []string{"127.0.0.1"}, nil, t.TempDir())
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	g := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{startAP, endAP}, Policy: pol})
	resp, err := g.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(fmt.Sprintf("http://allowed.test:%d/", startAP.Port()))
	if err == nil {
		resp.Body.Close()
		t.Fatal("hop to the mapped IPv6 form of a blocklisted address was followed")
	}
	if rerr := reason.As(err); rerr == nil || rerr.Code != reason.PolicyBlocked {
		t.Fatalf("err = %v, want policy_blocked", err)
	}
	if n := endHits.Load(); n != 0 {
		t.Fatalf("blocklisted address received %d requests, want 0", n)
	}
	if n := startHits.Load(); n != 1 {
		t.Fatalf("first server received %d requests, want 1", n)
	}
}
