package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/principal"
)

// HTTP defaults.
const (
	DefaultMaxBodyBytes = 1 << 20          // request body cap when HTTPOptions.MaxBodyBytes is 0 (bytes)
	DefaultSessionIdle  = 30 * time.Minute // idle session expiry when HTTPOptions.SessionIdle is 0
	Path                = "/mcp"           // the streamable HTTP endpoint
)

// HTTPOptions configure the streamable HTTP transport. The zero value of
// each field is the safe default; no environment variable can weaken them.
type HTTPOptions struct {
	// Addr is the address to listen on, host:port (port 0 picks one). The
	// host must be an IP address or "localhost". Default 127.0.0.1:0.
	Addr string
	// Token is the bearer token clients must send (Authorization: Bearer
	// <token>), the one-principal form (principal.Default). Token or Tokens
	// is required when Addr is not loopback: Listen refuses to start
	// without one. Compared in constant time (as a SHA-256).
	Token string
	// Tokens are the principals (the --tokens file): a client's bearer
	// token names the principal its calls run as. Not with Token.
	Tokens *principal.Tokens
	// Limiter admits each tools/call of a principal (concurrency cap and
	// rate; refusals are 429 with Retry-After). nil → an in-process
	// principal.Local with the default limits.
	Limiter principal.Limiter
	// AllowedHosts are extra host names (without port) accepted in the Host
	// and Origin headers, for servers reached through a DNS name. The bind
	// IP (and localhost names on a loopback bind) are always accepted.
	AllowedHosts []string
	// MaxBodyBytes caps a request body in bytes; larger requests get 413.
	// 0 → DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionIdle closes sessions that receive no request for this long
	// (their task ends). 0 → DefaultSessionIdle.
	SessionIdle time.Duration
	// ReadyChecks are the conditions /readyz checks, in order (the shared
	// state's Redis PING, a valid config); none: ready while serving.
	ReadyChecks []ReadyCheck
	// ReplicaMaxCalls caps the tool calls running at once over all
	// sessions (config mcp.replica_max_calls); a call past it gets HTTP 429
	// with Retry-After. 0 → DefaultReplicaMaxCalls.
	ReplicaMaxCalls int
	// SeparateMetrics leaves /metrics off this listener (it is served by
	// ServeMetrics on its own address, `--metrics-addr`). Otherwise
	// /metrics is served here behind the bearer token.
	SeparateMetrics bool
}

// HTTPServer is a listening streamable HTTP MCP server.
type HTTPServer struct {
	// URL is the endpoint clients connect to (http://host:port/mcp).
	URL    string
	server *Server
	srv    *http.Server
	ln     net.Listener
	done   chan error
	ops    *ops

	mu       sync.Mutex
	extra    []*http.Server // ServeMetrics listeners, closed with this one
	stopOnce sync.Once      // StopAccepting
}

// Listen validates o, binds the address and starts serving in the
// background. Errors: an Addr that is not host:port with an IP or localhost
// host; a non-loopback Addr without a Token (the message says how to set
// one); a bind failure.
func (s *Server) Listen(o HTTPOptions) (*HTTPServer, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want host:port, e.g. 127.0.0.1:8765: %v", o.Addr, err)
	}
	bind, err := bindAddr(host)
	if err != nil {
		return nil, err
	}
	if o.Token != "" && o.Tokens.Len() > 0 {
		return nil, fmt.Errorf("--token (or GATEHOUSE_MCP_TOKEN) and --tokens cannot be used together: use --tokens FILE for several principals, or one --token")
	}
	if !bind.IsLoopback() && o.Token == "" && o.Tokens.Len() == 0 {
		return nil, fmt.Errorf("refusing to serve MCP on %s without a bearer token: a non-loopback address is reachable from other machines. "+
			"Set --token or GATEHOUSE_MCP_TOKEN, or --tokens FILE for several principals (clients send \"Authorization: Bearer <token>\"), or bind 127.0.0.1", o.Addr)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	p := newOps(o, s.opts.Metrics)
	h := s.httpHandler(o, bind, port, p)
	hs := &HTTPServer{
		ops:    p,
		server: s,
		URL:    "http://" + net.JoinHostPort(displayHost(bind), strconv.Itoa(port)) + Path,
		srv:    &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		ln:     ln,
		done:   make(chan error, 1),
	}
	go func() { hs.done <- hs.srv.Serve(ln) }()
	return hs, nil
}

