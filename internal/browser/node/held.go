package node

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
)

// Held spares: a replica's reserved, pre-attached spares on its nodes
// (issue 19's navigate budget; the node's side is nodeserver/reserve.go).
// A session placed from a node's ready spare still pays the attach to its
// tab on the call's path (~13 sequential CDP round trips through the
// relay, 150–180 ms on a loaded 2-core machine); the in-process Manager's
// spare is attached already. So the Pool reserves ready spares on the
// nodes it places on (Client.ReserveSpare), attaches to each in the
// background with the TabOptions a session gets (HeldOptions.TabOptions),
// and a placement on a node where it holds one only binds it
// (Client.BindSpare: one HTTP call; the node binds the session's policy
// to the spare's proxy, once, before it answers) and hands the attached
// tab to the caller (Proxy.Attached).
//
// Sizing, like the in-process pool: per node, as many as placements on it
// in the last HeldDemandWindow, at least the floor and at most the
// ceiling (HeldOptions), from this replica's first placement on; refilled
// by one background goroutine after each placement (heldDelay later
// while the node still holds one) and every heldTick (never on a call's
// path), one reservation at a time, only on nodes the cached
// list shows with room, and not before Retry-After on a node that had no
// spare ready. A held spare is renewed every heldRenew (the node closes an
// unrenewed one after ReserveTTL), dropped when its tab dies, its
// connection or its node goes, or demand falls, and released on Close.
const (
	// DefaultHeldSpares is the floor: held spares kept per node once this
	// replica placed a session.
	DefaultHeldSpares = 1
	// DefaultMaxHeldSpares is the ceiling per node. A held spare is one of
	// the node's spares (ready + reserved ≤ its --max-spares), so the
	// node's memory is unchanged; the ceiling only bounds what one replica
	// takes of them.
	DefaultMaxHeldSpares = 2
	// HeldDemandWindow is how far back placements count toward the number
	// held.
	HeldDemandWindow = 60 * time.Second
	heldTick         = time.Second
	// heldDelay is the pause before the refill after a placement while
	// every node placed on still holds a spare: the session just placed
	// runs its next call (often another replica's attach to it) before
	// the refill's reservation and attach compete with it for the node's
	// CPU. A node left with none is refilled at once.
	heldDelay     = 300 * time.Millisecond
	heldRenew     = ReserveTTL / 3
	heldOpTimeout = 30 * time.Second
)

// HeldOptions configures a Pool's held spares (HoldSpares).
type HeldOptions struct {
	// TabOptions returns the options of a session's tab whose proxy is px
	// (the Manager's): the pool attaches with them ahead of any session,
	// so they must not depend on the session's principal or key.
	// Required.
	TabOptions func(px *Proxy) backend.TabOptions
	// Floor and Max are the least and most held per node; 0 means
	// DefaultHeldSpares, and DefaultMaxHeldSpares or Floor if more;
	// Floor < 0 or Max < 0 holds none.
	Floor, Max int
}

// HeldStats describes a Pool's held spares (tests, diagnostics).
type HeldStats struct {
	Held     int // reserved and attached now, all nodes
	Hits     int // placements served by a held spare
	Misses   int // placements on a node where none was held (or its bind was refused)
	Attaches int // AttachTab calls the pool made (in the background)
	// ConnAttaches is every AttachTab call made on this pool's node
	// connections, the pool's and its callers' (backend.Local.Attaches).
	ConnAttaches int64
}

type heldSpare struct {
	px      *Proxy
	tab     *backend.Tab
	c       *Conn
	renewed time.Time
}

type heldPool struct {
	o           HeldOptions
	floor, ceil int
	ctx         context.Context
	cancel      context.CancelFunc
	wake        chan struct{}
	wg          sync.WaitGroup

	mu        sync.Mutex
	spares    map[string][]*heldSpare // by node id, oldest first
	demand    map[string][]time.Time  // placements by node id, oldest first
	notBefore map[string]time.Time    // no reservation on the node before
	started   bool                    // a placement happened
	closed    bool
	stats     HeldStats
}

// HoldSpares starts keeping reserved, pre-attached spares on the nodes
// (see the comment above DefaultHeldSpares) until Close. Call it once,
// before the first Place; with Floor or Max < 0 it does nothing.
func (p *Pool) HoldSpares(o HeldOptions) {
	floor, ceil := o.Floor, o.Max
	if floor == 0 {
		floor = DefaultHeldSpares
	}
	if ceil == 0 {
		ceil = max(DefaultMaxHeldSpares, floor)
	}
	if floor < 0 || ceil < 0 || o.TabOptions == nil || p.held != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &heldPool{o: o, floor: min(floor, ceil), ceil: ceil, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		spares: map[string][]*heldSpare{}, demand: map[string][]time.Time{}, notBefore: map[string]time.Time{}}
	p.held = h
	h.wg.Add(1)
	go p.heldLoop(h)
}

