package nodeserver

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
)

// Spare sessions on a node (issue 19: navigate on a node as fast as in one
// process). A new session costs a BrowserContext, a target and a renderer
// starting, 0.3–1.3 s on a loaded 2-core machine (internal/browser's
// spares.go has the figures), plus the proxy credential's probe; the
// in-process Manager hides it with its spare pool, and a node does the
// same: it keeps a few ready spares, each an Unbound session proxy
// (egress.ProxyOptions.Unbound: it refuses every request until bound) and
// a BrowserContext behind it, made by the node's own CDP connection, whose
// blank tab's renderer is started and whose proxy credential is primed;
// the node then detaches from the tab (the context and target live on
// until disposed).
//
// POST /v1/sessions takes a spare when one is ready: the replica's policy
// is bound to its proxy (egress.ProxySession.Bind, once, before the open
// answers), and the answer names its BrowserContext and target
// (node.OpenResponse.Context, Target) for the replica to attach to
// (backend.Local.AttachTab) instead of creating a tab. The node disposes
// the context when the session closes (DELETE, its relay closing, its
// handle's index key expiring). A spare was never driven by anyone, so
// taking it is the same as a new session for any policy: no cookie,
// storage or history is in it (only the proxy credential, which a new
// session primes the same way).
//
// Capacity: spares are not sessions (the record's count and the
// browser_capacity check count taken sessions only), but spares live only
// in free slots: a maker starts only while sessions + reserved spares +
// spares + spares in the making < --max-sessions, so the node never holds
// more BrowserContexts than --max-sessions and a full node holds no spare;
// its memory sizing is unchanged. A replica may reserve a ready spare
// (reserve.go) to attach to it ahead of a session; a reserved spare keeps
// its slot but never keeps a session out: an open that finds no free slot
// reclaims one.
//
// Sizing, like the in-process pool: as many spares as sessions opened in
// the last SpareDemandWindow, at least Options.Spares (DefaultSpares) and at
// most Options.MaxSpares (DefaultMaxSpares); spareMakers at once; extra
// spares are closed by the heartbeat loop.
const (
	// DefaultSpares is Options.Spares' default: the least number of spares
	// kept ready.
	DefaultSpares = 2
	// DefaultMaxSpares is Options.MaxSpares' default: a blank spare costs
	// ~22 MB PSS (the in-process figure; a node's headless shell's is lower).
	DefaultMaxSpares = 4
	// SpareDemandWindow is how far back opened sessions count toward the
	// number of spares.
	SpareDemandWindow = 60 * time.Second
	// spareMakers is how many spares are made at once.
	spareMakers = 2
	// spareMakeTimeout bounds making one spare.
	spareMakeTimeout = 30 * time.Second
)

// spare is one ready spare session: its unbound proxy and the
// BrowserContext and target behind it.
type spare struct {
	p      *egress.ProxySession
	bctx   string
	target string
}

// spareState is the pool's bookkeeping, under Server.mu.
type spareState struct {
	ready  []*spare
	making int
	demand []time.Time   // opens and reservations, oldest first (at most maxSpares kept)
	made   chan struct{} // closed when a maker finishes a spare (made or failed); nil when none waits
	stats  SpareStats    // the counters (SpareStats)
}

// spareLimits returns the pool's floor and cap from the options.
func (s *Server) spareLimits() (floor, ceil int) {
	floor, ceil = s.o.Spares, s.o.MaxSpares
	if floor == 0 {
		floor = DefaultSpares
	}
	if ceil == 0 {
		ceil = DefaultMaxSpares
	}
	floor, ceil = max(floor, 0), max(ceil, 0)
	return min(floor, ceil), ceil
}

// spareTargetLocked is how many spares the node should hold now (ready
// and in the making): the spares taken (opens and reservations) in the
// last SpareDemandWindow within [floor, cap], less the spares reserved
// now, and never more than the free slots. s.mu is held.
func (s *Server) spareTargetLocked(now time.Time) int {
	floor, ceil := s.spareLimits()
	cut := now.Add(-SpareDemandWindow)
	d := s.spare.demand
	for len(d) > 0 && d[0].Before(cut) {
		d = d[1:]
	}
	s.spare.demand = d
	// Reserved spares (reserve.go) are spares too: the node holds at most
	// ceil of them, ready or reserved, and never more than its free slots.
	want := min(max(len(d), floor), ceil) - len(s.reserved)
	return max(min(want, s.o.MaxSessions-len(s.sessions)-len(s.reserved)), 0)
}

