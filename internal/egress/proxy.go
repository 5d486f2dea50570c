package egress

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// HostDecider is an extra host decision of a proxy session, run after
// Guard.Decide (which applies the guard's website policy, spec §A8, to every
// request of a browser session, not just the top-level URL) and before
// anything is dialed; the browser's default context uses it to refuse
// everything. scheme is "http" for plain requests and "" for CONNECT tunnels (the proxy
// cannot see inside them); host is canonical (lower case, no trailing dot, IP
// literals without brackets). It returns nil to allow or a *reason.Error. It must
// be safe for concurrent use and must not block on the network.
type HostDecider interface {
	DecideHost(scheme, host string, port uint16) *reason.Error
}

// HostDeciderFunc adapts a function to HostDecider.
type HostDeciderFunc func(scheme, host string, port uint16) *reason.Error

// DecideHost calls f.
func (f HostDeciderFunc) DecideHost(scheme, host string, port uint16) *reason.Error {
	return f(scheme, host, port)
}

// Proxy log record keys (one canonical record per refusal, STYLE.md §1.5).
const (
	LogProxyDecision = "egress proxy decision"
	LogFieldSession  = "session"
	LogFieldHost     = "host"
	LogFieldMethod   = "method"
	LogFieldReason   = "reason"
	LogFieldAllow    = "allow"
)

// ProxyReasonHeader carries the reason code of a refusal in the proxy's 403
// reply, so a test or a browser-side probe can tell a refusal from an upstream
// error.
const ProxyReasonHeader = "X-Gatehouse-Reason"

// Refusal is one request the proxy refused, as kept in ProxySession.Refusals.
type Refusal struct {
	Time   time.Time
	Method string      // CONNECT, GET, …
	Host   string      // canonical host the request targeted (never a resolved IP)
	Port   uint16      // target port
	Reason reason.Code // stable code (ssrf_private, ssrf_metadata, policy_blocked, …)
}

// ProxyStats counts one session's proxied requests.
type ProxyStats struct {
	Allowed int64 // requests and tunnels that were dialed
	Refused int64 // requests and tunnels refused by the decision
	// Unauthenticated counts requests and tunnels answered 407 for lacking
	// the session's proxy credential (ProxyOptions.Authenticate). The
	// browser's own first, credential-less try of a session counts here too
	// (Basic auth starts with a challenge); a wrong credential is logged.
	Unauthenticated int64
}

// ProxyAuthRealm is the realm of the proxy's Basic challenge.
const ProxyAuthRealm = "gatehouse"

// ProxyAuthProbeURL is answered by the proxy itself with 204 No Content once
// the request carries the session's credential, and never dialed: a browser
// context loads it once to be challenged and cache the credential before its
// first real request. The host is under .invalid (RFC 6761 §6.4), which never
// resolves, so no real site can be shadowed.
const ProxyAuthProbeURL = "http://gatehouse-proxy-auth.invalid/"

const proxyAuthProbeHost = "gatehouse-proxy-auth.invalid"

// maxRefusals is how many recent refusals a session keeps.
const maxRefusals = 64

// ProxySession is one loopback forward-proxy listener dedicated to one browser
// session: Chromium is told (per BrowserContext) to send every request of that
// session to this listener, so each request is attributed to the session by the
// port it arrived on, and a refusal is logged and counted per session. With
// ProxyOptions.Authenticate the port alone is not enough: every request must
// also carry the session's random proxy credential (Basic, RFC 7617, in
// Proxy-Authorization), which only that session's BrowserContext is given, so
// another process on the host (or another context) cannot borrow the session's
// egress or have its requests counted as the session's.
//
// Every request is decided in two halves: the HostDecider on the target host
// before dialing, then the Guard's DialContext on every resolved IP actually
// dialed (spec §A6.8: DNS resolved by us, every answer judged, the vetted IP
// dialed). Plain HTTP requests (including WebSocket upgrades over ws://) are
// forwarded by a reverse proxy whose transport dials through the Guard; CONNECT
// tunnels (https, wss) are dialed through the Guard and spliced. The proxy never
// follows redirects: the browser asks for each hop, and each hop is decided anew.
// On top of both halves, a request whose destination is private must come from
// a session whose top-level documents are private (Private Network Access,
// pna.go: TopLevelCommitted, AllowNavigation; off with
// ProxyOptions.AllowPrivateFromPublic), else it is refused with
// private_network_from_public.
//
// A ProxySession is safe for concurrent use. Close stops the listener and cuts
// every open tunnel.
type ProxySession struct {
	name   atomic.Pointer[string]
	pol    atomic.Pointer[proxyPolicy] // replaced once by Bind (an Unbound session), else fixed
	logger *slog.Logger

	ln  net.Listener
	srv *http.Server
	rp  *httputil.ReverseProxy
	tr  *http.Transport

	allowed, refused, unauth atomic.Int64
	user, pass               string // the session's proxy credential; "" when not required
	wantAuth                 []byte // "Basic " + base64(user:pass)

	mu       sync.Mutex
	refusals []Refusal
	failures []Refusal         // allowed requests whose upstream could not be reached (FailedSince)
	tunnels  map[net.Conn]bool // open CONNECT tunnel ends → leads to a private address
	closed   bool

	// Private Network Access (pna.go), under mu.
	tops        map[string]bool       // top-level document id → private
	nav         *navAllowance         // the agent's pending navigation (AllowNavigation)
	lastDial    map[string]bool       // "host:port" → its last dial reached a private IP
	everPrivate map[string]bool       // "host:port" → some dial reached a private IP
	commitWait  time.Duration         // ProxyOptions.CommitWait
	pnaChanged  chan struct{}         // closed (and replaced) when tops or nav change (pnaRefusal waits on it)
	clients     map[net.Conn]struct{} // the browser's open connections to the proxy (Drain)
	lastArrival time.Time             // the last request or tunnel the browser asked for (Drain)
}