// HeldStats returns the held spares' state and counters (zero without
// HoldSpares, ConnAttaches aside).
func (p *Pool) HeldStats() HeldStats {
	var st HeldStats
	if h := p.held; h != nil {
		h.mu.Lock()
		st = h.stats
		for _, ss := range h.spares {
			st.Held += len(ss)
		}
		h.mu.Unlock()
	}
	p.mu.Lock()
	for _, c := range p.conns {
		st.ConnAttaches += c.Browser.Attaches()
	}
	p.mu.Unlock()
	return st
}

// targetLocked is how many spares to hold on node id now. h.mu is held.
func (h *heldPool) targetLocked(id string, now time.Time) int {
	if !h.started || h.closed {
		return 0
	}
	d := h.demand[id]
	cut := now.Add(-HeldDemandWindow)
	for len(d) > 0 && d[0].Before(cut) {
		d = d[1:]
	}
	if len(d) == 0 {
		delete(h.demand, id)
	} else {
		h.demand[id] = d
	}
	return min(max(len(d), h.floor), h.ceil)
}

// take records a placement on node id and returns a held spare of it,
// attached over c with a live tab, or nil. Safe on a nil h (no held
// spares).
func (h *heldPool) take(id string, c *Conn) *heldSpare {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started = true
	d := append(h.demand[id], time.Now())
	if len(d) > h.ceil {
		d = append(d[:0], d[len(d)-h.ceil:]...)
	}
	h.demand[id] = d
	var out *heldSpare
	ss := h.spares[id]
	for i, s := range ss {
		if s.c == c && s.tab.Healthy() {
			out = s
			h.spares[id] = append(ss[:i:i], ss[i+1:]...)
			break
		}
	}
	if out != nil {
		h.stats.Hits++
	} else {
		h.stats.Misses++
	}
	return out
}

// kick wakes the refill. Safe on a nil h.
func (h *heldPool) kick() {
	if h == nil {
		return
	}
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// release closes a held spare: detaches from its tab and releases the
// reservation (the node disposes the context).
func (s *heldSpare) release() {
	s.tab.Close()
	s.px.Close()
}

// openHeld places a session on a spare held on c's node: the node binds
// pol to it (BindSpare) and open gets its proxy with the attached tab
// (Proxy.Attached). tried false: none was held, or the node no longer
// holds it (the caller opens as before, then kicks the refill).
func (p *Pool) openHeld(ctx context.Context, rec Record, c *Conn, name string, pol Policy, handleTTL time.Duration, open func(c *Conn, px *Proxy) error) (tried bool, err error) {
	s := p.held.take(rec.ID, c)
	// The refill starts once the caller's open is done (Pool.openOn): it
	// must not race the open for the node's ready spare.
	if s == nil {
		return false, nil
	}
	if err := c.Client.BindSpare(ctx, s.px, name, pol, handleTTL); err != nil {
		s.release()
		p.held.mu.Lock()
		p.held.stats.Hits--
		p.held.stats.Misses++
		p.held.mu.Unlock()
		if !errors.Is(err, ErrSpareGone) {
			p.lg.Info("browser node: a held spare was not bound", "node", rec.ID, "err", err)
		}
		return false, nil
	}
	s.px.attached.Store(s.tab)
	if err := open(c, s.px); err != nil {
		if t := s.px.Attached(); t != nil {
			t.Close()
		}
		s.px.Close()
		return true, err
	}
	return true, nil
}

// heldLoop keeps the held spares until Close: on each wake (a take) and
// tick it drops and renews (maintainHeld), then refills (fillHeld).
func (p *Pool) heldLoop(h *heldPool) {
	defer h.wg.Done()
	t := time.NewTicker(heldTick)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-h.wake:
			if !h.emptied() {
				pause := time.NewTimer(heldDelay)
				select {
				case <-h.ctx.Done():
					pause.Stop()
					return
				case <-h.wake: // another placement: refill now
				case <-pause.C:
				}
				pause.Stop()
			}
		case <-t.C:
		}
		p.maintainHeld(h)
		p.fillHeld(h)
	}
}

