package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	// <token>). Required when Addr is not loopback: Listen refuses to start
	// without one. Compared in constant time.
	Token string
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
}

// HTTPServer is a listening streamable HTTP MCP server.
type HTTPServer struct {
	// URL is the endpoint clients connect to (http://host:port/mcp).
	URL    string
	server *Server
	srv    *http.Server
	ln     net.Listener
	done   chan error
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
	if !bind.IsLoopback() && o.Token == "" {
		return nil, fmt.Errorf("refusing to serve MCP on %s without a bearer token: a non-loopback address is reachable from other machines. "+
			"Set --token or GATEHOUSE_MCP_TOKEN (clients send \"Authorization: Bearer <token>\"), or bind 127.0.0.1", o.Addr)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	h := s.httpHandler(o, bind, port)
	hs := &HTTPServer{
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	h.srv.Close()
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

// httpHandler is the security chain in front of the SDK handler: Host and
// Origin checks (403) → bearer token (401) → body cap (413) → /mcp.
func (s *Server) httpHandler(o HTTPOptions, bind netip.Addr, port int) http.Handler {
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
	hosts := hostSet{bind: bind, port: port, names: map[string]bool{}}
	for _, h := range o.AllowedHosts {
		hosts.names[normHost(h)] = true
	}
	var want [32]byte
	if o.Token != "" {
		want = sha256.Sum256([]byte(o.Token))
	}
	mux := http.NewServeMux()
	mux.Handle(Path, sdk)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// DNS rebinding (MCP security best practices, "Local MCP server
		// compromise"): the Host a browser sends is the attacker's name.
		if !hosts.allowHost(r.Host) {
			http.Error(w, "Forbidden: Host "+strconv.Quote(r.Host)+" does not name this server (DNS-rebinding protection); connect to "+
				hosts.example()+", or start gatehouse mcp with --allow-host NAME for a DNS name", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !hosts.allowOrigin(origin) {
			http.Error(w, "Forbidden: cross-origin request from "+strconv.Quote(origin), http.StatusForbidden)
			return
		}
		if o.Token != "" {
			got, ok := bearer(r.Header.Get("Authorization"))
			sum := sha256.Sum256([]byte(got))
			if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="gatehouse"`)
				http.Error(w, "Unauthorized: send Authorization: Bearer <token> (the --token / GATEHOUSE_MCP_TOKEN value)", http.StatusUnauthorized)
				return
			}
		}
		if r.ContentLength > maxBody {
			http.Error(w, "Request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if r.Method == http.MethodDelete && r.URL.Path == Path {
			// DELETE /mcp ends the session: interrupt its calls first.
			if id := r.Header.Get("Mcp-Session-Id"); id != "" {
				s.interruptSessions(id)
			}
		}
		mux.ServeHTTP(w, r)
	})
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

// allowOrigin reports whether a browser Origin is this server itself (http or
// https with an allowed host and the right port); "null" and other sites are
// refused.
func (h hostSet) allowOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	hp := u.Host
	if u.Port() == "" {
		hp = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	return h.allowHost(hp)
}

func (h hostSet) example() string {
	return net.JoinHostPort(displayHost(h.bind), strconv.Itoa(h.port))
}