// ProxyOptions configures NewProxySession.
type ProxyOptions struct {
	// Name attributes the session's requests in logs and stats (the browser
	// session key).
	Name string
	// Guard dials (and judges) every connection; required.
	Guard *Guard
	// Decider judges the host of every request before dialing; nil allows every
	// host (the Guard still judges every IP).
	Decider HostDecider
	// Logger receives one record per refusal; nil discards.
	Logger *slog.Logger
	// AllowPrivateFromPublic turns Private Network Access off (pna.go):
	// requests into the private network no longer need a private top-level
	// document. Set it when the user allowed private URLs
	// (security.allow_private_urls); the zero value enforces it.
	AllowPrivateFromPublic bool
	// CommitWait bounds how long a request into the private network is held
	// while the agent's own navigation is pending, waiting for the new
	// document's commit (see pnaRefusal); zero means 3 s.
	CommitWait time.Duration
	// Authenticate makes NewProxySession draw a random credential
	// (Credentials, 128 bits each for user and password) and answer every
	// request or tunnel without it with 407 Proxy Authentication Required
	// (reason proxy_auth_required, counted in ProxyStats.Unauthenticated).
	Authenticate bool
	// Unbound starts a session with no policy yet (a spare made before its
	// owner is known, issue 19): every request is refused (policy_blocked,
	// counted and logged like any refusal) until Bind gives it one; Guard,
	// Decider and AllowPrivateFromPublic are ignored. The proxy auth probe
	// (ProxyAuthProbeURL) is still answered, so the credential can be primed.
	Unbound bool
}

// proxyPolicy is what judges a session's requests: set at NewProxySession,
// or once by Bind for an Unbound session.
type proxyPolicy struct {
	guard    *Guard
	decider  HostDecider
	allowPNA bool // ProxyOptions.AllowPrivateFromPublic
	unbound  bool // ProxyOptions.Unbound and Bind not called yet: refuse everything
}

func (s *ProxySession) policy() *proxyPolicy { return s.pol.Load() }

// ErrBound is Bind's error when the session already has its policy.
var ErrBound = errors.New("egress: the proxy session already has its policy")

// Bind gives an Unbound session its policy (the ProxyOptions fields Guard,
// required, Decider and AllowPrivateFromPublic; the others are ignored),
// atomically: a request decided before it is refused, one after it is
// judged by the new policy, never by a mix. It happens at most once: a
// session made with a policy, or already bound, returns ErrBound and keeps
// its policy (a policy is never widened later).
func (s *ProxySession) Bind(o ProxyOptions) error {
	if o.Guard == nil {
		return errors.New("egress: Bind needs a Guard")
	}
	old := s.pol.Load()
	if !old.unbound || !s.pol.CompareAndSwap(old, &proxyPolicy{guard: o.Guard, decider: o.Decider, allowPNA: o.AllowPrivateFromPublic}) {
		return ErrBound
	}
	return nil
}

