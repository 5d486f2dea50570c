package browser

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Browser nodes (issue 19; docs/browser.md "Browser nodes"). With
// Options.Nodes set (GATEHOUSE_REDIS_URL configured) and at least one node
// registered, a new session is placed on the node with the fewest sessions
// relative to its capacity: a new BrowserContext in that node's Chromium,
// reached over the node's CDP relay, behind a session proxy the node runs
// (node.Proxy, driven over the node's control API with the same calls as
// an in-process egress.ProxySession), so every gate of the Manager holds
// unchanged. A node record is data, not trust: its address is judged by
// browser.node_allow (node.Allow) and dialed only through an egress guard
// whose one exception is that address. With no node registered, sessions
// stay in this process's Chromium exactly as without Redis.

// capacityRetry is the Retry-After of browser_capacity: sessions end at
// unknown times, and a node's record shows a freed slot at once.
const capacityRetry = time.Second

// sessionProxy is a session's egress proxy as the Manager uses it: an
// in-process *egress.ProxySession, or a browser node's *node.Proxy.
type sessionProxy interface {
	URL() string
	Credentials() (user, pass string)
	SetName(name string)
	Stats() egress.ProxyStats
	Close() error
	RefusedSince(t time.Time) []egress.Refusal
	FailedSince(t time.Time) []egress.Refusal
	TopLevelCommitted(id, rawURL, opener string)
	TopLevelGone(id string)
	TopLevelNavigating(id string)
	PrivateDocuments() bool
	PublicTopLevels(except string) []string
	Drain(ctx context.Context, quiet, max time.Duration) bool
	AllowNavigation(id, host string, port uint16) (done func())
}

var (
	_ sessionProxy = (*egress.ProxySession)(nil)
	_ sessionProxy = (*node.Proxy)(nil)
)

// NodeOptions configures placement on browser nodes.
type NodeOptions struct {
	// Registry is the node registry in Redis; required.
	Registry *node.Registry
	// Allow is browser.node_allow (node.ParseAllow); the zero value allows
	// loopback only.
	Allow node.Allow
	// Token is sent to nodes (node.EnvToken); "" sends none.
	Token string
}

// nodeState is the Manager's view of the browser nodes: the options and
// one CDP connection per node in use.
type nodeState struct {
	o     *NodeOptions
	mu    sync.Mutex
	conns map[string]*nodeConn // by node id
}

// nodeConn is one node's client and CDP connection.
type nodeConn struct {
	c *node.Client
	l *backend.Local
}

func (n *nodeState) init(o *NodeOptions) {
	if o != nil && o.Registry != nil {
		cp := *o
		n.o = &cp
	}
	n.conns = map[string]*nodeConn{}
}

func (n *nodeState) configured() bool { return n.o != nil }

func (n *nodeState) close() {
	n.mu.Lock()
	conns := n.conns
	n.conns = map[string]*nodeConn{}
	n.mu.Unlock()
	for _, c := range conns {
		c.l.Close() // remote: disposes our contexts, never stops the node's browser
		c.c.CloseIdle()
	}
}

// NodeReadiness is the readiness reason of browser placement: nil when no
// node is configured or registered (sessions run in this process) or when
// some registered node has room; else an error "no browser node has room"
// (for /readyz), or the registry's failure.
func (m *Manager) NodeReadiness(ctx context.Context) error {
	if !m.nodes.configured() {
		return nil
	}
	recs, _, err := m.nodes.o.Registry.List(ctx)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	if _, err := node.Pick(recs, nil); err != nil {
		return errors.New("no browser node has room")
	}
	return nil
}

