// Package nodeserver is `gatehouse browser-node` (issue 19): one Chromium
// (the headless shell by default, launched by browser/backend) plus its
// egress proxies, as one unit, registered in Redis for replicas to place
// sessions on (internal/browser/node is the replica's side).
//
// The node's listener serves, behind the node token (node.EnvToken;
// required unless it listens on loopback):
//   - GET /cdp: a WebSocket relay to Chromium's CDP endpoint, which itself
//     listens on 127.0.0.1 only;
//   - POST /v1/sessions: a new session proxy (egress.ProxySession with its
//     own credential, judged by the policy the replica sent with the
//     request, node.OpenRequest.Policy: never by this node's own
//     security.* config), refused with browser_capacity (503, Retry-After)
//     when --max-sessions are open;
//     POST /v1/sessions/{id}: one call on it (node.OpRequest);
//     DELETE /v1/sessions/{id}: closes it;
//   - POST /v1/spares: reserves a ready spare session for the request's
//     relay, to attach to ahead of a session and bind with an open
//     (node.OpenRequest.Spare); POST /v1/spares/{id} renews it, DELETE
//     releases it (reserve.go).
//
// No request carrying an Origin header is served (CDP clients send none;
// a web page would, and a DNS-rebinding page could otherwise pass a Host
// check).
package nodeserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// DefaultMaxSessions is --max-sessions' default: sized for 2 cores (the
// headless shell's sessions cost ~0.4 of full Chromium's; issue 19).
const DefaultMaxSessions = 16

// Options configures Start.
type Options struct {
	// Config is the node's config; nil: config.Default(). Only browser.*
	// (the Chromium to run, headed) is read: every session's traffic is
	// judged by the policy its replica sends (node.Policy), so the node's
	// security.* keys have no effect.
	Config *config.Config
	// Home is the node's GATEHOUSE_HOME (kept for its config; no session
	// reads a file under it).
	Home string
	// Listen is host:port of the node's listener (port 0 picks one).
	Listen string
	// Advertise is the address written in the record (what replicas dial);
	// "" means the listener's address.
	Advertise string
	// MaxSessions is the capacity; ≤ 0 means DefaultMaxSessions.
	MaxSessions int
	// Token is the node token; required unless Listen is loopback.
	Token string
	// Registry is where the node registers; required.
	Registry *node.Registry
	// Heartbeat is the record's TTL (refreshed every third of it); 0 means
	// node.HeartbeatTTL.
	Heartbeat time.Duration
	// Spares is the least number of spare sessions kept ready (spares.go);
	// 0 means DefaultSpares, < 0 none.
	Spares int
	// MaxSpares caps the spares, ready or reserved; 0 means
	// DefaultMaxSpares, < 0 none.
	MaxSpares int
	// ReserveTTL is how long a reserved spare lives unbound and not
	// renewed (reserve.go); 0 means node.ReserveTTL.
	ReserveTTL time.Duration
	// WatchDialogs keeps the node's own CDP view of the JavaScript dialogs
	// of every handle session's tab (dialogs.go), so any replica reports
	// and answers one (node.OpDialog, node.OpAnswer); off, a dialog is
	// known only to the replicas attached when it opened. gatehouse
	// browser-node sets it (--watch-dialogs, default true).
	WatchDialogs bool
	// Resolver and AllowAddrPorts are the session proxies' (tests; Go
	// code only, never part of a policy).
	Resolver       egress.Resolver
	AllowAddrPorts []netip.AddrPort
	Logger         *slog.Logger
}

// Server is one running node. Close deregisters it and stops Chromium.
type Server struct {
	o       Options
	id      string
	addr    string
	lg      *slog.Logger
	ln      net.Listener
	hs      *http.Server
	local   *backend.Local
	dlg     *dialogWatch // the node's own view of every page's dialogs (dialogs.go)
	defProx *egress.ProxySession
	// debugHostPort and defProxAddr are Chromium's debugging endpoint and
	// the default proxy's address as host:port (hostService).
	debugHostPort, defProxAddr string

	mu       sync.Mutex
	sessions map[string]*nodeSession
	relays   map[string]int              // live CDP relays by relay id (node.HeaderRelay)
	gates    map[[32]byte]*browser.Gates // compiled session policies (gatesFor)
	closed   bool
	spare    spareState              // spare sessions (spares.go)
	reserved map[string]*reservation // reserved spares by id (reserve.go)

	stop chan struct{}
	dead chan struct{} // closed when Chromium died (Dead)
	wg   sync.WaitGroup
}