// NewProxySession starts a forward proxy on a fresh loopback port
// (127.0.0.1:0). Errors come from net.Listen.
func NewProxySession(o ProxyOptions) (*ProxySession, error) {
	if o.Unbound {
		o.Guard, o.Decider, o.AllowPrivateFromPublic = New(Options{}), nil, false
	}
	if o.Guard == nil {
		return nil, errors.New("egress: proxy needs a Guard")
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &ProxySession{
		logger: lg,
		ln:     ln, tunnels: map[net.Conn]bool{},
		commitWait: cmp.Or(o.CommitWait, defaultCommitWait), tops: map[string]bool{},
		lastDial: map[string]bool{}, everPrivate: map[string]bool{}, pnaChanged: make(chan struct{}),
		clients: map[net.Conn]struct{}{},
	}
	s.SetName(o.Name)
	s.pol.Store(&proxyPolicy{guard: o.Guard, decider: o.Decider, allowPNA: o.AllowPrivateFromPublic, unbound: o.Unbound})
	if o.Authenticate {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			ln.Close()
			return nil, err
		}
		s.user, s.pass = hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
		s.wantAuth = []byte("Basic " + base64.StdEncoding.EncodeToString([]byte(s.user+":"+s.pass)))
	}
	s.tr = &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, _, err := s.dial(WithScheme(ctx, "http"), network, addr)
			return c, err
		},
		ForceAttemptHTTP2:      false,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
		DisableCompression:     true, // pass the browser's Accept-Encoding through untouched
	}
	s.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The outgoing request already carries the absolute target URL;
			// keep it, drop hop-by-hop proxy headers.
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Del("Proxy-Connection")
			pr.Out.Header.Del("Proxy-Authorization")
		},
		Transport:     s.tr,
		FlushInterval: -1, // stream (EventSource, chunked responses)
		ErrorHandler:  s.upstreamError,
	}
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          nil,
		ConnState:         s.clientState,
	}
	go s.srv.Serve(ln) //nolint:errcheck // returns on Close
	return s, nil
}

// Addr returns the listener's address, "127.0.0.1:PORT".
func (s *ProxySession) Addr() string { return s.ln.Addr().String() }

// URL returns the proxy address in the form Chromium's --proxy-server and
// Target.createBrowserContext(proxyServer) take: "http://127.0.0.1:PORT".
func (s *ProxySession) URL() string { return "http://" + s.Addr() }

// Name returns the session name given to NewProxySession.
func (s *ProxySession) Name() string { return *s.name.Load() }

// SetName re-attributes the session (a pre-started session handed to a new
// browser session key). Requests already logged keep the old name.
func (s *ProxySession) SetName(name string) { s.name.Store(&name) }

// Credentials returns the proxy credential every request must carry (the
// browser supplies it when challenged), or "", "" when ProxyOptions.Authenticate
// was off.
func (s *ProxySession) Credentials() (user, pass string) { return s.user, s.pass }

// Stats returns the session's counters.
func (s *ProxySession) Stats() ProxyStats {
	return ProxyStats{Allowed: s.allowed.Load(), Refused: s.refused.Load(), Unauthenticated: s.unauth.Load()}
}

// authorized reports whether r carries the session's credential (always true
// without ProxyOptions.Authenticate). Constant-time comparison.
func (s *ProxySession) authorized(r *http.Request) bool {
	if s.wantAuth == nil {
		return true
	}
	got := r.Header.Get("Proxy-Authorization")
	return subtle.ConstantTimeCompare([]byte(got), s.wantAuth) == 1
}

// challenge answers 407 with a Basic challenge (RFC 7235 §3.2). A request that
// carried a credential (a wrong one) is logged as a refusal; a bare first try
// is the normal start of Basic auth and is only counted.
func (s *ProxySession) challenge(w http.ResponseWriter, r *http.Request) {
	s.unauth.Add(1)
	if r.Header.Get("Proxy-Authorization") != "" {
		host := r.Host
		if r.URL != nil && r.URL.Host != "" {
			host = r.URL.Host
		}
		s.logger.Info(LogProxyDecision, LogFieldSession, s.Name(), LogFieldMethod, r.Method,
			LogFieldHost, host, LogFieldReason, string(reason.ProxyAuthRequired), LogFieldAllow, false)
	}
	w.Header().Set("Proxy-Authenticate", `Basic realm="`+ProxyAuthRealm+`"`)
	w.Header().Set(ProxyReasonHeader, string(reason.ProxyAuthRequired))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusProxyAuthRequired)
	io.WriteString(w, "Gatehouse egress proxy: this port serves one browser session; the request lacks its proxy credential\n")
}

// Refusals returns the most recent refusals (up to 64), oldest first.
func (s *ProxySession) Refusals() []Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Refusal(nil), s.refusals...)
}

