package web_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// resolver maps test host names to addresses; unknown names fail like NXDOMAIN.
type resolver struct {
	mu    sync.Mutex
	hosts map[string][]netip.Addr
	calls atomic.Int64
	// hang, when set, makes the lookup of each host it reports block until
	// the lookup's context ends (a name server that never answers).
	hang    func(host string) bool
	lookups map[string]int // per host
}

func (r *resolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	r.mu.Lock()
	if r.lookups == nil {
		r.lookups = map[string]int{}
	}
	r.lookups[host]++
	hang := r.hang != nil && r.hang(host)
	r.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.hosts[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// lookupsOf is the number of lookups of host so far.
func (r *resolver) lookupsOf(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

func (r *resolver) set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	r.hosts[host] = as
}

// site is a loopback HTTP server standing in for a public web site. The guard
// reaches it through an explicit AddrPort allowance; its host name resolves to
// 127.0.0.1 through the injected resolver. It counts requests.
type site struct {
	srv  *httptest.Server
	hits atomic.Int64
	ap   netip.AddrPort
	host string
}

// URL returns http://<host>:<port><path>.
func (s *site) URL(path string) string {
	return "http://" + s.host + ":" + itoa(int(s.ap.Port())) + path
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

type harness struct {
	t     testing.TB
	home  string
	cfg   *config.Config
	res   *resolver
	sites []*site
	now   time.Time
	svc   *web.Service
	// dotenv, endpoints and vendors configure vendor backends (search tests).
	dotenv    map[string]string
	endpoints map[string]string
	vendors   []netip.AddrPort
	logger    *slog.Logger
	debug     bool
	// state is the shared state (GATEHOUSE_REDIS_URL); nil: embedded default.
	state *state.Redis
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{t: t, home: t.TempDir(), cfg: config.Default(), res: &resolver{hosts: map[string][]netip.Addr{}}, now: time.Now().Truncate(time.Second)}
	return h
}

// serve starts a site named host. Call before open.
func (h *harness) serve(host string, handler http.HandlerFunc) *site {
	h.t.Helper()
	s := &site{host: host}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		handler(w, r)
	}))
	h.t.Cleanup(s.srv.Close)
	s.ap = netip.MustParseAddrPort(s.srv.Listener.Addr().String())
	h.res.set(host, "127.0.0.1")
	h.sites = append(h.sites, s)
	return s
}

// open builds the Service (after sites and config are set up).
func (h *harness) open() *web.Service {
	h.t.Helper()
	var allow []netip.AddrPort
	for _, s := range h.sites {
		allow = append(allow, s.ap)
	}
	allow = append(allow, h.vendors...)
	svc, warns := web.Open(web.Env{
		Home: h.home, Config: h.cfg, Resolver: h.res, AllowAddrPorts: allow,
		Now:    func() time.Time { return h.now },
		DotEnv: h.dotenv, VendorEndpoints: h.endpoints, SessionID: "test-session", Logger: h.logger,
		Debug: h.debug, State: h.state,
	})
	for _, w := range warns {
		h.t.Logf("warning: %s", w)
	}
	h.svc = svc
	return svc
}

func (h *harness) extract(urls ...any) *web.ExtractResponse {
	h.t.Helper()
	return h.svc.Extract(context.Background(), web.ExtractRequest{URLs: urls})
}

func html(title, body string) string {
	return "<!doctype html><html><head><meta charset=utf-8><title>" + title + "</title></head><body><article><h1>" + title + "</h1>" + body + "</article></body></html>"
}

func pageHandler(doc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(doc))
	}
}

// vendor starts a fake vendor API on loopback and registers it as the
// endpoint of name (e.g. "brave-free", "firecrawl/keyless"); it returns the
// server. Call before open.
func (h *harness) vendor(name string, handler http.HandlerFunc) *httptest.Server {
	h.t.Helper()
	srv := httptest.NewServer(handler)
	h.t.Cleanup(srv.Close)
	h.vendors = append(h.vendors, netip.MustParseAddrPort(srv.Listener.Addr().String()))
	if h.endpoints == nil {
		h.endpoints = map[string]string{}
	}
	h.endpoints[name] = srv.URL
	return srv
}