type nodeSession struct {
	relay  string // the relay whose client opened it; closed with it ("": a handle session's)
	handle bool   // a handle session's: lives while its index key does (handle.ProxyKey)
	// spareRelay is the relay that reserved the spare this session was
	// bound from (reserve.go): its release of that id closes the session
	// (the bind's answer never reached it).
	spareRelay string
	bctx       string // the BrowserContext behind it (node.OpBind), disposed when it closes
	p          *egress.ProxySession
	allows     map[string]func() // AllowNavigation tokens
	next       int
}

// IsLoopback reports whether listen's host is a loopback IP or localhost.
func IsLoopback(listen string) bool {
	h, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// Start launches Chromium, starts the listener and registers the node.
// Errors: a missing token on a non-loopback address, a listen failure,
// chromium_missing / browser_failed from the launch, a registry failure.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Registry == nil {
		return nil, errors.New("browser-node: GATEHOUSE_REDIS_URL is required (the node registers itself in Redis)")
	}
	if o.Token == "" && !IsLoopback(o.Listen) {
		return nil, fmt.Errorf("browser-node: --listen %s is not loopback: set %s (replicas send it as a bearer token)", o.Listen, node.EnvToken)
	}
	if o.Config == nil {
		o.Config = config.Default()
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessions > node.MaxCapacity {
		o.MaxSessions = node.MaxCapacity
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = node.HeartbeatTTL
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	var idb [16]byte
	rand.Read(idb[:])
	s := &Server{o: o, id: hex.EncodeToString(idb[:]), lg: lg, sessions: map[string]*nodeSession{}, reserved: map[string]*reservation{}, relays: map[string]int{}, gates: map[[32]byte]*browser.Gates{}, stop: make(chan struct{}), dead: make(chan struct{})}
	var err error
	// The default context (no session's) reaches nothing: a strict guard
	// and a decider refusing every host.
	s.defProx, err = egress.NewProxySession(egress.ProxyOptions{Name: "(default context)", Guard: egress.New(egress.Options{Resolver: o.Resolver}),
		Decider: egress.HostDeciderFunc(func(string, string, uint16) *reason.Error {
			return reason.New(reason.PolicyBlocked, reason.GatePolicy, "Blocked: the default browser context has no network access.")
		})})
	if err != nil {
		return nil, err
	}
	exec, err := backend.FindBrowser(o.Config.Browser.ExecutablePath, o.Config.Browser.Headed)
	if err != nil {
		s.defProx.Close()
		return nil, err
	}
	s.local, err = backend.Launch(ctx, backend.Options{ExecPath: exec, DefaultProxy: s.defProx.URL(), Headed: o.Config.Browser.Headed,
		Logger: lg, DebugDial: loopbackDial(o.Resolver)})
	if err != nil {
		s.defProx.Close()
		return nil, err
	}
	s.defProxAddr = s.defProx.Addr()
	if o.WatchDialogs {
		if s.dlg, err = watchDialogs(ctx, s.local.DebugURL(), loopbackDial(o.Resolver)); err != nil {
			s.shutdownBrowser()
			return nil, fmt.Errorf("browser-node: watching dialogs over CDP: %w", err)
		}
	}
	if du, err := url.Parse(s.local.DebugURL()); err == nil {
		s.debugHostPort = du.Host
	}
	if s.ln, err = net.Listen("tcp", o.Listen); err != nil {
		s.shutdownBrowser()
		return nil, err
	}
	s.addr = o.Advertise
	if s.addr == "" {
		s.addr = s.ln.Addr().String()
	}
	if _, _, err := node.SplitAddr(s.addr); err != nil {
		s.ln.Close()
		s.shutdownBrowser()
		return nil, fmt.Errorf("browser-node: the advertised address %q: %w", s.addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+node.PathCDP, s.relay)
	mux.HandleFunc("POST "+node.PathSessions, s.open)
	mux.HandleFunc("POST "+node.PathSessions+"/{id}", s.op)
	mux.HandleFunc("GET "+node.PathSessions+"/{id}", s.get)
	mux.HandleFunc("DELETE "+node.PathSessions+"/{id}", s.del)
	mux.HandleFunc("POST "+node.PathSpares, s.reserve)
	mux.HandleFunc("POST "+node.PathSpares+"/{id}", s.renew)
	mux.HandleFunc("DELETE "+node.PathSpares+"/{id}", s.release)
	s.hs = &http.Server{Handler: s.guard(mux), ReadHeaderTimeout: 10 * time.Second}
	go s.hs.Serve(s.ln) //nolint:errcheck // ends with Close
	if err := s.register(ctx); err != nil {
		s.Close(ctx)
		return nil, fmt.Errorf("browser-node: registering in Redis: %w", err)
	}
	s.wg.Add(1)
	go s.heartbeat()
	s.fillSpares()
	lg.Info("browser node up", "node", s.id, "addr", s.addr, "capacity", o.MaxSessions, "chromium_pid", s.local.PID())
	return s, nil
}

// loopbackDial dials Chromium's own debugging port: 127.0.0.1 only, through
// an egress guard whose one exception is that address.
func loopbackDial(r egress.Resolver) backend.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil || !ap.Addr().IsLoopback() {
			return nil, fmt.Errorf("browser-node: Chromium's debugging address %q is not loopback", addr)
		}
		return egress.New(egress.Options{Resolver: r, AllowAddrPorts: []netip.AddrPort{ap}}).DialContext(ctx, network, addr)
	}
}

