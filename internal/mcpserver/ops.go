package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/metrics"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Operability endpoints of the HTTP listener (issue 18 item 4; docs/mcp.md
// "Health, readiness and metrics").
const (
	PathHealth  = "/healthz" // 200 while the process serves
	PathReady   = "/readyz"  // 200 when it can serve; 503 and a one-line reason otherwise
	PathMetrics = "/metrics" // Prometheus text format
)

// DefaultReplicaMaxCalls is the replica-wide cap on tool calls running at
// once when HTTPOptions.ReplicaMaxCalls is 0 (config mcp.replica_max_calls).
const DefaultReplicaMaxCalls = config.DefaultReplicaMaxCalls

// ReplicaRetryAfter is the Retry-After (seconds) of a 429 at the replica cap:
// a load balancer retries another replica at once; a client talking to this
// one directly waits a second.
const ReplicaRetryAfter = 1

// ReadyCheck is one readiness condition of /readyz: Check returns nil when
// the server can serve, else an error whose first line (redacted) follows
// Name in the 503 body. Checks run on every probe, in order, under the
// probe's context with a 2 s bound; they must be cheap (a Redis PING).
//
// An Advisory check does not make the server unready: its failure is named
// in the 200 body ("ready; browser: no browser node has room") so a probe or
// an operator sees it, while a load balancer keeps sending the calls the
// server can still serve (a full browser fleet must not take web_extract
// down with it; the browser tools refuse with browser_capacity meanwhile).
type ReadyCheck struct {
	Name     string
	Check    func(ctx context.Context) error
	Advisory bool
}

// readyTimeout bounds all readiness checks of one probe.
const readyTimeout = 2 * time.Second

// ops is the operability state of one listener: the replica call cap, the
// drain flag and the metrics it serves.
type ops struct {
	checks   []ReadyCheck
	max      int64
	metrics  *metrics.Set
	draining atomic.Bool
	inflight atomic.Int64
	idle     chan struct{} // signalled (non-blocking) when inflight drops to 0
}

func newOps(o HTTPOptions, m *metrics.Set) *ops {
	max := int64(o.ReplicaMaxCalls)
	if max <= 0 {
		max = DefaultReplicaMaxCalls
	}
	return &ops{checks: o.ReadyChecks, max: max, metrics: m, idle: make(chan struct{}, 1)}
}

// serveHealth answers /healthz and /readyz (GET or HEAD; no token, no Host
// check: they reveal nothing beyond up/ready and the failing check's name
// and first error line) and reports whether r was one of them.
func (p *ops) serveHealth(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != PathHealth && r.URL.Path != PathReady {
		return false
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		io.WriteString(w, "use GET\n")
		return true
	}
	if r.URL.Path == PathHealth {
		io.WriteString(w, "ok\n")
		return true
	}
	why, notes := p.notReady(r.Context())
	if why != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "not ready: "+why+"\n")
		return true
	}
	io.WriteString(w, "ready"+notes+"\n")
	return true
}

// notReady returns why the server cannot serve now ("" when it can):
// "draining" after Drain began, else the first failing check as
// "name: first line of its error". notes lists the failing Advisory checks
// the same way, each as "; name: line" (empty when none failed).
func (p *ops) notReady(ctx context.Context) (why, notes string) {
	if p.draining.Load() {
		return "draining", ""
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for _, c := range p.checks {
		if err := c.Check(ctx); err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			line := c.Name + ": " + urlsafe.RedactLog(msg)
			if !c.Advisory {
				return line, ""
			}
			notes += "; " + line
		}
	}
	return "", notes
}

