package browser

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
)

// The pool of spare sessions: each spare is a fresh BrowserContext with its
// own egress proxy and credential (primed), a blank tab whose renderer is
// started and whose isolated world is warmed, so a new session taken from it
// is usable in a few milliseconds. Making one is what a new session costs
// without the pool: a BrowserContext (~15 ms), a target and window (~100 ms)
// and a renderer starting, 0.3–1.3 s in all on a loaded 2-core machine
// (bench/newsession), which no CDP trimming removes: a BrowserContext never
// shares a renderer process with another one. A spare has never been used,
// so handing it to any key is the same as creating a session for it.
//
// The pool is sized by demand: it keeps as many spares as new local sessions
// started within the last SpareDemandWindow, at least SpareSessions and at
// most MaxSpareSessions, so a burst of new tasks is served from stock the
// second time it comes, and a quiet Manager holds only the floor. A taken
// spare is replaced by up to spareMakers makers; spares beyond the target are
// closed by the janitor.
const (
	// SpareSessions is the least number of spares kept ready while the
	// local browser runs.
	SpareSessions = 2
	// MaxSpareSessions caps the pool: a blank spare costs ~22 MB PSS
	// (measured with bench/newsession -prewarm 10), so the cap holds ~220 MB.
	MaxSpareSessions = 10
	// SpareDemandWindow is how far back new sessions count toward the
	// pool's size.
	SpareDemandWindow = 60 * time.Second
	// spareMakers is how many spares are made at once: on 2 cores one
	// renderer starts while the browser process does the other's window.
	spareMakers = 2
)

// spareDelay is the pause before making a spare when no caller waits for
// one and the pool holds at least its floor: the sessions just handed out run their first
// calls (a navigation) before a renderer start competes with them for the
// CPU. A caller that starts waiting cuts the pause.
const spareDelay = 250 * time.Millisecond

// spareState is the pool's bookkeeping (under Manager.mu); the ready spares
// are Manager.spares.
type spareState struct {
	making int           // makers running (fillSpare)
	done   chan struct{} // closed and replaced each time a maker finishes a spare (made or failed); nil when no maker runs
	fails  int           // spares that failed to be made (a waiter stops waiting on one)
	wait   int           // callers waiting in takeSpare
	wake   chan struct{} // a caller started waiting: cut the makers' pause (buffered spareMakers)
	demand []time.Time   // starts of new local sessions, oldest first (at most MaxSpareSessions kept)
	hits   int           // SpareStats.Hits
	waited int           // SpareStats.Waited
}

// spareTargetLocked returns how many spares the pool should hold now:
// the new local sessions of the last SpareDemandWindow, clamped to
// [SpareSessions, MaxSpareSessions]. m.mu is held.
func (m *Manager) spareTargetLocked(now time.Time) int {
	cut := now.Add(-SpareDemandWindow)
	d := m.spare.demand
	for len(d) > 0 && d[0].Before(cut) {
		d = d[1:]
	}
	m.spare.demand = d
	return min(max(len(d), SpareSessions), MaxSpareSessions)
}

// SpareStats describes the spare pool (diagnostics, tests, benchmarks).
type SpareStats struct {
	Ready  int // spares ready now
	Making int // makers running
	Target int // the pool size aimed for now
	Hits   int // new sessions served by a spare ready at once
	Waited int // new sessions served by a spare they waited for
}

// SpareStats returns the spare pool's state and counters.
func (m *Manager) SpareStats() SpareStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return SpareStats{Ready: len(m.spares), Making: m.spare.making, Target: m.spareTargetLocked(time.Now()),
		Hits: m.spare.hits, Waited: m.spare.waited}
}

