package nodeserver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// testResolver answers every *.test name with loopback, except
// metadata-rebind.test, which names the metadata address.
type testResolver struct{}

func (testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch {
	case host == "metadata-rebind.test":
		return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
	case strings.HasSuffix(host, ".test"), host == "localhost":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, errors.New("no such host")
}

// hostServer serves the test pages and counts requests by host, and by
// host and the page's "w" parameter (which session's page asked).
type hostServer struct {
	*httptest.Server
	port string
	mu   sync.Mutex
	hits map[string]int
}

func (h *hostServer) url(host, path string) string { return "http://" + host + ":" + h.port + path }

func (h *hostServer) count(host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[host]
}

// countFor is the requests to host made by the page /egress?w=who.
func (h *hostServer) countFor(host, who string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[host+"|"+who]
}

func newHostServer() *hostServer {
	h := &hostServer{hits: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		w8 := r.URL.Query().Get("w")
		h.mu.Lock()
		h.hits[host]++
		h.hits[host+"|"+w8]++
		h.mu.Unlock()
		switch r.URL.Path {
		case "/redir":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/egress":
			// Every request the page makes to blocked.test names the
			// page's w parameter, so two sessions' pages are told apart.
			b := "http://blocked.test:" + h.port
			q := "?w=" + url.QueryEscape(w8)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>egress</title><h1>egress page</h1>
<img src="%[1]s/img%[3]s"><link rel="stylesheet" href="%[1]s/css%[3]s"><iframe src="%[1]s/frame%[3]s"></iframe>
<script>
fetch("%[1]s/fetch%[3]s").catch(()=>{});
try { new WebSocket("ws://blocked.test:%[2]s/ws%[3]s"); } catch (e) {}
new Worker(URL.createObjectURL(new Blob(['fetch("%[1]s/worker%[3]s").catch(()=>{})'])));
navigator.sendBeacon("%[1]s/beacon%[3]s", "x");
</script>`, b, h.port, q)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>%s</title><p>page %s</p>`, host, r.URL.Path)
		}
	}))
	_, h.port, _ = net.SplitHostPort(h.Listener.Addr().String())
	return h
}

// TestNodeEgress: the browser egress checks hold for a session on a node
// as in one process: the node's proxy refuses every request kind of a page
// to a blocked host (sub-resources, fetch, WebSocket, worker, beacon), and
// a redirect to a metadata address, to a name resolving to it, or to a
// blocked host resets the tab to about:blank with the gate's code. The
// blocklist is the replica's: the node's own config has none (the session's
// policy travels with its open request).
//
// It runs twice: the session taken from one of the node's spare sessions
// (made before the replica's policy was known, bound when taken), and
// made for the open (no spares).
func TestNodeEgress(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	for _, spares := range []int{1, -1} {
		t.Run(fmt.Sprintf("spares=%d", spares), func(t *testing.T) { nodeEgress(t, rdb, spares) })
	}
}

func nodeEgress(t *testing.T, rdb redis.UniversalClient, spares int) {
	cfg := privateConfig()
	cfg.Security.WebsiteBlocklist.Enabled = true
	cfg.Security.WebsiteBlocklist.Domains = []string{"blocked.test"}
	rdb.FlushAll(context.Background())
	reg := node.NewRegistry(rdb)
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Config: config.Default(), Home: t.TempDir(), Listen: "127.0.0.1:0",
		Registry: reg, Resolver: testResolver{}, Spares: spares, MaxSpares: spares})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if spares > 0 {
		waitFor(t, 30*time.Second, "a spare session on the node", func() bool { return s.SpareStats().Ready >= 1 })
	}
	m, _ := browser.New(browser.Options{Config: cfg, Home: t.TempDir(), Resolver: testResolver{}, Nodes: &browser.NodeOptions{Registry: reg}})
	defer m.Close()
	hs := newHostServer()
	defer hs.Close()
	ctx := context.Background()

	r := m.Navigate(ctx, "egress", browser.NavigateInput{URL: hs.url("allowed.test", "/egress")})
	if !r.Success || r.Backend != "node" {
		t.Fatalf("navigate on the node = %+v", r)
	}
	if st := s.SpareStats(); (st.Hits == 1) != (spares > 0) {
		t.Fatalf("spare pool %+v after the open (spares %d): want the open served by a spare exactly when there are spares", st, spares)
	}
	sess, ok := m.Session("egress")
	if !ok {
		t.Fatal("no session")
	}
	waitFor(t, 10*time.Second, "the node's proxy to refuse the page's requests to the blocked host", func() bool {
		return sess.ProxyStats().Refused >= 6
	})
	time.Sleep(300 * time.Millisecond)
	if n := hs.count("blocked.test"); n != 0 {
		t.Errorf("the blocked host was reached %d times from a session on a node", n)
	}

	for _, c := range []struct {
		to   string
		want []reason.Code
	}{
		{"http://169.254.169.254/latest/meta-data/", []reason.Code{reason.SSRFMetadata, reason.RedirectMetadata}},
		{hs.url("metadata-rebind.test", "/x"), []reason.Code{reason.SSRFMetadata, reason.RedirectMetadata}},
		{hs.url("blocked.test", "/x"), []reason.Code{reason.PolicyBlocked}},
	} {
		r := m.Navigate(ctx, "egress", browser.NavigateInput{URL: hs.url("allowed.test", "/redir?to="+c.to)})
		if r.Success || r.URL != "about:blank" || !contains(c.want, r.Reason) {
			t.Errorf("redirect to %s on a node = success %v, url %q, reason %s; want refused (%v), tab on about:blank", c.to, r.Success, r.URL, r.Reason, c.want)
		}
		if sn := m.Snapshot(ctx, "egress", browser.SnapshotInput{}); sn.URL != "about:blank" {
			t.Errorf("after the refused redirect to %s the snapshot reads %q", c.to, sn.URL)
		}
	}
	if n := hs.count("blocked.test"); n != 0 {
		t.Errorf("the blocked host was reached %d times", n)
	}
}

func contains(cs []reason.Code, c reason.Code) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