// Dead is closed when the node's Chromium died: the node has deregistered
// and serves nothing; its owner should Close it (gatehouse browser-node
// exits non-zero).
func (s *Server) Dead() <-chan struct{} { return s.dead }

// ID is the node's id (its record's key suffix).
func (s *Server) ID() string { return s.id }

// Addr is the advertised address.
func (s *Server) Addr() string { return s.addr }

// ChromiumPID is the node's Chromium process id.
func (s *Server) ChromiumPID() int { return s.local.PID() }

// DebugAddr returns Chromium's debugging endpoint as host:port (loopback
// only; no session may reach it: hostService).
func (s *Server) DebugAddr() string { return s.debugHostPort }

// Capacity is the node's --max-sessions.
func (s *Server) Capacity() int { return s.o.MaxSessions }

// Sessions is the number of open session proxies.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

func (s *Server) record() node.Record {
	return node.Record{Version: node.RecordVersion, ID: s.id, Addr: s.addr, Capacity: s.o.MaxSessions,
		Sessions: min(s.Sessions(), s.o.MaxSessions), Heartbeat: time.Now().UnixMilli()}
}

func (s *Server) register(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil // deregistered (or about to be): never written again
	}
	return s.o.Registry.Put(ctx, s.record(), s.o.Heartbeat)
}

// refresh writes the record now, so placement on every replica sees a
// session count that changed (the heartbeat would, within a third of the
// TTL).
func (s *Server) refresh(ctx context.Context) {
	if err := s.register(context.WithoutCancel(ctx)); err != nil {
		s.lg.Warn("browser node record not refreshed", "node", s.id, "err", err)
	}
}

// heartbeat refreshes the record every third of its TTL until Close; a
// Chromium that died ends the node (its record then expires).
func (s *Server) heartbeat() {
	defer s.wg.Done()
	t := time.NewTicker(s.o.Heartbeat / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if !s.local.Alive() {
			// Deregistered at once: no replica places a session here again.
			s.lg.Error("browser node: Chromium is gone; the node deregisters", "node", s.id)
			dctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			s.o.Registry.Delete(dctx, s.id) //nolint:errcheck // the record expires anyway
			cancel()
			close(s.dead)
			return
		}
		if err := s.register(context.Background()); err != nil {
			s.lg.Warn("browser node heartbeat failed", "node", s.id, "err", err)
		}
		s.closeOrphanHandles()
		s.expireReservations()
		s.trimSpares()
	}
}

