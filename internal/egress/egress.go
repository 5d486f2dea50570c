// Package egress is the one place in Gatehouse that opens network connections on a
// user's behalf. Every HTTP client the project makes comes from a Guard, which
//
//   - resolves host names itself (through an injectable Resolver) and judges EVERY
//     answer with urlsafe before connecting (fail closed: a DNS error is a refusal
//     with reason dns_unresolvable, an answer that is not an IP is dns_bad_answer);
//   - dials the vetted IP, never the name, and asserts in Dialer.ControlContext that
//     the socket really connects to a vetted IP (so DNS rebinding between the check
//     and the connect cannot reach a private address: the dial-time answer is what is
//     judged and what is dialed);
//   - runs Decide (secrets, scheme, SSRF, website policy) on the first request
//     and on every redirect hop (at most 10) before its connection is opened;
//   - never consults HTTP_PROXY/HTTPS_PROXY/ALL_PROXY/NO_PROXY (Transport.Proxy is
//     nil; a departure from spec §A6.3 step 5, see proxyHint, which a
//     dns_unresolvable refusal carries while such a variable is set) and
//     refuses non-TCP networks (no Unix sockets).
//
// String checks made before a fetch (urlsafe.CheckStatic) exist to refuse early with a
// clear reason; the dial-time judgement is the boundary (DESIGN.md §1).
package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Defaults for Options fields left zero.
const (
	DefaultConnectTimeout = 10 * time.Second // per dial attempt
	DefaultMaxRedirects   = 10               // hops followed before too_many_redirects
	MaxDialCandidates     = 8                // distinct vetted IPs tried per dial (spec §A6.8)
)

// Resolver looks up the IP addresses of a host. *net.Resolver satisfies it.
// network is "ip", "ip4" or "ip6". Implementations must honour ctx.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configures a Guard. The zero value is the safe production default:
// private addresses refused, system resolver, no allowances.
type Options struct {
	// Gate holds the classification toggles (security.allow_private_urls,
	// security.fake_ip_ranges). The metadata floor ignores every toggle.
	Gate urlsafe.Options

	// Resolver answers DNS lookups; nil means net.DefaultResolver.
	Resolver Resolver

	// AllowAddrPorts lets connections to exactly these IP:port pairs through even
	// though the IP is private (never a metadata address). It exists so tests can
	// reach an httptest server on loopback without turning on AllowPrivate; it is
	// set from Go code only, never from config or the environment.
	AllowAddrPorts []netip.AddrPort

	// ConnectTimeout bounds each TCP connect attempt; 0 means DefaultConnectTimeout.
	ConnectTimeout time.Duration

	// MaxRedirects is the number of redirect hops followed; 0 means DefaultMaxRedirects.
	MaxRedirects int

	// Policy is the website blocklist (security.website_blocklist, spec §A8)
	// that Decide applies to every request and redirect hop before it is
	// dialed; nil blocks nothing.
	Policy *policy.Policy

	// HostService, when set, reports whether an address is one of this
	// host's own services that no request of the guard may reach, whatever
	// Gate and AllowAddrPorts allow (a browser node's Chromium debugging
	// port, its listener and its session proxies: a page that reached the
	// debugging port would drive every tab of the node). It is asked for
	// every resolved address, unmapped and without zone, before any other
	// check; true refuses with ssrf_private. Set from Go code only.
	HostService func(netip.AddrPort) bool
}

// Guard checks URLs and dials vetted addresses. It is safe for concurrent use.
type Guard struct {
	opts     Options
	resolver Resolver
	origins  []origin // see WithOrigin
}

// New returns a Guard for o. The Options value is copied.
func New(o Options) *Guard {
	o.AllowAddrPorts = slices.Clone(o.AllowAddrPorts)
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	g := &Guard{opts: o, resolver: o.Resolver}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	return g
}

// Options returns a copy of the Guard's options.
func (g *Guard) Options() Options { return g.opts }

// Allowed reports whether ap is covered by Options.AllowAddrPorts (the explicit
// allowance for test servers). Callers treat such an address like a public one
// (e.g. for caching).
func (g *Guard) Allowed(ap netip.AddrPort) bool { return g.allowed(ap.Addr(), ap.Port()) }

