package egress_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

var proxyVars = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}

// TestProxyEnvIgnoredAndNamed: proxy environment variables are not used
// (the request is dialed directly, the proxy gets nothing), and while one is
// set a dns_unresolvable refusal says that Gatehouse does not use proxies
// and what to do, instead of only sending the user to debug DNS (breaker5
// D12; spec §A6.3 step 5 departure, docs/gates.md "Departures").
func TestProxyEnvIgnoredAndNamed(t *testing.T) {
	for _, k := range proxyVars {
		t.Setenv(k, "")
	}
	res := newResolver()
	g := egress.New(egress.Options{Resolver: res})
	_, err := g.Check(context.Background(), mustParse(t, "http://nx.unresolvable.test/"))
	if err == nil || err.Code != reason.DNSUnresolvable || strings.Contains(err.Message, "prox") {
		t.Fatalf("without a proxy variable: %v", err)
	}

	_, proxyHits, proxyAP := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "proxy") })
	_, siteHits, siteAP := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "site") })
	for _, k := range []string{"HTTPS_PROXY", "http_proxy", "ALL_PROXY"} {
		t.Run(k, func(t *testing.T) {
			for _, v := range proxyVars {
				t.Setenv(v, "")
			}
			t.Setenv(k, "http://"+proxyAP.String())
			_, err := g.Check(context.Background(), mustParse(t, "http://nx.unresolvable.test/"))
			if err == nil || err.Code != reason.DNSUnresolvable {
				t.Fatalf("got %v, want dns_unresolvable", err)
			}
			if !strings.Contains(err.Message, k+" is set, but Gatehouse does not use proxies") || !strings.Contains(err.Message, "allow direct DNS and outbound connections") {
				t.Errorf("message does not name the ignored proxy and the fix: %s", err.Message)
			}
			res.set("site.test", []string{"127.0.0.1"})
			d := egress.New(egress.Options{Resolver: res, AllowAddrPorts: []netip.AddrPort{siteAP}})
			resp, gerr := d.Client(egress.ClientOptions{Timeout: 5 * time.Second}).Get(fmt.Sprintf("http://site.test:%d/", siteAP.Port()))
			if gerr != nil {
				t.Fatal(gerr)
			}
			resp.Body.Close()
			if proxyHits.Load() != 0 || siteHits.Load() == 0 {
				t.Errorf("proxy hits %d, site hits %d: the request must be dialed directly", proxyHits.Load(), siteHits.Load())
			}
		})
	}
}