// closeOrphanHandles closes the handle sessions whose index key is gone:
// their record expired or was reaped, so no replica drives them again; the
// proxy closes and the BrowserContext is disposed.
func (s *Server) closeOrphanHandles() {
	s.mu.Lock()
	var hs []string
	for id, ns := range s.sessions {
		if ns != nil && ns.handle {
			hs = append(hs, id)
		}
	}
	s.mu.Unlock()
	n := 0
	for _, id := range hs {
		if handle.ProxyAlive(context.Background(), s.o.Registry.Client(), s.id, id) {
			continue
		}
		s.mu.Lock()
		ns := s.sessions[id]
		delete(s.sessions, id)
		s.mu.Unlock()
		if ns != nil {
			s.closeSession(ns)
			n++
		}
	}
	if n > 0 {
		s.lg.Info("browser node: handle sessions without a record were closed", "node", s.id, "sessions", n)
		s.refresh(context.Background())
	}
}

// closeSession ends ns: its navigation allowances, its proxy and, for a
// handle session, its BrowserContext.
func (s *Server) closeSession(ns *nodeSession) {
	for _, done := range ns.allows {
		done()
	}
	ns.p.Close()
	if ns.bctx != "" {
		if err := s.local.DisposeContext(context.Background(), ns.bctx); err != nil {
			s.lg.Debug("browser node: disposing a session's context failed", "node", s.id, "err", err)
		}
	}
}

// Close deregisters the node, stops serving, closes every session proxy
// and stops Chromium (no process of it is left). Idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ss := s.sessions
	s.sessions = map[string]*nodeSession{}
	s.mu.Unlock()
	close(s.stop)
	s.wg.Wait()
	if s.hs != nil {
		// Requests in flight finish first (relayed WebSockets are hijacked
		// and end with s.stop), so none re-registers after the Delete.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		s.hs.Shutdown(sctx) //nolint:errcheck // a slow request is cut by Close below
		cancel()
		s.hs.Close()
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	err := s.o.Registry.Delete(dctx, s.id)
	cancel()
	for _, ns := range ss {
		if ns != nil { // nil: a slot reserved by an open still starting
			ns.p.Close()
		}
	}
	s.mu.Lock()
	spares := s.spare.ready
	s.spare.ready = nil
	spares = append(spares, s.dropReservationsLocked(func(*reservation) bool { return true })...)
	s.mu.Unlock()
	for _, sp := range spares {
		sp.p.Close() // the context goes with Chromium
	}
	if cerr := s.shutdownBrowser(); err == nil {
		err = cerr
	}
	return err
}

func (s *Server) shutdownBrowser() error {
	if s.dlg != nil {
		s.dlg.close()
	}
	err := s.local.Close()
	s.defProx.Close()
	return err
}