// judge is urlsafe's verdict on one address, with AllowAddrPorts applied.
func (g *Guard) judge(scheme, host string, a netip.Addr, port uint16) *reason.Error {
	if g.opts.HostService != nil && a.IsValid() && g.opts.HostService(netip.AddrPortFrom(a.Unmap().WithZone(""), port)) {
		return reason.Newf(reason.SSRFPrivate, reason.GateSSRF,
			"Blocked: %s:%d is a service of the browser node itself (its debugging port, listener or a session proxy), which no page may reach whatever the policy allows; browse another address.", a.Unmap(), port)
	}
	if rerr := g.opts.Gate.JudgeAddr(scheme, host, a); rerr != nil && !g.excused(rerr, a, port) && !g.originExcused(rerr, host, port) {
		return rerr
	}
	return nil
}

// excused reports whether an explicit allowance lifts refusal rerr for a:port.
// Only ssrf_private can be lifted; metadata never.
func (g *Guard) excused(rerr *reason.Error, a netip.Addr, port uint16) bool {
	return rerr.Code == reason.SSRFPrivate && g.allowed(a, port)
}

func (g *Guard) allowed(a netip.Addr, port uint16) bool {
	if !a.IsValid() {
		return false
	}
	ap := netip.AddrPortFrom(a.Unmap().WithZone(""), port)
	for _, x := range g.opts.AllowAddrPorts {
		if netip.AddrPortFrom(x.Addr().Unmap(), x.Port()) == ap {
			return true
		}
	}
	return false
}

// PortOf returns the port u connects to (explicit, else 443 for https, 80 otherwise).
func PortOf(u *urlsafe.URL) uint16 { return portOf(u) }