// RefusedSince reports the refusals at or after t, oldest first.
func (s *ProxySession) RefusedSince(t time.Time) []Refusal {
	var out []Refusal
	for _, r := range s.Refusals() {
		if !r.Time.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

// FailedSince reports the requests at or after t that the proxy allowed but
// could not complete because the upstream could not be reached (connection
// refused, unreachable, timed out), oldest first; Reason is fetch_failed or
// fetch_timeout. The browser tools tell "the page's server is down" from a
// page by it (the proxy answers such a request with its own 502/504 text).
func (s *ProxySession) FailedSince(t time.Time) []Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Refusal
	for _, r := range s.failures {
		if !r.Time.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

func (s *ProxySession) failed(method, host string, port uint16, err error) {
	code := reason.Of(err)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		code = reason.FetchTimeout
	case code == "":
		code = reason.FetchFailed
	}
	s.mu.Lock()
	s.failures = append(s.failures, Refusal{Time: time.Now(), Method: method, Host: host, Port: port, Reason: code})
	if len(s.failures) > maxRefusals {
		s.failures = s.failures[len(s.failures)-maxRefusals:]
	}
	s.mu.Unlock()
}

// Close stops accepting, closes idle upstream connections and cuts open
// tunnels. It is idempotent.
func (s *ProxySession) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	tunnels := s.tunnels
	s.tunnels = map[net.Conn]bool{}
	s.mu.Unlock()
	for c := range tunnels {
		c.Close()
	}
	err := s.srv.Close()
	s.tr.CloseIdleConnections()
	return err
}

// track registers one end of an open tunnel; private marks a tunnel to a
// private address (cut when the session turns public, pna.go). It reports
// false once the session is closed, or when a private tunnel is no longer
// allowed (the session turned public while it was being dialed).
func (s *ProxySession) track(c net.Conn, private bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if private && !s.policy().allowPNA && !s.privateLocked() && s.nav == nil {
		return false
	}
	s.tunnels[c] = private
	return true
}

func (s *ProxySession) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.tunnels, c)
	s.mu.Unlock()
}

// decide runs the host half of the decision: Guard.Decide, Gatehouse's one
// egress decision (canonical host, scheme, metadata host names, IP-literal
// classification, the guard's website policy), on "scheme://host:port/" — for
// a CONNECT tunnel the proxy sees no more — then the optional HostDecider. The
// IP half runs at dial time in Guard.DialContext.
func (s *ProxySession) decide(ctx context.Context, scheme, hostport string, defPort uint16) (host string, port uint16, rerr *reason.Error) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		h, p = hostport, strconv.Itoa(int(defPort))
	}
	pn, perr := strconv.ParseUint(p, 10, 16)
	if perr != nil || pn == 0 {
		return h, 0, reason.New(reason.InvalidURL, reason.GateParse, "Blocked: malformed proxy target port.")
	}
	port = uint16(pn)
	if s.policy().unbound {
		return strings.Trim(h, "[]"), port, reason.New(reason.PolicyBlocked, reason.GatePolicy,
			"Blocked: this browser session has no policy yet (a spare session on a browser node reaches nothing until a replica takes it with its policy).")
	}
	us := scheme
	if us == "" {
		us = "https"
	}
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		h = "[" + h + "]"
	}
	d, rerr := s.policy().guard.Decide(ctx, us+"://"+h+":"+strconv.Itoa(int(port))+"/", Rules{})
	if rerr != nil {
		return strings.Trim(h, "[]"), port, rerr
	}
	host = d.URL.Host
	if d := s.policy().decider; d != nil {
		if rerr := d.DecideHost(scheme, host, port); rerr != nil {
			return host, port, rerr
		}
	}
	return host, port, nil
}

func (s *ProxySession) refuse(w http.ResponseWriter, method, host string, port uint16, rerr *reason.Error) {
	s.refused.Add(1)
	r := Refusal{Time: time.Now(), Method: method, Host: host, Port: port, Reason: rerr.Code}
	s.mu.Lock()
	s.refusals = append(s.refusals, r)
	if len(s.refusals) > maxRefusals {
		s.refusals = s.refusals[len(s.refusals)-maxRefusals:]
	}
	s.mu.Unlock()
	s.logger.Info(LogProxyDecision, LogFieldSession, s.Name(), LogFieldMethod, method,
		LogFieldHost, host, LogFieldReason, string(rerr.Code), LogFieldAllow, false)
	if w != nil {
		w.Header().Set(ProxyReasonHeader, string(rerr.Code))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "Blocked by Gatehouse (%s): %s\n", rerr.Code, rerr.Message)
	}
}