// maintainHeld drops the held spares whose tab died, whose connection was
// replaced or whose node is no longer registered, releases those beyond
// the target (the oldest first) and renews those due.
func (p *Pool) maintainHeld(h *heldPool) {
	recs, _, err := p.nodeList(h.ctx)
	live := map[string]bool{}
	for _, r := range recs {
		live[r.ID] = true
	}
	p.mu.Lock()
	conns := make(map[string]*Conn, len(p.conns))
	for id, c := range p.conns {
		conns[id] = c
	}
	p.mu.Unlock()
	now := time.Now()
	var drop, renew []*heldSpare
	h.mu.Lock()
	for id, ss := range h.spares {
		keep := ss[:0]
		for _, s := range ss {
			if !s.tab.Healthy() || conns[id] != s.c || err == nil && !live[id] {
				drop = append(drop, s)
			} else {
				keep = append(keep, s)
			}
		}
		if n := len(keep) - h.targetLocked(id, now); n > 0 {
			drop = append(drop, keep[:n]...)
			keep = append(keep[:0], keep[n:]...)
		}
		for _, s := range keep {
			if now.Sub(s.renewed) >= heldRenew {
				renew = append(renew, s)
			}
		}
		if len(keep) == 0 {
			delete(h.spares, id)
		} else {
			h.spares[id] = keep
		}
	}
	h.mu.Unlock()
	for _, s := range drop {
		s.release()
	}
	for _, s := range renew {
		ctx, cancel := context.WithTimeout(h.ctx, heldOpTimeout)
		err := s.c.Client.RenewSpare(ctx, s.px)
		cancel()
		h.mu.Lock()
		gone := errors.Is(err, ErrSpareGone) && h.remove(s)
		if err == nil {
			s.renewed = now
		}
		h.mu.Unlock()
		if gone {
			s.release()
		}
	}
}

// emptied reports whether a node placed on in the last HeldDemandWindow
// holds no spare.
func (h *heldPool) emptied() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := range h.demand {
		if len(h.spares[id]) == 0 {
			return true
		}
	}
	return false
}

// remove takes s out of the held spares; false when it is no longer
// there (taken meanwhile). h.mu is held.
func (h *heldPool) remove(s *heldSpare) bool {
	for id, ss := range h.spares {
		for i, x := range ss {
			if x == s {
				h.spares[id] = append(ss[:i:i], ss[i+1:]...)
				return true
			}
		}
	}
	return false
}

// fillHeld reserves and attaches spares, one at a time, on the allowed
// nodes with room (by the cached list) that are short of their target.
func (p *Pool) fillHeld(h *heldPool) {
	h.mu.Lock()
	started := h.started
	h.mu.Unlock()
	if !started {
		return
	}
	recs, _, err := p.nodeList(h.ctx)
	if err != nil {
		return
	}
	recs, _ = p.allowed(h.ctx, recs, false)
	for _, rec := range recs {
		for h.ctx.Err() == nil && !rec.Full() {
			now := time.Now()
			h.mu.Lock()
			short := now.After(h.notBefore[rec.ID]) && len(h.spares[rec.ID]) < h.targetLocked(rec.ID, now)
			h.mu.Unlock()
			if !short || !p.holdOne(h, rec) {
				break
			}
		}
	}
}

// holdOne reserves a spare on rec's node and attaches to it; false (and
// the node left alone for CapacityRetry) when that failed.
func (p *Pool) holdOne(h *heldPool, rec Record) bool {
	ctx, cancel := context.WithTimeout(h.ctx, heldOpTimeout)
	defer cancel()
	failFor := func(d time.Duration) bool {
		h.mu.Lock()
		h.notBefore[rec.ID] = time.Now().Add(d)
		h.mu.Unlock()
		return false
	}
	fail := func() bool { return failFor(CapacityRetry) }
	c, err := p.conn(ctx, rec)
	if err != nil {
		return fail()
	}
	px, err := c.Client.ReserveSpare(ctx)
	if errors.Is(err, ErrSparesOff) {
		return failFor(SparesOffRetry)
	} else if err != nil {
		return fail()
	}
	bctx, target := px.Spare()
	h.mu.Lock()
	h.stats.Attaches++
	h.mu.Unlock()
	tab, err := c.Browser.AttachTab(ctx, target, bctx, h.o.TabOptions(px))
	if err != nil {
		px.Close()
		p.lg.Debug("browser node: attaching to a reserved spare failed", "node", rec.ID, "err", err)
		return fail()
	}
	s := &heldSpare{px: px, tab: tab, c: c, renewed: time.Now()}
	h.mu.Lock()
	closed := h.closed
	if !closed {
		h.spares[rec.ID] = append(h.spares[rec.ID], s)
	}
	h.mu.Unlock()
	if closed {
		s.release()
		return false
	}
	return true
}

// close stops the refill and releases every held spare.
func (h *heldPool) close(lg interface{ Info(string, ...any) }) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	h.mu.Lock()
	all := h.spares
	h.spares = map[string][]*heldSpare{}
	st := h.stats
	h.mu.Unlock()
	for _, ss := range all {
		for _, s := range ss {
			s.release()
		}
	}
	lg.Info("browser node spares held by this replica", "hits", st.Hits, "misses", st.Misses, "attaches", st.Attaches)
}