func portOf(u *urlsafe.URL) uint16 {
	if u.Port != "" {
		p, _ := strconv.ParseUint(u.Port, 10, 16)
		return uint16(p)
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// CheckStatic runs every check possible without DNS (scheme, host, metadata host
// name, IP-literal classification), honouring AllowAddrPorts for literal IPs.
// It returns nil or a *reason.Error (gate scheme, parse or ssrf).
func (g *Guard) CheckStatic(u *urlsafe.URL) *reason.Error {
	if g.opts.HostService != nil {
		addrs := []netip.Addr{u.Addr}
		if !u.Addr.IsValid() && urlsafe.IsLocalhostName(u.Host) {
			addrs = urlsafe.LocalhostAddrs
		}
		for _, a := range addrs {
			if rerr := g.judge(u.Scheme, u.Host, a, portOf(u)); rerr != nil && a.IsValid() && g.opts.HostService(netip.AddrPortFrom(a.Unmap().WithZone(""), portOf(u))) {
				return rerr
			}
		}
	}
	err := g.opts.Gate.CheckStatic(u)
	if err == nil {
		return nil
	}
	if g.originExcused(err, u.Host, portOf(u)) {
		return nil
	}
	if u.Addr.IsValid() && g.excused(err, u.Addr, portOf(u)) {
		return nil
	}
	if !u.Addr.IsValid() && urlsafe.IsLocalhostName(u.Host) {
		for _, a := range urlsafe.LocalhostAddrs {
			if g.excused(err, a, portOf(u)) {
				return nil
			}
		}
	}
	return err
}

// Check is the full SSRF gate for one URL: CheckStatic, then DNS resolution of a
// host name and judgement of every answer. It returns the vetted addresses (for an
// IP literal, the literal itself) or a *reason.Error:
// unsupported_scheme, invalid_url, ssrf_metadata, ssrf_private, dns_unresolvable
// (interrupted when ctx ends during the lookup). A Check that passes does not pin
// the answer: the connection made later is judged again at dial time (DNS
// rebinding).
func (g *Guard) Check(ctx context.Context, u *urlsafe.URL) ([]netip.Addr, *reason.Error) {
	if err := g.CheckStatic(u); err != nil {
		return nil, err
	}
	if u.Addr.IsValid() {
		return []netip.Addr{u.Addr}, nil
	}
	return g.resolve(ctx, u.Scheme, u.Host, portOf(u))
}

// resolve looks host up and judges every answer; the first bad answer refuses the host.
//
// A localhost name (urlsafe.IsLocalhostName) is never sent to the resolver:
// its answers are the loopback addresses (RFC 6761 §6.3, as browsers do),
// keeping those that pass (the first refusal is returned when none does).
func (g *Guard) resolve(ctx context.Context, scheme, host string, port uint16) ([]netip.Addr, *reason.Error) {
	if urlsafe.IsLocalhostName(host) {
		var ok []netip.Addr
		var first *reason.Error
		for _, a := range urlsafe.LocalhostAddrs {
			if rerr := g.judge(scheme, host, a, port); rerr != nil {
				if first == nil {
					first = rerr
				}
				continue
			}
			ok = append(ok, a)
		}
		if len(ok) == 0 {
			return nil, first
		}
		return ok, nil
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		if err == nil {
			err = errors.New("no addresses")
		}
		if ctx.Err() != nil {
			return nil, reason.Wrap(reason.Interrupted, reason.GateSSRF,
				fmt.Sprintf("DNS lookup of %s was cancelled.", host), ctx.Err())
		}
		return nil, reason.Wrap(reason.DNSUnresolvable, reason.GateSSRF,
			fmt.Sprintf("Blocked: the host %s could not be resolved (DNS lookup failed), so it cannot be checked for SSRF safety. Check the spelling of the host name and this machine's DNS/network access.", host)+proxyHint(), err)
	}
	for _, a := range addrs {
		if rerr := g.judge(scheme, host, a, port); rerr != nil {
			return nil, rerr
		}
	}
	return addrs, nil
}

type ctxKey int

const schemeKey ctxKey = 1

// WithScheme returns ctx carrying the URL scheme of the request being dialed; the
// trusted-host rule of spec §A6.1 applies only to https. Client sets it for you.
func WithScheme(ctx context.Context, scheme string) context.Context {
	return context.WithValue(ctx, schemeKey, scheme)
}

func schemeFrom(ctx context.Context) string {
	s, _ := ctx.Value(schemeKey).(string)
	return s
}

// DialContext is the guarded dial. addr is "host:port"; network must be tcp, tcp4
// or tcp6. A host name is resolved now and every answer judged; then up to
// MaxDialCandidates vetted IPs are dialed in order until one connects. The socket
// is connected to the vetted IP, never the name; ControlContext asserts it.
// Errors are *reason.Error (ssrf_private, ssrf_metadata, dns_unresolvable,
// dns_bad_answer, fetch_failed, fetch_timeout) wrapping the cause.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return g.dial(ctx, network, addr, nil)
}

// dial is DialContext with an extra judgement of every candidate IP (nil:
// none), run after the guard's own: the first refusal refuses the dial
// (fail closed, as for the guard's own judgement). The browser's egress
// proxy passes its Private Network Access check (pna.go).
func (g *Guard) dial(ctx context.Context, network, addr string, extra func(host string, a netip.Addr, port uint16) *reason.Error) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, reason.New(reason.UnsupportedScheme, reason.GateSSRF,
			fmt.Sprintf("Blocked: network %q is not allowed; Gatehouse only makes TCP connections.", network))
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, reason.Wrap(reason.InvalidURL, reason.GateParse, "Blocked: malformed dial address.", err)
	}
	p, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, reason.Wrap(reason.InvalidURL, reason.GateParse, "Blocked: malformed port.", err)
	}
	port := uint16(p)
	// Hostnames are judged and resolved without their trailing dot (the form
	// urlsafe canonicalises to); "localhost." and "localhost" are one host.
	if h := strings.TrimSuffix(host, "."); h != "" {
		host = h
	}
	scheme := schemeFrom(ctx)
	var candidates []netip.Addr
	if a, perr := netip.ParseAddr(host); perr == nil {
		if rerr := g.judge(scheme, host, a, port); rerr != nil {
			return nil, rerr
		}
		candidates = []netip.Addr{a}
	} else {
		if urlsafe.IsMetadataHost(host) {
			return nil, reason.New(reason.SSRFMetadata, reason.GateSSRF,
				"Blocked: URL targets a cloud metadata endpoint. Metadata endpoints are never reachable through Gatehouse.")
		}
		var rerr *reason.Error
		candidates, rerr = g.resolve(ctx, scheme, host, port)
		if rerr != nil {
			return nil, rerr
		}
	}
	candidates = dedupe(candidates)
	if len(candidates) > MaxDialCandidates {
		candidates = candidates[:MaxDialCandidates]
	}
	if extra != nil {
		for _, a := range candidates {
			if rerr := extra(host, a, port); rerr != nil {
				return nil, rerr
			}
		}
	}
	vetted := make(map[netip.Addr]bool, len(candidates))
	for _, a := range candidates {
		vetted[a.Unmap().WithZone("")] = true
	}
	d := &net.Dialer{
		Timeout: g.opts.ConnectTimeout,
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !vetted[ap.Addr().Unmap().WithZone("")] || ap.Port() != port {
				return reason.New(reason.SSRFPrivate, reason.GateSSRF,
					"Blocked: connection target changed after the SSRF check.")
			}
			return nil
		},
	}
	var lastErr error
	for _, a := range candidates {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, port).String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, dialFailure(host, lastErr)
}