// guard refuses requests with an Origin header and, when a token is set,
// requests without it (constant-time comparison).
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			http.Error(w, "browser-node: requests from web pages are refused", http.StatusForbidden)
			return
		}
		if s.o.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.o.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="gatehouse-browser-node"`)
				http.Error(w, "browser-node: missing or wrong node token ("+node.EnvToken+")", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

var upgrader = websocket.Upgrader{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}

// relay joins a client's WebSocket to Chromium's CDP endpoint, message for
// message, until either side closes.
func (s *Server) relay(w http.ResponseWriter, r *http.Request) {
	target := s.local.DebugURL()
	if target == "" || !s.local.Alive() {
		http.Error(w, "browser-node: Chromium is not running", http.StatusServiceUnavailable)
		return
	}
	// Proxy stays nil (never the environment's); the dial is egress's.
	d := websocket.Dialer{NetDialContext: loopbackDial(s.o.Resolver), HandshakeTimeout: 10 * time.Second}
	up, resp, err := d.DialContext(r.Context(), target, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		http.Error(w, "browser-node: Chromium's CDP endpoint did not answer", http.StatusBadGateway)
		return
	}
	// Counted before the handshake answers: the client may open a session
	// proxy as soon as it has the answer.
	rid := relayID(r)
	s.mu.Lock()
	s.relays[rid]++
	s.mu.Unlock()
	defer s.relayEnded(rid)
	down, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		up.Close()
		return
	}
	up.SetReadLimit(256 << 20)
	down.SetReadLimit(256 << 20)
	done := make(chan struct{}, 2)
	pipe := func(dst, src *websocket.Conn) {
		defer func() { done <- struct{}{} }()
		for {
			op, data, err := src.ReadMessage()
			if err != nil {
				return
			}
			if err := dst.WriteMessage(op, data); err != nil {
				return
			}
		}
	}
	go pipe(up, down)
	go pipe(down, up)
	select {
	case <-done:
	case <-s.stop:
	}
	up.Close()
	down.Close()
}

// relayID is the request's relay id: node.HeaderRelay when it is 32 hex
// digits, else "" (a client that does not open session proxies).
func relayID(r *http.Request) string {
	v := r.Header.Get(node.HeaderRelay)
	if len(v) != 32 || strings.Trim(v, "0123456789abcdef") != "" {
		return ""
	}
	return v
}

// relayEnded closes the session proxies of relay rid once its last
// connection closed: the replica that drove them is gone, and Chromium
// disposed their BrowserContexts (created with disposeOnDetach).
func (s *Server) relayEnded(rid string) {
	s.mu.Lock()
	s.relays[rid]--
	var gone []*nodeSession
	var spares []*spare
	if s.relays[rid] <= 0 {
		delete(s.relays, rid)
		for id, ns := range s.sessions {
			if ns != nil && ns.relay == rid && rid != "" {
				gone = append(gone, ns)
				delete(s.sessions, id)
			}
		}
		spares = s.dropReservationsLocked(func(r *reservation) bool { return r.relay == rid })
	}
	s.mu.Unlock()
	for _, ns := range gone {
		s.closeSession(ns) // a spare's context, made by the node, is disposed here
	}
	for _, sp := range spares {
		s.closeSpare(sp)
	}
	if len(spares) > 0 {
		s.fillSpares()
	}
	if len(gone) > 0 {
		s.lg.Info("browser node: a replica's relay closed; its sessions were closed", "node", s.id, "sessions", len(gone))
		s.refresh(context.Background())
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// maxOpenBytes bounds an open request: its policy and a little more.
const maxOpenBytes = node.MaxPolicyBytes + 64<<10

// errNoPolicy answers an open request without a policy.
const errNoPolicy = "browser-node: the open request carries no session policy: the replica runs an older Gatehouse than this node. " +
	"Replicas and browser nodes must run the same version; upgrade the replica. (A node never judges a session with its own config instead.)"

// decodeOpen reads an open request strictly (node.OpenRequest, no unknown
// field, at most maxOpenBytes) and checks its policy's bounds (open then
// compiles it, judging every entry: browser.GatesFromPolicy). status and msg
// are the refusal's (msg one line, naming the fix).
func decodeOpen(r *http.Request) (in node.OpenRequest, status int, msg string) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxOpenBytes+1))
	if err != nil {
		return in, http.StatusBadRequest, "browser-node: could not read the open request"
	}
	if len(b) > maxOpenBytes {
		return in, http.StatusRequestEntityTooLarge, fmt.Sprintf("browser-node: the open request is over %d bytes (the session policy is bounded by node.MaxPolicyBytes)", maxOpenBytes)
	}
	// An old-shaped request ({"name", "active"}) has no policy: say so,
	// rather than name its unknown field.
	var probe struct {
		Policy json.RawMessage `json:"policy"`
	}
	if json.Unmarshal(b, &probe) == nil && (len(probe.Policy) == 0 || string(probe.Policy) == "null") {
		return in, http.StatusBadRequest, errNoPolicy
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, http.StatusBadRequest, "browser-node: bad open request: " + err.Error()
	}
	if dec.Decode(&json.RawMessage{}) != io.EOF {
		return in, http.StatusBadRequest, "browser-node: bad open request: trailing data"
	}
	if in.Policy == nil {
		return in, http.StatusBadRequest, errNoPolicy
	}
	if err := in.Policy.Bounds(); err != nil {
		return in, http.StatusBadRequest, "browser-node: the session policy is refused: " + err.Error()
	}
	return in, http.StatusOK, ""
}

// open starts a session proxy judged by the policy the replica sent
// (node.OpenRequest.Policy, built by browser.GatesFromPolicy as the
// replica builds its own gates): the strict or the open guard as
// Policy.Active says, Private Network Access unless the policy allows
// private URLs. The node's own config is not consulted; the metadata floor
// holds whatever the policy says.
func (s *Server) open(w http.ResponseWriter, r *http.Request) {
	in, status, msg := decodeOpen(r)
	if status != http.StatusOK {
		http.Error(w, msg, status)
		return
	}
	g, err := s.gatesFor(*in.Policy)
	if err != nil {
		http.Error(w, "browser-node: the session policy is refused: "+err.Error(), http.StatusBadRequest)
		return
	}
	rid := relayID(r)
	s.mu.Lock()
	if rid == "" || s.relays[rid] == 0 {
		s.mu.Unlock()
		http.Error(w, "browser-node: open the CDP relay first and name it in "+node.HeaderRelay, http.StatusConflict)
		return
	}
	var id string
	var sp, reclaimed *spare
	if in.Spare != "" {
		// A spare this relay reserved (reserve.go): its slot is its own.
		var status int
		if sp, status, msg = s.claimLocked(in.Spare, rid); sp == nil {
			s.mu.Unlock()
			http.Error(w, msg, status)
			return
		}
		id = in.Spare
		s.sessions[id] = nil
	} else {
		if s.closed || len(s.sessions) >= s.o.MaxSessions {
			s.mu.Unlock()
			w.Header().Set("Retry-After", strconv.Itoa(int(node.CapacityRetry/time.Second)))
			writeJSON(w, node.CapacityStatus, map[string]string{"reason": string(reason.BrowserCapacity)})
			return
		}
		id = newID()
		s.sessions[id] = nil // reserve the slot
		if sp = s.takeSpareLocked(); sp != nil {
			s.spare.stats.Hits++
		} else {
			reclaimed = s.reclaimLocked()
		}
	}
	s.mu.Unlock()
	if reclaimed != nil {
		s.closeSpare(reclaimed)
	}
	var p *egress.ProxySession
	if sp != nil {
		// The spare's proxy refused everything so far; from here on it
		// judges with this policy (bound once, before the answer).
		p = sp.p
		err = p.Bind(egress.ProxyOptions{Guard: g.Guard(in.Policy.Active), AllowPrivateFromPublic: g.AllowPrivate})
		p.SetName(safeName(in.Name))
	} else {
		p, err = egress.NewProxySession(egress.ProxyOptions{Name: safeName(in.Name), Guard: g.Guard(in.Policy.Active), Logger: s.lg,
			Authenticate: true, AllowPrivateFromPublic: g.AllowPrivate})
	}
	s.fillSpares()
	s.mu.Lock()
	if err != nil || s.closed {
		delete(s.sessions, id)
		s.mu.Unlock()
		if sp != nil {
			s.closeSpare(sp)
		} else if p != nil {
			p.Close()
		}
		http.Error(w, "browser-node: could not start a session proxy", http.StatusInternalServerError)
		return
	}
	ns := &nodeSession{relay: rid, p: p, allows: map[string]func(){}}
	if sp != nil {
		ns.bctx = sp.bctx // made by the node: disposed by it when the session closes
		ns.spareRelay = rid
	}
	if in.Handle {
		// Not tied to the relay: another replica may attach to it. It
		// lives while its index key does (the record's TTL).
		ns.relay, ns.handle = "", true
	}
	s.mu.Unlock()
	if in.Handle {
		// The index key first, and the session in the table (its slot
		// stays reserved) only then: closeOrphanHandles closes a handle
		// session whose key it does not find, and must not find one that
		// is still opening.
		ttl := time.Duration(min(max(in.TTLMS, 1000), 24*3600*1000)) * time.Millisecond
		if err := handle.PutProxy(r.Context(), s.o.Registry.Client(), s.id, id, ttl); err != nil {
			s.mu.Lock()
			delete(s.sessions, id)
			s.mu.Unlock()
			s.closeSession(ns)
			http.Error(w, "browser-node: could not index the session proxy in Redis", http.StatusInternalServerError)
			return
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.closeSession(ns)
		http.Error(w, "browser-node: the node is shutting down", http.StatusServiceUnavailable)
		return
	}
	s.sessions[id] = ns
	s.mu.Unlock()
	user, pass := p.Credentials()
	s.refresh(r.Context())
	s.lg.Info("browser node session opened", "node", s.id, "session", safeName(in.Name))
	or := node.OpenResponse{ID: id, Proxy: p.URL(), User: user, Pass: pass}
	if sp != nil {
		or.Context, or.Target = sp.bctx, sp.target
		if s.dlg != nil && in.Handle {
			s.dlg.watch(r.Context(), sp.bctx, sp.target) // dialogs.go
		}
	}
	writeJSON(w, http.StatusOK, or)
}

// maxGatesCache bounds the compiled policies a node keeps (gatesFor).
const maxGatesCache = 8

// gatesFor returns the gates of pol (browser.GatesFromPolicy), compiled
// once per distinct policy: a replica sends the same policy with every
// session of its (Active aside, which picks a guard and is not compiled),
// and compiling a blocklist costs about 1 ms per 1 000 rules. The cache
// is keyed by the SHA-256 of the policy's JSON and holds at most
// maxGatesCache entries (emptied when full).
func (s *Server) gatesFor(pol node.Policy) (*browser.Gates, error) {
	pol.Active = false
	b, err := json.Marshal(pol)
	if err != nil {
		return nil, err
	}
	k := sha256.Sum256(b)
	s.mu.Lock()
	g := s.gates[k]
	s.mu.Unlock()
	if g != nil {
		return g, nil
	}
	if g, err = browser.GatesFromPolicy(pol, s.o.Resolver, s.o.AllowAddrPorts, s.hostService); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.gates) >= maxGatesCache {
		clear(s.gates)
	}
	s.gates[k] = g
	s.mu.Unlock()
	return g, nil
}

// hostService reports whether ap is one of the node's own services, which
// no session's request may reach whatever its policy allows (egress
// Options.HostService): on a loopback or unspecified address (0.0.0.0
// reaches a socket bound to 127.0.0.1), Chromium's debugging port (a page
// that reached it would list and drive every tab of the node: every
// principal's), the node's listener, its default proxy and every session
// proxy; and the listener's own address when it is not loopback.
func (s *Server) hostService(ap netip.AddrPort) bool {
	a, port := ap.Addr(), ap.Port()
	if lap, err := netip.ParseAddrPort(s.addr); err == nil && lap.Addr().Unmap() == a && lap.Port() == port {
		return true
	}
	if !a.IsLoopback() && !a.IsUnspecified() {
		return false
	}
	for _, hp := range []string{s.debugHostPort, s.addr, s.ln.Addr().String(), s.defProxAddr} {
		if _, p, err := net.SplitHostPort(hp); err == nil && p == strconv.Itoa(int(port)) {
			return true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ns := range s.sessions {
		if ns == nil {
			continue // a slot reserved by an open still starting
		}
		if _, p, err := net.SplitHostPort(ns.p.Addr()); err == nil && p == strconv.Itoa(int(port)) {
			return true
		}
	}
	for _, r := range s.reserved {
		if _, p, err := net.SplitHostPort(r.sp.p.Addr()); err == nil && p == strconv.Itoa(int(port)) {
			return true
		}
	}
	return false
}

// safeName bounds a session name from a replica for logs.
func safeName(n string) string {
	if len(n) > 200 {
		n = n[:200]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, n)
}

func (s *Server) session(id string) *nodeSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

var cdpIDRe = lazyregexp.New(`^[0-9A-Za-z._-]{1,64}$`)

func (s *Server) del(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	ns := s.sessions[id]
	if ns != nil {
		delete(s.sessions, id)
	}
	s.mu.Unlock()
	if ns == nil {
		http.NotFound(w, r)
		return
	}
	s.closeSession(ns)
	if ns.handle {
		handle.DeleteProxy(r.Context(), s.o.Registry.Client(), s.id, id)
	}
	s.refresh(r.Context())
	s.fillSpares() // a slot is free
	writeJSON(w, http.StatusOK, struct{}{})
}

// get answers a handle session's proxy (URL and credential) to a replica
// that attaches to the session (node.Client.AttachProxy).
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ns := s.session(id)
	if ns == nil || !ns.handle {
		http.NotFound(w, r)
		return
	}
	user, pass := ns.p.Credentials()
	writeJSON(w, http.StatusOK, node.OpenResponse{ID: id, Proxy: ns.p.URL(), User: user, Pass: pass})
}

func wire(rs []egress.Refusal) []node.WireRefusal {
	now := time.Now()
	out := make([]node.WireRefusal, 0, len(rs))
	for _, r := range rs {
		out = append(out, node.WireRefusal{AgeMS: now.Sub(r.Time).Milliseconds(), Method: r.Method, Host: r.Host, Port: r.Port, Reason: r.Reason})
	}
	return out
}

func ago(ms int64) time.Time { return time.Now().Add(-time.Duration(max(ms, 0)) * time.Millisecond) }

// op runs one node.OpRequest on a session proxy.
func (s *Server) op(w http.ResponseWriter, r *http.Request) {
	ns := s.session(r.PathValue("id"))
	if ns == nil {
		http.NotFound(w, r)
		return
	}
	var in node.OpRequest
	if err := decode(r, &in); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	p := ns.p
	var out node.OpResponse
	switch in.Op {
	case node.OpRefusedSince:
		out.Refusals = wire(p.RefusedSince(ago(in.AgeMS)))
	case node.OpFailedSince:
		out.Refusals = wire(p.FailedSince(ago(in.AgeMS)))
	case node.OpCommitted:
		p.TopLevelCommitted(in.Target, in.URL, in.Opener)
	case node.OpGone:
		p.TopLevelGone(in.Target)
	case node.OpNavigating:
		p.TopLevelNavigating(in.Target)
	case node.OpPrivateDocs:
		out.OK = p.PrivateDocuments()
	case node.OpPublicTops:
		out.IDs = p.PublicTopLevels(in.Target)
	case node.OpDrain:
		q := time.Duration(min(max(in.QuietMS, 0), 5000)) * time.Millisecond
		mx := time.Duration(min(max(in.MaxMS, 0), 10000)) * time.Millisecond
		out.OK = p.Drain(r.Context(), q, mx)
	case node.OpAllowNav:
		done := p.AllowNavigation(in.Target, in.Host, in.Port)
		s.mu.Lock()
		ns.next++
		tok := fmt.Sprint(ns.next)
		ns.allows[tok] = done
		s.mu.Unlock()
		out.Token = tok
	case node.OpAllowDone:
		s.mu.Lock()
		done := ns.allows[in.Token]
		delete(ns.allows, in.Token)
		s.mu.Unlock()
		if done != nil {
			done()
		}
	case node.OpStats:
		out.Stats = p.Stats()
	case node.OpSetName:
		p.SetName(safeName(in.Name))
	case node.OpBind:
		if !ns.handle || !cdpIDRe.MatchString(in.Target) {
			http.Error(w, "bad bind", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		if why := s.bindRefusalLocked(ns, in.Target); why != "" {
			s.mu.Unlock()
			http.Error(w, "browser-node: "+why, http.StatusConflict)
			return
		}
		ns.bctx = in.Target
		s.mu.Unlock()
		if s.dlg != nil {
			s.dlg.watch(r.Context(), in.Target, "") // its tab, primed (dialogs.go)
		}
	case node.OpDialog, node.OpAnswer:
		s.mu.Lock()
		bctx := ns.bctx
		s.mu.Unlock()
		if bctx == "" || (in.Target != "" && !cdpIDRe.MatchString(in.Target)) {
			http.Error(w, "bad dialog request", http.StatusBadRequest)
			return
		}
		if s.dlg == nil {
			break // not watched: none known
		}
		d, _, open := s.dlg.pending(bctx, in.Target)
		var err error
		if in.Op == node.OpAnswer {
			d, open, err = s.dlg.answer(r.Context(), bctx, in.Target, in.Accept, in.Prompt)
		}
		if err != nil {
			http.Error(w, "browser-node: the dialog was not answered", http.StatusBadGateway)
			return
		}
		if open {
			out.Dialog = &d
		}
	default:
		http.Error(w, "unknown op", http.StatusBadRequest)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// bindRefusalLocked is why session ns may not bind BrowserContext bctx
// (node.OpBind; "" when it may): a session binds once, and never to a
// context another session or a spare of this node holds — a second bind
// would let its close dispose another session's context, or its dialog
// calls reach another session's tabs.
func (s *Server) bindRefusalLocked(ns *nodeSession, bctx string) string {
	if ns.bctx != "" {
		return "the session is already bound to a BrowserContext"
	}
	for _, o := range s.sessions {
		if o != nil && o.bctx == bctx {
			return "that BrowserContext is another session's"
		}
	}
	for _, sp := range s.spare.ready {
		if sp.bctx == bctx {
			return "that BrowserContext is a spare's"
		}
	}
	for _, r := range s.reserved {
		if r.sp != nil && r.sp.bctx == bctx {
			return "that BrowserContext is a reserved spare's"
		}
	}
	return ""
}