// SpareStats describes a node's spare pool (tests, diagnostics): Ready,
// Making and Reserved spares now; Hits, opens served by a ready spare;
// Reservations made, Binds (opens of a reserved spare), Reclaimed
// (reservations closed for an open that needed the slot) and Expired
// (reservations neither bound nor renewed within the TTL), since the start.
type SpareStats struct {
	Ready, Making, Hits                      int
	Reserved, Reservations, Binds, Reclaimed int
	Expired                                  int
}

// SpareStats returns the spare pool's state.
func (s *Server) SpareStats() SpareStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.spare.stats
	st.Ready, st.Making, st.Reserved = len(s.spare.ready), s.spare.making, len(s.reserved)
	return st
}

// takeSpareLocked records a demand (an open or a reservation) and
// returns a ready spare, or nil. s.mu is held.
func (s *Server) takeSpareLocked() *spare {
	_, ceil := s.spareLimits()
	s.spare.demand = append(s.spare.demand, time.Now())
	if n := len(s.spare.demand); n > ceil {
		s.spare.demand = append(s.spare.demand[:0], s.spare.demand[n-ceil:]...)
	}
	return s.popSpareLocked()
}

// popSpareLocked returns a ready spare, or nil. s.mu is held.
func (s *Server) popSpareLocked() *spare {
	if len(s.spare.ready) == 0 {
		return nil
	}
	sp := s.spare.ready[0]
	s.spare.ready = s.spare.ready[1:]
	return sp
}

// fillSpares starts makers until the ready and in-the-making spares reach
// the target.
func (s *Server) fillSpares() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	want := s.spareTargetLocked(time.Now())
	for s.spare.making < spareMakers && len(s.spare.ready)+s.spare.making < want {
		s.spare.making++
		s.wg.Add(1)
		go s.spareMaker()
	}
}

// spareMaker makes spares, one at a time, while the pool is short.
func (s *Server) spareMaker() {
	defer s.wg.Done()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), spareMakeTimeout)
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		sp, err := s.makeSpare(ctx)
		cancel()
		s.mu.Lock()
		// Sessions opened meanwhile may have taken the free slots: a spare
		// beyond them is closed, not kept.
		ok := err == nil && !s.closed && len(s.sessions)+len(s.reserved)+len(s.spare.ready) < s.o.MaxSessions
		if ok {
			s.spare.ready = append(s.spare.ready, sp)
		}
		more := ok && len(s.spare.ready)+s.spare.making-1 < s.spareTargetLocked(time.Now())
		if !more {
			s.spare.making--
		}
		if s.spare.made != nil { // wake the reservations waiting (reserve.go)
			close(s.spare.made)
			s.spare.made = nil
		}
		s.mu.Unlock()
		if err != nil {
			s.lg.Debug("browser node: a spare session was not made", "node", s.id, "err", err)
		} else if !ok {
			s.closeSpare(sp)
		}
		if !more {
			return
		}
	}
}

// makeSpare makes one spare: an unbound proxy, a BrowserContext behind it
// with its credential primed and a blank tab whose renderer answered a
// script call; the node then detaches from the tab.
func (s *Server) makeSpare(ctx context.Context) (*spare, error) {
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "(spare)", Logger: s.lg, Authenticate: true, Unbound: true})
	if err != nil {
		return nil, err
	}
	user, pass := p.Credentials()
	tab, err := s.local.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), ProxyUser: user, ProxyPass: pass,
		ProxyProbeURL: egress.ProxyAuthProbeURL, Detach: true})
	if err != nil {
		p.Close()
		return nil, err
	}
	sp := &spare{p: p, bctx: tab.BrowserContextID(), target: tab.TargetID()}
	if _, err := tab.CallIsolated(ctx, "function() { return 1 }"); err != nil {
		tab.Dispose()
		p.Close()
		return nil, err
	}
	tab.Close() // detaches (TabOptions.Detach): the context and target stay
	return sp, nil
}

// closeSpare closes a spare's proxy and disposes its context.
func (s *Server) closeSpare(sp *spare) {
	sp.p.Close()
	if err := s.local.DisposeContext(context.Background(), sp.bctx); err != nil {
		s.lg.Debug("browser node: disposing a spare's context failed", "node", s.id, "err", err)
	}
}

// trimSpares closes the spares beyond the target (demand fell, or the
// sessions took the free slots), the oldest first, then tops the pool up.
func (s *Server) trimSpares() {
	s.mu.Lock()
	var drop []*spare
	if n := len(s.spare.ready) + s.spare.making - s.spareTargetLocked(time.Now()); n > 0 {
		n = min(n, len(s.spare.ready))
		drop = append(drop, s.spare.ready[:n]...)
		s.spare.ready = append(s.spare.ready[:0], s.spare.ready[n:]...)
	}
	s.mu.Unlock()
	for _, sp := range drop {
		s.closeSpare(sp)
	}
	s.fillSpares()
}
