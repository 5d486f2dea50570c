// Package webtest provides loopback web sites for tests of the surfaces
// (tools, MCP server, CLI, public package): a fake resolver that maps test
// host names to 127.0.0.1, httptest servers standing in for public sites, and
// the web.Env that lets the egress guard reach exactly those servers
// (egress AllowAddrPorts), so the production SSRF rules stay on. Nothing here
// reaches the internet.
package webtest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// Resolver maps host names to addresses; unknown names fail like NXDOMAIN.
// Safe for concurrent use.
type Resolver struct {
	mu    sync.Mutex
	hosts map[string][]netip.Addr
}

// LookupNetIP implements egress.Resolver.
func (r *Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.hosts[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// Set makes host resolve to addrs.
func (r *Resolver) Set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hosts == nil {
		r.hosts = map[string][]netip.Addr{}
	}
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	r.hosts[host] = as
}

// Web is a set of loopback sites and the environment to reach them.
type Web struct {
	t     testing.TB
	Home  string
	Cfg   *config.Config
	Res   *Resolver
	allow []netip.AddrPort
}

// New returns a Web with a temporary GATEHOUSE_HOME and default config.
func New(t testing.TB) *Web {
	return &Web{t: t, Home: t.TempDir(), Cfg: config.Default(), Res: &Resolver{}}
}

// Site is one loopback server standing in for a public site.
type Site struct {
	Srv  *httptest.Server
	Host string
	Port int
}

// URL returns http://<host>:<port><path>.
func (s *Site) URL(path string) string { return "http://" + s.Host + ":" + strconv.Itoa(s.Port) + path }

// Serve starts a site named host (resolving to 127.0.0.1) served by h; it is
// closed when the test ends.
func (w *Web) Serve(host string, h http.Handler) *Site {
	srv := httptest.NewServer(h)
	w.t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	w.Res.Set(host, "127.0.0.1")
	w.allow = append(w.allow, ap)
	return &Site{Srv: srv, Host: host, Port: int(ap.Port())}
}

// Env returns the web.Env reaching the sites served so far.
func (w *Web) Env() web.Env {
	return web.Env{Home: w.Home, Config: w.Cfg, Resolver: w.Res, AllowAddrPorts: append([]netip.AddrPort(nil), w.allow...)}
}

// HTML returns a small article page with title and body (HTML).
func HTML(title, body string) string {
	return "<!doctype html><html><head><meta charset=utf-8><title>" + title + "</title></head><body><article><h1>" + title + "</h1>" + body + "</article></body></html>"
}

// Page returns a handler serving doc as text/html.
func Page(doc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(doc))
	}
}

// Hang returns a handler that never answers until the request is cancelled
// or the test's server closes.
func Hang() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
}

// LongArticle returns an HTML article of n numbered paragraphs ("Paragraph
// 7 …"), long enough to be truncated at small budgets.
func LongArticle(title string, n int) string {
	var b []byte
	for i := 1; i <= n; i++ {
		b = append(b, "<p>Paragraph "+strconv.Itoa(i)+" says something about the topic of this long page, in a full sentence.</p>"...)
	}
	return HTML(title, string(b))
}