// placeOnNode opens key's session on a registered node. placed false and
// no error: no node is registered (the caller uses this process's
// Chromium). Nodes are tried in placement order; a node whose address
// node_allow refuses, that is full, or that fails is skipped. Every node
// full: browser_capacity; every node refused: browser_node_refused.
func (m *Manager) placeOnNode(ctx context.Context, key string, active bool) (*Session, bool, error) {
	if !m.nodes.configured() {
		return nil, false, nil
	}
	recs, bad, err := m.nodes.o.Registry.List(ctx)
	for _, b := range bad {
		m.logger.Warn("browser node record ignored", "err", b)
	}
	if err != nil {
		return nil, true, reason.Wrap(reason.StateUnavailable, "", "Shared state unavailable: the browser node registry in Redis did not answer, so no browser session can be placed. Start or fix Redis (calls succeed again once it answers), or unset GATEHOUSE_REDIS_URL to run one replica with its own browser.", err)
	}
	if len(recs) == 0 {
		return nil, false, nil
	}
	skip := map[string]bool{}
	var other error // the last failure that is not a full node
	for {
		rec, perr := node.Pick(recs, skip)
		if perr != nil {
			if other != nil {
				return nil, true, other
			}
			return nil, true, node.CapacityError(capacityRetry)
		}
		skip[rec.ID] = true
		s, err := m.openOnNode(ctx, rec, key, active)
		if err == nil {
			return s, true, nil
		}
		if reasonCode(err) == reason.BrowserCapacity {
			m.logger.Info("browser node full", "node", rec.ID)
		} else {
			other = err
			cause := err
			if u := errors.Unwrap(err); u != nil {
				cause = u
			}
			m.logger.Warn("browser node skipped", "node", rec.ID, "addr", rec.Addr, "reason", reasonCode(err), "cause", cause.Error())
		}
		if ctx.Err() != nil {
			return nil, true, err
		}
	}
}

func reasonCode(err error) reason.Code {
	if rerr := reason.As(err); rerr != nil {
		return rerr.Code
	}
	return reason.BrowserFailed
}

// openOnNode opens a session proxy on rec's node and a BrowserContext
// behind it in the node's Chromium.
func (m *Manager) openOnNode(ctx context.Context, rec node.Record, key string, active bool) (*Session, error) {
	nc, err := m.nodeConn(ctx, rec)
	if err != nil {
		return nil, err
	}
	p, err := nc.c.OpenProxy(ctx, key, active)
	if err != nil {
		return nil, err
	}
	user, pass := p.Credentials()
	tab, err := nc.l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), ProxyUser: user, ProxyPass: pass, ProxyProbeURL: egress.ProxyAuthProbeURL,
		OnTopLevel:   topLevelReporter(p),
		DialogPolicy: dialogPolicy(m.cfg), DialogTimeout: m.cfg.Browser.DialogTimeout,
		DownloadDir: m.downloadDir(), DownloadCap: m.downloadCap,
		// The session ends with this replica's connection (its proxy too:
		// the node closes a relay's proxies when the relay closes).
		DisposeOnDetach: true})
	if err != nil {
		p.Close()
		if !nc.l.Alive() {
			m.dropNodeConn(rec.ID, nc)
		}
		return nil, err
	}
	m.logger.Info("browser session placed on a node", "session", key, "node", rec.ID)
	return &Session{active: active, tab: tab, proxy: p, nextRef: 1, node: rec.ID,
		frameK: map[backend.FrameID]int{}, frameOf: map[int]backend.FrameID{}, frameRef: map[int]int{}}, nil
}

// nodeConn returns the live CDP connection to rec's node, connecting (the
// address judged by node_allow, dialed through egress) when there is none.
func (m *Manager) nodeConn(ctx context.Context, rec node.Record) (*nodeConn, error) {
	n := &m.nodes
	n.mu.Lock()
	defer n.mu.Unlock()
	if c, ok := n.conns[rec.ID]; ok {
		if c.l.Alive() && c.c.Record.Addr == rec.Addr {
			return c, nil
		}
		c.l.Close()
		delete(n.conns, rec.ID)
	}
	cl, err := node.NewClient(ctx, rec, n.o.Allow, m.resolver, n.o.Token)
	if err != nil {
		return nil, err
	}
	l, err := backend.ConnectHeader(ctx, cl.CDPURL(), cl.Header(), cl.DialContext, m.logger)
	if err != nil {
		return nil, err
	}
	c := &nodeConn{c: cl, l: l}
	n.conns[rec.ID] = c
	return c, nil
}

func (m *Manager) dropNodeConn(id string, c *nodeConn) {
	n := &m.nodes
	n.mu.Lock()
	if n.conns[id] == c {
		delete(n.conns, id)
	}
	n.mu.Unlock()
	c.l.Close()
}