func (s *ProxySession) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.lastArrival = time.Now()
	s.mu.Unlock()
	if !s.authorized(r) {
		s.challenge(w, r)
		return
	}
	if r.Method == http.MethodConnect {
		s.connect(w, r)
		return
	}
	if s.wantAuth != nil && r.URL != nil && strings.EqualFold(r.URL.Host, proxyAuthProbeHost) {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.URL == nil || !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "Gatehouse egress proxy: only absolute-form proxy requests are served", http.StatusBadRequest)
		return
	}
	var def uint16 = 80
	switch r.URL.Scheme {
	case "http":
	case "ws":
		def = 80
	default:
		s.refuse(w, r.Method, r.URL.Hostname(), 0,
			reason.New(reason.UnsupportedScheme, reason.GateScheme, "Blocked: the proxy only forwards http requests and CONNECT tunnels."))
		return
	}
	host, port, rerr := s.decide(r.Context(), "http", r.URL.Host, def)
	nav := navigationRequest(r.Header)
	if rerr == nil {
		rerr = s.arrivalRefusal("http", host, port, nav)
	}
	if rerr != nil {
		s.refuse(w, r.Method, host, port, rerr)
		return
	}
	r = r.WithContext(withNavRequest(r.Context(), nav))
	if r.URL.Scheme == "ws" {
		r.URL.Scheme = "http"
	}
	s.allowed.Add(1)
	s.rp.ServeHTTP(w, r)
}

// upstreamError turns a failed forward into a reply; a guard refusal at dial
// time (DNS rebinding, a name resolving into private space) is a refusal.
func (s *ProxySession) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if rerr := reason.As(err); rerr != nil && isRefusal(rerr.Code) {
		s.allowed.Add(-1) // counted when forwarded; the dial-time half refused it
		s.refuse(w, r.Method, r.URL.Hostname(), PortOfHost(r.URL.Host, 80), rerr)
		return
	}
	s.failed(r.Method, r.URL.Hostname(), PortOfHost(r.URL.Host, 80), err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	code := http.StatusBadGateway
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		code = http.StatusGatewayTimeout
	}
	w.WriteHeader(code)
	fmt.Fprintf(w, "Gatehouse egress proxy: upstream failed (%s)\n", reason.Of(err))
}

// isRefusal reports whether c is a decision (not an infrastructure failure).
func isRefusal(c reason.Code) bool {
	switch c {
	case reason.SSRFPrivate, reason.SSRFMetadata, reason.DNSUnresolvable, reason.DNSBadAnswer,
		reason.PolicyBlocked, reason.UnsupportedScheme, reason.InvalidURL, reason.PrivateNetworkFromPublic:
		return true
	}
	return false
}

// PortOfHost returns the port of "host:port", or def when absent or malformed.
func PortOfHost(hostport string, def uint16) uint16 {
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return def
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return def
	}
	return uint16(n)
}

func (s *ProxySession) connect(w http.ResponseWriter, r *http.Request) {
	host, port, rerr := s.decide(r.Context(), "", r.Host, 443)
	if rerr == nil {
		rerr = s.arrivalRefusal("", host, port, true)
	}
	if rerr != nil {
		s.refuse(w, r.Method, host, port, rerr)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.policy().guard.opts.ConnectTimeout+5*time.Second)
	defer cancel()
	up, private, err := s.dial(withNavRequest(ctx, true), "tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
	if err != nil {
		if rerr := reason.As(err); rerr != nil && isRefusal(rerr.Code) {
			s.refuse(w, r.Method, host, port, rerr)
			return
		}
		s.failed(r.Method, host, port, err)
		http.Error(w, "Gatehouse egress proxy: upstream connect failed", http.StatusBadGateway)
		return
	}
	s.allowed.Add(1)
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "hijack unsupported", http.StatusInternalServerError)
		return
	}
	down, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !s.track(down, private) {
		down.Close()
		up.Close()
		return
	}
	if !s.track(up, private) {
		s.untrack(down)
		down.Close()
		up.Close()
		return
	}
	defer func() {
		s.untrack(down)
		s.untrack(up)
		down.Close()
		up.Close()
	}()
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	splice(down, brw.Reader, up)
}

// splice copies both ways until either side ends; bytes the server's reader
// already buffered from the client go first.
func splice(down net.Conn, buffered *bufio.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		if n := buffered.Buffered(); n > 0 {
			b, _ := buffered.Peek(n)
			up.Write(b) //nolint:errcheck // the copy below reports the broken pipe
			buffered.Discard(n)
		}
		io.Copy(up, down) //nolint:errcheck
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		io.Copy(down, up) //nolint:errcheck
		if tc, ok := down.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}