// Addr returns the bound address.
func (h *HTTPServer) Addr() net.Addr { return h.ln.Addr() }

// Wait blocks until the server stops or ctx ends; on ctx end it shuts the
// server down (closing every session, so their tasks end).
func (h *HTTPServer) Wait(ctx context.Context) error {
	select {
	case err := <-h.done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		return h.Close()
	}
}

// Close stops the server and closes its connections and sessions.
func (h *HTTPServer) Close() error {
	h.server.interruptSessions("")
	defer h.server.endPrincipalSessions()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	if cerr := h.closeAll(); err == nil {
		err = cerr
	}
	return err
}

// closeAll closes the listener, every connection and the ServeMetrics
// listeners at once.
func (h *HTTPServer) closeAll() error {
	err := h.srv.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range h.extra {
		x.Close()
	}
	return err
}

func bindAddr(host string) (netip.Addr, error) {
	if strings.EqualFold(host, "localhost") {
		return netip.MustParseAddr("127.0.0.1"), nil
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("--http host %q: use an IP address (127.0.0.1, ::1, 0.0.0.0) or localhost", host)
	}
	return a.Unmap(), nil
}

func displayHost(a netip.Addr) string {
	if a.IsUnspecified() {
		if a.Is4() {
			return "127.0.0.1"
		}
		return "::1"
	}
	return a.String()
}