func dialFailure(host string, err error) error {
	if rerr := reason.As(err); rerr != nil {
		return rerr
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return reason.Wrap(reason.FetchTimeout, "", fmt.Sprintf("Connecting to %s timed out. The site may be down or slow; try again later.", host), err)
	}
	if errors.Is(err, context.Canceled) {
		return reason.Wrap(reason.Interrupted, "", fmt.Sprintf("Connecting to %s was cancelled.", host), err)
	}
	return reason.Wrap(reason.FetchFailed, "", fmt.Sprintf("Could not connect to %s (connection refused or unreachable).", host), err)
}

func dedupe(in []netip.Addr) []netip.Addr {
	seen := make(map[netip.Addr]bool, len(in))
	out := in[:0:0]
	for _, a := range in {
		k := a.WithZone("")
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// ClientOptions tunes an HTTP client made by Guard.Client.
type ClientOptions struct {
	// Timeout is the total time limit for one request including redirects and
	// reading the body; 0 means no limit beyond the caller's context.
	Timeout time.Duration
	// TLSHandshakeTimeout; 0 means 10 s.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for response headers after the request
	// is written; 0 means the total Timeout applies alone.
	ResponseHeaderTimeout time.Duration
	// TLSConfig for tests that talk to an httptest TLS server; nil means defaults.
	TLSConfig *tls.Config
	// SensitiveParams also refuses a redirect hop whose URL carries a
	// credential-named parameter (sensitive_query_param, spec §A6.7; nested
	// ones included), as web_extract refuses one in the URLs it is given: a
	// hop must pass the same gates as the first URL, so a page cannot make
	// the fetcher deliver ?access_token=… to a server. The direct extract
	// backend sets it; vendor API clients do not (their first request is
	// built by us).
	SensitiveParams bool
}

// Client returns an *http.Client whose every connection goes through
// DialContext, which ignores proxy environment variables (Transport.Proxy is nil).
// Every request it sends passes Decide first: the first one in the transport,
// each redirect hop in CheckRedirect, which also refuses a hop carrying any
// userinfo and a chain longer than MaxRedirects (too_many_redirects), and hands
// the transport the canonical URL that was judged. So a hop to a blocklisted,
// private or secret-carrying URL is refused before anything is dialed. A refused
// hop's error names the hop number and its (redacted) URL and keeps the hop's
// reason code; a policy refusal wraps the *policy.Block. A host name is judged
// again at dial time (DNS rebinding). Errors returned by Do wrap a *reason.Error
// (use reason.As).
func (g *Guard) Client(co ClientOptions) *http.Client {
	hs := co.TLSHandshakeTimeout
	if hs <= 0 {
		hs = 10 * time.Second
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    hs,
		ResponseHeaderTimeout:  co.ResponseHeaderTimeout,
		MaxIdleConns:           32,
		IdleConnTimeout:        60 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
		TLSClientConfig:        co.TLSConfig,
	}
	return &http.Client{
		Transport: schemeTransport{rt: tr, g: g},
		Timeout:   co.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return g.checkRedirect(req, via, co.SensitiveParams)
		},
	}
}

// schemeTransport runs Decide on a first request (a redirect hop was decided
// in CheckRedirect) and records the request scheme in the dial context.
type schemeTransport struct {
	rt http.RoundTripper
	g  *Guard
}

func (s schemeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Response == nil { // not a redirect hop (net/http sets Response on those)
		d, rerr := s.g.Decide(r.Context(), r.URL.String(), Rules{})
		if rerr != nil {
			if r.Body != nil {
				r.Body.Close()
			}
			return nil, rerr
		}
		if d.URL.Href != r.URL.String() {
			canon, err := url.Parse(d.URL.Href)
			if err != nil {
				return nil, reason.Wrap(reason.InvalidURL, reason.GateParse, "Blocked: the URL could not be canonicalised.", err)
			}
			r = r.Clone(r.Context())
			canon.User = r.URL.User
			r.URL, r.Host = canon, ""
		}
	}
	resp, err := s.rt.RoundTrip(r.WithContext(WithScheme(r.Context(), r.URL.Scheme)))
	if err == nil {
		escapeLocation(r.URL, resp)
	}
	if err != nil && r.Response != nil {
		// A redirect hop refused at connect time (its host does not
		// resolve, or resolves to a refused address) names the hop like
		// one refused in CheckRedirect, instead of reading as a failure of
		// the URL the caller gave.
		if rerr := reason.As(err); rerr != nil && (rerr.Gate == reason.GateSSRF || rerr.Code == reason.DNSUnresolvable || rerr.Code == reason.DNSBadAnswer) {
			n := 0
			for p := r; p != nil && p.Response != nil; p = p.Response.Request {
				n++
			}
			return nil, hopError(n, r.URL.String(), rerr)
		}
	}
	return resp, err
}

// escapeLocation rewrites a redirect's Location header that net/url cannot
// parse against base only because of a stray '%' (one that starts no
// percent-encoded octet: "/100%", "/a%zz") into the form urlsafe.RequestHref
// gives a first URL ('%' sent as "%25"), so that the redirect is followed as
// a browser follows it (the WHATWG URL Standard keeps such a '%'; net/http
// would fail with "invalid URL escape"). Every other Location is left as is;
// the hop is judged in CheckRedirect like any other.
func escapeLocation(base *url.URL, resp *http.Response) {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return
	}
	loc := resp.Header.Get("Location")
	if loc == "" || !strings.Contains(loc, "%") {
		return
	}
	if _, err := base.Parse(loc); err == nil {
		return
	}
	if esc := urlsafe.RequestHref(loc); esc != loc {
		if _, err := base.Parse(esc); err == nil {
			resp.Header.Set("Location", esc)
		}
	}
}