// takeSpare records the demand, hands out a pre-started session with the
// guard this key needs, and tops the pool up at once (fillSpare). When none is
// ready but one is being made, it waits for the makers (bounded by ctx) rather
// than opening a context next to them: the two would share the CPU and both
// be late. nil means the caller must create a session itself (no spare fits,
// none is being made, or making one failed).
func (m *Manager) takeSpare(ctx context.Context, active bool) *Session {
	spareActive := m.gates.GuardActive(m.localBackend(), "")
	m.mu.Lock()
	m.spare.demand = append(m.spare.demand, time.Now())
	if n := len(m.spare.demand); n > MaxSpareSessions {
		m.spare.demand = append(m.spare.demand[:0], m.spare.demand[n-MaxSpareSessions:]...)
	}
	m.mu.Unlock()
	for waited := false; ; waited = true {
		var s *Session
		var stale []*Session
		m.mu.Lock()
		keep := m.spares[:0]
		for _, sp := range m.spares {
			switch {
			case !sp.tab.Healthy():
				stale = append(stale, sp)
			case s == nil && sp.active == active:
				s = sp
			default:
				keep = append(keep, sp)
			}
		}
		m.spares = keep
		switch {
		case s != nil && waited:
			m.spare.waited++
		case s != nil:
			m.spare.hits++
		}
		m.mu.Unlock()
		for _, sp := range stale {
			sp.tab.Close()
			sp.proxy.Close()
		}
		m.fillSpare()
		if s != nil {
			return s
		}
		if active != spareActive {
			return nil
		}
		m.mu.Lock()
		done, fails := m.spare.done, m.spare.fails
		if done == nil {
			m.mu.Unlock()
			return nil
		}
		m.spare.wait++
		for i := 0; i < spareMakers; i++ {
			select {
			case m.spare.wake <- struct{}{}:
			default:
			}
		}
		m.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
		}
		m.mu.Lock()
		m.spare.wait--
		failed := m.spare.fails != fails
		m.mu.Unlock()
		if failed || ctx.Err() != nil {
			return nil
		}
	}
}

// fillSpare starts makers (local backend, SSRF guard as for a local key), at
// most spareMakers at once, until the ready and in-the-making spares reach the
// pool's target.
func (m *Manager) fillSpare() {
	active := m.gates.GuardActive(m.localBackend(), "")
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.local == nil {
		return
	}
	want := m.spareTargetLocked(time.Now())
	for m.spare.making < spareMakers && len(m.spares)+m.spare.making < want {
		m.startMakerLocked(m.local, active)
	}
}

// startMakerLocked starts one maker: a goroutine that makes spares in l, one
// at a time, while the pool is short of its target. m.mu is held.
func (m *Manager) startMakerLocked(l *backend.Local, active bool) {
	if m.spare.done == nil {
		m.spare.done = make(chan struct{})
	}
	if m.spare.wake == nil {
		m.spare.wake = make(chan struct{}, spareMakers)
	}
	m.spare.making++
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for {
			m.mu.Lock()
			pause := m.spare.wait == 0 && len(m.spares) >= SpareSessions
			wake := m.spare.wake
			m.mu.Unlock()
			if pause {
				t := time.NewTimer(spareDelay)
				select {
				case <-t.C:
				case <-wake:
				case <-m.stop:
				}
				t.Stop()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			s, err := m.newSession(ctx, l, active)
			if err == nil {
				// Warm the tab's renderer and isolated world: the first script call
				// in a fresh tab waits for the renderer, paid here instead of by the
				// agent.
				err = s.callJS(ctx, "quiet", nil, nil)
			}
			cancel()
			m.mu.Lock()
			ok := err == nil && !m.closed && m.local == l
			if ok {
				m.spares = append(m.spares, s)
			} else {
				m.spare.fails++
			}
			close(m.spare.done) // every waiter wakes; one may take this spare
			m.spare.done = make(chan struct{})
			// This maker goes on while the pool, counting the other makers'
			// spares, is still short.
			more := ok && len(m.spares)+m.spare.making-1 < m.spareTargetLocked(time.Now())
			if !more {
				m.spare.making--
				if m.spare.making == 0 {
					m.spare.done = nil
				}
			}
			m.mu.Unlock()
			if !ok && s != nil {
				s.tab.Close()
				s.proxy.Close()
			}
			if !more {
				return
			}
		}
	}()
}

// trimSpares closes the spares beyond the pool's target (demand fell), the
// oldest first; the janitor calls it every tick.
func (m *Manager) trimSpares() {
	m.mu.Lock()
	var drop []*Session
	if n := len(m.spares) - m.spareTargetLocked(time.Now()); n > 0 {
		drop = append(drop, m.spares[:n]...)
		m.spares = append(m.spares[:0], m.spares[n:]...)
	}
	m.mu.Unlock()
	for _, s := range drop {
		s.tab.Close()
		s.proxy.Close()
	}
}
