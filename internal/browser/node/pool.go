package node

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// CapacityRetry is the Retry-After of browser_capacity: sessions end at
// unknown times, and a node's record shows a freed slot at once.
const CapacityRetry = time.Second

// Pool is a replica's view of the registered nodes: the registry, the
// node_allow judgement and one CDP connection per node in use. Safe for
// concurrent use.
type Pool struct {
	reg      *Registry
	allow    Allow
	token    string
	resolver egress.Resolver
	lg       *slog.Logger

	mu     sync.Mutex
	conns  map[string]*Conn // by node id
	listAt time.Time        // when list was read from the registry (placement's cache)
	list   []Record

	held *heldPool // reserved, pre-attached spares (held.go); nil: none
}

// ListCacheTTL is how long placement reuses the registry's node list: a
// read is a SCAN of the Redis keyspace plus an MGET, paid by every new
// session otherwise. It is half the nodes' refresh period
// (HeartbeatTTL/3), and the cached counts are kept current by this
// replica's own placements (a placed session counts at once; a node that
// answered browser_capacity counts as full), so placement stays spread
// out; a node that is gone or full is skipped as before (its open fails),
// and when the cached counts say every node is full the registry is read
// again before browser_capacity is answered (a slot may have freed).
// An empty list is never cached: a replica started before its nodes finds
// them at once.
const ListCacheTTL = time.Second

// Conn is one node's client and the CDP connection to its Chromium.
type Conn struct {
	Client  *Client
	Browser *backend.Local // attached (Connect): Close disconnects, never stops the node's browser
}

// NewPool returns the pool of the nodes in reg, dialed where allow allows
// (names resolved with r; nil = system DNS), sending token; lg (nil:
// discard) receives skipped nodes.
func NewPool(reg *Registry, allow Allow, token string, r egress.Resolver, lg *slog.Logger) *Pool {
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Pool{reg: reg, allow: allow, token: token, resolver: r, lg: lg, conns: map[string]*Conn{}}
}

// Readiness is nil when no node is registered (sessions run in the
// replica) or some registered node that browser.node_allow allows has
// room; else "no browser node has room", "no registered browser node is
// allowed by browser.node_allow" or the registry's failure. A node record
// this replica may not dial never counts as room (breaker9 D5).
func (p *Pool) Readiness(ctx context.Context) error {
	recs, _, err := p.reg.List(ctx)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	if recs, _ = p.allowed(ctx, recs, false); len(recs) == 0 {
		return errors.New("no registered browser node is allowed by browser.node_allow")
	}
	if _, err := Pick(recs, nil); err != nil {
		return errors.New("no browser node has room")
	}
	return nil
}

// Room reports how many nodes are registered and how many of those
// browser.node_allow allows have room now (where a new session would go).
func (p *Pool) Room(ctx context.Context) (registered, room int, err error) {
	recs, _, err := p.reg.List(ctx)
	if err != nil {
		return 0, 0, err
	}
	ok, _ := p.allowed(ctx, recs, false)
	for _, r := range ok {
		if !r.Full() {
			room++
		}
	}
	return len(recs), room, nil
}

// allowed returns the records of recs whose address browser.node_allow
// allows (Allow.Resolve), and the last refusal (logged when log is set).
func (p *Pool) allowed(ctx context.Context, recs []Record, log bool) ([]Record, error) {
	var ok []Record
	var refused error
	for _, r := range recs {
		if _, err := p.allow.Resolve(ctx, p.resolver, r.Addr); err != nil {
			refused = err
			if log {
				p.lg.Warn("browser node skipped", "node", r.ID, "addr", r.Addr, "cause", errors.Unwrap(err))
			}
			continue
		}
		ok = append(ok, r)
	}
	return ok, refused
}

// Place opens a session named name on a registered node: a session proxy
// on the node judged with pol (the session's policy from this replica's
// config), then open (the caller's BrowserContext behind it; its error
// closes the proxy and skips the node). placed false with no error: no
// node is registered. Nodes node_allow refuses are left out first (logged;
// browser_node_refused when no node is left), so a refused record never
// masks capacity; the others are tried in placement order (Pick), one that
// is full or that fails is skipped. Every allowed node full:
// browser_capacity; else the last other failure (browser_failed, …); a
// registry failure is state_unavailable.
//
// handleTTL > 0 opens a handle session's proxy (Client.OpenHandleProxy):
// it outlives this replica's relay while its index key lives.
func (p *Pool) Place(ctx context.Context, name string, pol Policy, handleTTL time.Duration, open func(c *Conn, px *Proxy) error) (placed bool, id string, err error) {
	recs, cached, err := p.nodeList(ctx)
	if err != nil {
		return true, "", reason.Wrap(reason.StateUnavailable, "", "Shared state unavailable: the browser node registry in Redis did not answer, so no browser session can be placed. Start or fix Redis (calls succeed again once it answers), or unset GATEHOUSE_REDIS_URL to run one replica with its own browser.", err)
	}
	if len(recs) == 0 {
		return false, "", nil
	}
	recs, refusal := p.allowed(ctx, recs, true)
	if len(recs) == 0 {
		return true, "", refusal
	}
	skip := map[string]bool{}
	var other error // the last failure that is not a full node
	for {
		rec, perr := Pick(recs, skip)
		if perr != nil && cached && other == nil {
			// Full by the cached counts: a slot may have freed since; the
			// registry decides before browser_capacity.
			cached = false
			if recs, err = p.freshList(ctx); err != nil {
				return true, "", reason.Wrap(reason.StateUnavailable, "", "Shared state unavailable: the browser node registry in Redis did not answer, so no browser session can be placed. Start or fix Redis (calls succeed again once it answers), or unset GATEHOUSE_REDIS_URL to run one replica with its own browser.", err)
			}
			clear(skip)
			continue
		}
		if perr != nil {
			if other != nil {
				return true, "", other
			}
			return true, "", CapacityError(CapacityRetry)
		}
		skip[rec.ID] = true
		err := p.openOn(ctx, rec, name, pol, handleTTL, open)
		if err == nil {
			p.counted(rec.ID, func(r *Record) { r.Sessions++ })
			return true, rec.ID, nil
		}
		if rerr := reason.As(err); rerr != nil && rerr.Code == reason.BrowserCapacity {
			p.counted(rec.ID, func(r *Record) { r.Sessions = r.Capacity })
			p.lg.Info("browser node full", "node", rec.ID)
		} else {
			other = err
			cause := err
			if u := errors.Unwrap(err); u != nil {
				cause = u
			}
			p.lg.Warn("browser node skipped", "node", rec.ID, "addr", rec.Addr, "cause", cause.Error())
		}
		if ctx.Err() != nil {
			return true, "", err
		}
	}
}