// admit reserves a replica call slot for a tools/call POST. At the cap it
// answers 429 with Retry-After and a JSON-RPC error whose data carries
// reason too_many_calls; while draining, 503 with Retry-After and reason
// server_draining (a load balancer moves on either way). The 429 has the
// principal limits' shape: code CodeLimited, data {"reason",
// "retry_after_s"}. A non-empty refused (the reason code) means the answer
// was written.
func (p *ops) admit(w *rpcErrorWriter, id any) (release func(), refused reason.Code) {
	// Counted before the drain flag is read: Drain sets the flag, then
	// waits for the count, so a call is either refused here or waited for.
	n := p.inflight.Add(1)
	done := func() {
		if p.inflight.Add(-1) == 0 {
			select {
			case p.idle <- struct{}{}:
			default:
			}
		}
	}
	if p.draining.Load() {
		done()
		w.Header().Set("Retry-After", strconv.Itoa(ReplicaRetryAfter))
		w.Header().Set("Connection", "close")
		writeRPCErrorWith(w, http.StatusServiceUnavailable, id, jsonrpc.CodeInternalError,
			"Service Unavailable: this Gatehouse replica is shutting down; retry on another replica", map[string]string{"reason": string(reason.ServerDraining)})
		return nil, reason.ServerDraining
	}
	if n > p.max {
		done()
		p.metrics.ReplicaCapped()
		w.Header().Set("Retry-After", strconv.Itoa(ReplicaRetryAfter))
		writeRPCErrorWith(w, http.StatusTooManyRequests, id, CodeLimited,
			fmt.Sprintf("Too Many Requests: this Gatehouse replica is running its maximum of %d tool calls (mcp.replica_max_calls); retry after %d s or on another replica", p.max, ReplicaRetryAfter),
			map[string]any{"reason": reason.TooManyCalls, "retry_after_s": ReplicaRetryAfter})
		return nil, reason.TooManyCalls
	}
	p.metrics.InFlight(1)
	return func() {
		p.metrics.InFlight(-1)
		done()
	}, ""
}

// metricsHandler serves the Set's metrics (Prometheus text format).
func metricsHandler(m *metrics.Set) http.Handler {
	if m == nil {
		m = metrics.Default()
	}
	return m.Handler()
}

// ServeMetrics serves /metrics, /healthz and /readyz of h on its own
// listener at addr (host:port; `gatehouse mcp --metrics-addr`), without the
// bearer token or Host check of the MCP listener: bind it to an address only
// the scraper reaches. It returns once the listener is bound; the listener
// is closed with h.
func (h *HTTPServer) ServeMetrics(addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(PathMetrics, metricsHandler(h.server.opts.Metrics))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !h.ops.serveHealth(w, r) {
			http.NotFound(w, r)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	h.mu.Lock()
	h.extra = append(h.extra, srv)
	h.mu.Unlock()
	go srv.Serve(ln)
	return ln.Addr(), nil
}

// waitIdle waits until no tool call is in flight (true) or ctx ends (false,
// unless the last call ended at the same time).
func (p *ops) waitIdle(ctx context.Context) bool {
	for p.inflight.Load() > 0 {
		select {
		case <-p.idle:
		case <-ctx.Done():
			return p.inflight.Load() == 0
		}
	}
	return true
}

// ErrDrainTimeout is returned by Drain when tool calls were still running at
// its deadline; they were cancelled (their clients get a cancelled result or
// a closed connection).
var ErrDrainTimeout = errors.New("drain deadline reached with tool calls still running")

// StopAccepting begins a drain: /readyz answers 503 "draining" and a new
// tool call gets 503 with Retry-After from now on, and the listener is
// closed when it returns (new connections are refused; kept-alive ones close
// after their current request). Calls already running go on. It is
// idempotent; Drain calls it.
func (h *HTTPServer) StopAccepting() {
	h.stopOnce.Do(func() {
		h.ops.draining.Store(true)
		closed := make(chan struct{})
		// Shutdown closes the listeners, then runs the OnShutdown funcs,
		// then waits for active connections (SSE streams too) to go idle:
		// it runs aside, and Drain's closeAll ends what is left.
		// (Close runs them again: closing once.)
		var once sync.Once
		h.srv.RegisterOnShutdown(func() { once.Do(func() { close(closed) }) })
		go h.srv.Shutdown(context.Background())
		<-closed
	})
}

// Drain shuts the server down gracefully (SIGTERM): StopAccepting, then the
// tool calls already running finish and deliver their results. Once none is
// running, or when ctx ends, every session and connection is closed. It
// returns nil when every call finished, or an error wrapping
// ErrDrainTimeout naming how many calls were cut off.
func (h *HTTPServer) Drain(ctx context.Context) error {
	h.StopAccepting()
	defer h.server.endPrincipalSessions()
	var err error
	if !h.ops.waitIdle(ctx) {
		// The deadline: interrupt what still runs, and give each call a
		// moment to deliver its (interrupted) result before the
		// connections close.
		err = fmt.Errorf("%w: %d cancelled", ErrDrainTimeout, h.ops.inflight.Load())
		h.server.interruptSessions("")
		gctx, cancel := context.WithTimeout(context.Background(), deleteGrace)
		h.ops.waitIdle(gctx)
		cancel()
	}
	h.server.interruptSessions("")
	if cerr := h.closeAll(); err == nil {
		err = cerr
	}
	return err
}