// httpHandler is the security chain in front of the SDK handler: /healthz
// and /readyz (no checks: they reveal nothing) → Host and Origin checks
// (403) → bearer token (401) → /metrics → body cap (413) → replica call cap
// (429) → /mcp.
func (s *Server) httpHandler(o HTTPOptions, bind netip.Addr, port int, p *ops) http.Handler {
	maxBody := o.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
	}
	idle := o.SessionIdle
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      idle,
		MaxRequestBodyBytes: maxBody,
		// The SDK's own rebinding check refuses every non-loopback Host on a
		// loopback connection, including names the user allowed; hostSet
		// (below, always on, not switchable by any environment variable)
		// enforces the same rule plus the allowed names, so it stands in
		// for the SDK's check only then.
		DisableLocalhostProtection: len(o.AllowedHosts) > 0,
		Logger:                     sdkLogger(s.opts.Logger),
	})
	// Requests of protocol 2026-07-28 and later, which carry no session,
	// are served by the SDK's stateless handler (principals.go).
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		MaxRequestBodyBytes: maxBody,
		// The POST is the whole call: a client that goes away cancels it.
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   len(o.AllowedHosts) > 0,
		Logger:                       sdkLogger(s.opts.Logger),
	})
	s.mu.Lock()
	s.principalIdle = idle
	s.mu.Unlock()
	auth := o.Tokens
	if o.Token != "" {
		auth = principal.SingleToken(o.Token)
	}
	lim := o.Limiter
	if lim == nil {
		lim = principal.NewLocal(principal.Limits{})
	}
	hosts := hostSet{bind: bind, port: port, names: map[string]bool{}}
	for _, h := range o.AllowedHosts {
		hosts.names[normHost(h)] = true
	}
	mux := http.NewServeMux()
	mux.Handle(Path, sdk)
	posts := &postCounter{n: map[string]int{}}
	metricsH := metricsHandler(s.opts.Metrics)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if p.serveHealth(rw, r) {
			return
		}
		w := &rpcErrorWriter{ResponseWriter: rw}
		defer w.finish()
		// DNS rebinding (MCP security best practices, "Local MCP server
		// compromise"): the Host a browser sends is the attacker's name.
		if !hosts.allowHost(r.Host) {
			writeRPCError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest, "Forbidden: Host "+strconv.Quote(r.Host)+" does not name this server (DNS-rebinding protection); connect to "+
				hosts.example()+", or start gatehouse mcp with --allow-host NAME for a DNS name")
			return
		}
		// Host names are case-insensitive (RFC 9110 §4.2.3, RFC 4343): the
		// SDK's own loopback check compares "localhost" exactly, so it gets
		// the canonical form of a Host that hostSet accepted.
		r.Host = strings.ToLower(r.Host)
		if origin := r.Header.Get("Origin"); origin != "" && !hosts.allowOrigin(origin) {
			writeRPCError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest, "Forbidden: cross-origin request from "+strconv.Quote(origin)+
				"; only this server's own origin (http://"+hosts.example()+") may call it")
			return
		}
		name := principal.Default
		if auth.Len() > 0 {
			got, ok := bearer(r.Header.Get("Authorization"))
			who, found := auth.Lookup(got) // constant time
			if !ok || !found {
				// RFC 6750 §3: a 401 names the Bearer scheme.
				w.Header().Set("WWW-Authenticate", `Bearer realm="gatehouse"`)
				writeRPCError(w, http.StatusUnauthorized, nil, jsonrpc.CodeInvalidRequest, "Unauthorized: send Authorization: Bearer <token> (the --token / GATEHOUSE_MCP_TOKEN value, or your token of the --tokens file)")
				return
			}
			name = who
		}
		r = r.WithContext(principal.With(r.Context(), name))
		if r.URL.Path == PathMetrics && !o.SeparateMetrics {
			metricsH.ServeHTTP(rw, r)
			return
		}
		if r.ContentLength > maxBody {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Request body too large: the cap is %d bytes (--max-body-bytes)", maxBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		sid := r.Header.Get("Mcp-Session-Id")
		var info postInfo
		if r.Method == http.MethodPost && r.URL.Path == Path {
			var ok bool
			if info, ok = s.checkPost(w, r, sid, maxBody); !ok {
				return
			}
		}
		if owner, ok := s.owners.owner(sid); ok && owner != name {
			sessionNotFound(w) // another principal's session
			return
		}
		if info.calls > 0 {
			// The replica's cap first (its 429 lets a load balancer move
			// on; a draining replica answers 503), then the principal's.
			release, refused := p.admit(w, w.id)
			if refused != "" {
				s.refusedHTTP(r.Context(), info.tools, refused)
				return
			}
			defer release()
			releasePrincipal, refused := admit(w, r, lim, info.calls, w.id)
			if refused != "" {
				s.refusedHTTP(r.Context(), info.tools, refused)
				return
			}
			defer releasePrincipal()
		}
		if info.sessionless {
			stateless.ServeHTTP(w, r.WithContext(withSessionless(r.Context())))
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == Path {
			if sid != "" {
				posts.add(sid, 1)
				defer posts.add(sid, -1)
			}
		}
		if r.Method == http.MethodDelete && r.URL.Path == Path && sid != "" {
			// DELETE /mcp ends the session: interrupt its calls first, and
			// let each in-flight POST deliver its (interrupted) result
			// before the SDK closes the session and its streams (MCP
			// 2025-06-18 basic/transports §Session Management: a session is
			// ended by DELETE; every request still gets its response).
			s.interruptSessions(sid)
			posts.wait(sid, deleteGrace)
		}
		mux.ServeHTTP(w, r)
	})
}

// sessionVersion is the protocol version the HTTP session sid negotiated
// (from its initialize request, expectedVersion); "" before initialize or
// for an unknown session.
func (s *Server) sessionVersion(sid string) string {
	if sid == "" {
		return ""
	}
	for ss := range s.mcp.Sessions() {
		if ss.ID() == sid {
			if p := ss.InitializeParams(); p != nil {
				return expectedVersion(p.ProtocolVersion)
			}
			return ""
		}
	}
	return ""
}