// nodeList returns the registered nodes for placement: the cached list
// when younger than ListCacheTTL (cached true), else the registry's
// (cached when not empty). The caller may modify the returned slice.
func (p *Pool) nodeList(ctx context.Context) (recs []Record, cached bool, err error) {
	p.mu.Lock()
	if len(p.list) > 0 && time.Since(p.listAt) < ListCacheTTL {
		recs := append([]Record(nil), p.list...)
		p.mu.Unlock()
		return recs, true, nil
	}
	p.mu.Unlock()
	recs, err = p.freshList(ctx)
	return recs, false, err
}

// freshList reads the registry and caches the list (when not empty).
func (p *Pool) freshList(ctx context.Context) ([]Record, error) {
	recs, bad, err := p.reg.List(ctx)
	for _, b := range bad {
		p.lg.Warn("browser node record ignored", "err", b)
	}
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.list, p.listAt = append([]Record(nil), recs...), time.Now()
	p.mu.Unlock()
	return recs, nil
}

// counted applies a placement's outcome on node id to the cached list.
func (p *Pool) counted(id string, f func(*Record)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.list {
		if p.list[i].ID == id {
			f(&p.list[i])
		}
	}
}

func (p *Pool) openOn(ctx context.Context, rec Record, name string, pol Policy, handleTTL time.Duration, open func(c *Conn, px *Proxy) error) error {
	c, err := p.conn(ctx, rec)
	if err != nil {
		return err
	}
	defer p.held.kick()
	if tried, err := p.openHeld(ctx, rec, c, name, pol, handleTTL, open); tried {
		return err
	}
	var px *Proxy
	if handleTTL > 0 {
		px, err = c.Client.OpenHandleProxy(ctx, name, pol, handleTTL)
	} else {
		px, err = c.Client.OpenProxy(ctx, name, pol)
	}
	if err != nil {
		return err
	}
	if err := open(c, px); err != nil {
		px.Close()
		if !c.Browser.Alive() {
			p.drop(rec.ID, c)
		}
		return err
	}
	return nil
}

// ErrNodeGone is returned by ConnTo when the node is not registered.
var ErrNodeGone = errors.New("the browser node is not registered")

// ConnTo returns the live connection to registered node id (connecting
// when there is none): ErrNodeGone when no such node is registered; a
// node that does not answer is the connection's error.
func (p *Pool) ConnTo(ctx context.Context, id string) (*Conn, error) {
	rec, ok, err := p.reg.Get(ctx, id)
	if err != nil {
		return nil, reason.Wrap(reason.StateUnavailable, "", "Shared state unavailable: the browser node registry in Redis did not answer. Start or fix Redis (calls succeed again once it answers).", err)
	}
	if !ok {
		return nil, ErrNodeGone
	}
	return p.conn(ctx, rec)
}

// Registered reports whether node id is registered now (false also when
// the registry does not answer).
func (p *Pool) Registered(ctx context.Context, id string) bool {
	_, ok, err := p.reg.Get(ctx, id)
	return ok && err == nil
}

// conn returns the live CDP connection to rec's node, connecting (the
// address judged by node_allow, dialed through egress) when there is none.
func (p *Pool) conn(ctx context.Context, rec Record) (*Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.conns[rec.ID]; ok {
		if c.Browser.Alive() && c.Client.Record.Addr == rec.Addr {
			return c, nil
		}
		c.Browser.Close()
		delete(p.conns, rec.ID)
	}
	cl, err := NewClient(ctx, rec, p.allow, p.resolver, p.token)
	if err != nil {
		return nil, err
	}
	l, err := backend.ConnectHeader(ctx, cl.CDPURL(), cl.Header(), cl.DialContext, p.lg)
	if err != nil {
		return nil, err
	}
	c := &Conn{Client: cl, Browser: l}
	p.conns[rec.ID] = c
	return c, nil
}

func (p *Pool) drop(id string, c *Conn) {
	p.mu.Lock()
	if p.conns[id] == c {
		delete(p.conns, id)
	}
	p.mu.Unlock()
	c.Browser.Close()
}

// Close disconnects from every node (the sessions' BrowserContexts, created
// with disposeOnDetach, end with the connection).
func (p *Pool) Close() {
	if p.held != nil {
		p.held.close(p.lg) // releases the held spares while the relays are up
	}
	p.mu.Lock()
	conns := p.conns
	p.conns = map[string]*Conn{}
	p.mu.Unlock()
	for _, c := range conns {
		c.Browser.Close()
		c.Client.CloseIdle()
	}
}