// CloseIdleConnections closes idle pooled connections.
func (s schemeTransport) CloseIdleConnections() {
	if c, ok := s.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (g *Guard) checkRedirect(req *http.Request, via []*http.Request, sensitiveParams bool) error {
	if len(via) > g.opts.MaxRedirects {
		return reason.New(reason.TooManyRedirects, "",
			fmt.Sprintf("Stopped after %d redirects. The page redirects in a loop or too deeply; try the final URL directly.", g.opts.MaxRedirects))
	}
	d, rerr := g.Decide(req.Context(), req.URL.String(), Rules{RefuseUserinfo: true, SensitiveParams: sensitiveParams})
	if rerr != nil {
		return hopError(len(via), req.URL.String(), rerr)
	}
	// Dial what was judged: hand the transport the canonical URL (a Location of
	// http://0x7f000001/ is judged, and dialed, as 127.0.0.1).
	canon, perr := url.Parse(d.URL.Href)
	if perr != nil {
		return reason.Wrap(reason.InvalidURL, reason.GateParse, "Blocked: a redirect target could not be canonicalised.", perr)
	}
	req.URL = canon
	req.Host = ""
	return nil
}

// hopError is the refusal of redirect hop n (1-based) to target: the hop's
// code and gate, a message naming the hop and its redacted URL, wrapping the
// hop's own *reason.Error (and through it a *policy.Block).
func hopError(n int, target string, rerr *reason.Error) *reason.Error {
	msg := strings.TrimPrefix(rerr.Message, "Blocked: ")
	return reason.Wrap(rerr.Code, rerr.Gate,
		fmt.Sprintf("Blocked: redirect hop %d (to %s) was refused before it was fetched: %s", n, urlsafe.Redact(target), msg), rerr)
}