// deleteGrace bounds how long a DELETE waits for the session's in-flight
// calls to answer after they were interrupted.
const deleteGrace = 5 * time.Second

// checkPost validates a POST /mcp body before the SDK sees it, with the
// rules of the stdio transport (checkMessage): a body that is not JSON gets
// 400 with -32700, a message that is not JSON-RPC 2.0 ({"jsonrpc":"2.0","id":3}
// without "method", an id that is null or not a string or integer) 400 with
// -32600; a request without Mcp-Session-Id that is not initialize gets 400
// (MCP 2025-06-18 basic/transports §Session Management: "Servers that
// require a session ID SHOULD respond to requests without an Mcp-Session-Id
// header (other than initialization) with HTTP 400 Bad Request"), unless it
// is a request of protocol 2026-07-28 or later, which has no session
// (inspectPost). It restores r.Body and reports whether the request may go
// on, and what inspectPost found.
func (s *Server) checkPost(w *rpcErrorWriter, r *http.Request, sid string, maxBody int64) (postInfo, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Request body too large: the cap is %d bytes (--max-body-bytes)", maxBody))
		} else {
			writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Bad Request: reading the body failed")
		}
		return postInfo{}, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Bad Request: POST needs a JSON-RPC message as its body")
		return postInfo{}, false
	}
	if !json.Valid(t) {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "Parse error")
		return postInfo{}, false
	}
	if depth(t) > maxDepth {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: JSON nested deeper than %d levels", maxDepth))
		return postInfo{}, false
	}
	info := inspectPost(r.Header, t)
	info.sessionless = info.sessionless && sid == ""
	if t[0] == '[' {
		// The SDK refuses batches from 2025-06-18 on, judging by the
		// Mcp-Protocol-Version header (2025-03-26 when absent); the
		// session's own version decides here, as on stdio (breaker7 D15).
		if v := s.sessionVersion(sid); v >= noBatches {
			writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, batchRefusal(v, "POST"))
			return postInfo{}, false
		}
		return info, true
	}
	id, why := checkMessage(t)
	if why == dropResponse {
		why = "a response needs a string or integer id"
	}
	if why != "" {
		writeRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+why)
		return postInfo{}, false
	}
	w.id = id // converted SDK errors echo it
	if msg := checkParams(t); msg != "" {
		writeRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidParams, msg)
		return postInfo{}, false
	}
	if nb, ok := dropEmptySession(r.Header, t); ok { // session "" is no session (breaker9 D8)
		t = nb
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(nb)), int64(len(nb))
		r.Header.Del(HeaderParamSession)
	}
	if msg := sessionParamMismatch(r.Header, t); msg != "" {
		writeRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidParams, msg)
		return postInfo{}, false
	}
	if sid == "" && !info.sessionless {
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(t, &m)
		if m.Method != "initialize" {
			writeRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest,
				"Bad Request: Mcp-Session-Id header missing; send initialize first and echo the Mcp-Session-Id header of its response on every later request")
			return postInfo{}, false
		}
	}
	return info, true
}

// postCounter counts the POST requests in flight per Mcp-Session-Id.
type postCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *postCounter) add(id string, d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[id] += d; p.n[id] <= 0 {
		delete(p.n, id)
	}
}

// wait returns once no POST of session id is in flight, or after max.
func (p *postCounter) wait(id string, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		n := p.n[id]
		p.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// writeRPCError writes an HTTP error whose body is a JSON-RPC 2.0 error
// response (§5.1) with Content-Type application/json, so a client's JSON-RPC
// layer can read it; id is the request's id when known, else null.
func writeRPCError(w http.ResponseWriter, status int, id any, code int64, msg string) {
	writeRPCErrorWith(w, status, id, code, msg, nil)
}

// writeRPCErrorWith is writeRPCError with the error's data member (nil:
// none): {"reason": code, …} on every refusal of ours at the HTTP level.
func writeRPCErrorWith(w http.ResponseWriter, status int, id any, code int64, msg string, data any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("X-Content-Type-Options")
	w.WriteHeader(status)
	w.Write(errorReply(id, code, msg, data))
}

// rpcErrorWriter turns the SDK's plain-text HTTP errors (http.Error: 400
// malformed payload or batch, 404 session not found, 405, 415, 413, …) into
// JSON-RPC error bodies like writeRPCError's: code -32603 for 5xx, -32601
// for an unknown method, -32600 otherwise, the SDK's text as the message,
// the request's id when known. Every other response passes
// through unchanged (and streams: Flush reaches the connection).
type rpcErrorWriter struct {
	http.ResponseWriter
	id      any // the request's id, when one valid message was posted
	convert bool
	status  int
	buf     bytes.Buffer
}

func (w *rpcErrorWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.convert, w.status = true, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rpcErrorWriter) Write(p []byte) (int, error) {
	if w.convert {
		return w.buf.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// FlushError flushes a streamed response (http.ResponseController); a
// response being converted is held until finish.
func (w *rpcErrorWriter) FlushError() error {
	if w.convert {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a converted error.
func (w *rpcErrorWriter) finish() {
	if !w.convert {
		return
	}
	w.convert = false
	msg := strings.TrimSpace(w.buf.String())
	code := int64(jsonrpc.CodeInvalidRequest)
	switch {
	case w.status >= 500:
		code = jsonrpc.CodeInternalError
	case strings.HasPrefix(msg, "JSON RPC not handled"):
		// The SDK's refusal of an unknown method before dispatch
		// (jsonrpc2.ErrNotHandled); stdio answers the same call -32601.
		code = jsonrpc.CodeMethodNotFound
	}
	writeRPCError(w.ResponseWriter, w.status, w.id, code, msg)
}

func bearer(h string) (string, bool) {
	const p = "Bearer "
	if len(h) < len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), true
}

// hostSet decides which Host/Origin hosts name this server.
type hostSet struct {
	bind  netip.Addr
	port  int
	names map[string]bool // extra names (lower-case, no trailing dot)
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// allowHost reports whether a Host header (host[:port]) names this server:
// the port, when given, must be the bound port (absent only for port 80);
// the host must be the bind IP, a loopback name or IP on a loopback bind, any
// IP literal on an unspecified (0.0.0.0/::) bind, or an AllowedHosts name.
func (h hostSet) allowHost(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	if port == "" {
		if h.port != 80 {
			return false
		}
	} else if port != strconv.Itoa(h.port) {
		return false
	}
	host = normHost(host)
	if host == "" {
		return false
	}
	if h.names[host] {
		return true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		switch {
		case a == h.bind:
			return true
		case h.bind.IsLoopback() || h.bind.IsUnspecified():
			return a.IsLoopback() || (h.bind.IsUnspecified() && !a.IsUnspecified())
		}
		return false
	}
	return host == "localhost" && (h.bind.IsLoopback() || h.bind.IsUnspecified())
}

// allowOrigin reports whether a browser Origin is this server itself: scheme
// http (the server speaks plain HTTP, so an https origin is another origin:
// RFC 6454 §4 compares scheme, host and port), an allowed host (compared
// case-insensitively, as allowHost does) and the bound port; "null" and
// other sites are refused.
func (h hostSet) allowOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || u.Host == "" {
		return false
	}
	hp := u.Host
	if u.Port() == "" {
		hp = net.JoinHostPort(u.Hostname(), "80")
	}
	return h.allowHost(hp)
}

func (h hostSet) example() string {
	return net.JoinHostPort(displayHost(h.bind), strconv.Itoa(h.port))
}
