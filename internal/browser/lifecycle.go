package browser

import (
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/browser/lifespec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// LifecycleOptions shortens the lifecycle's intervals (tests); zero values
// take the spec's.
type LifecycleOptions struct {
	// Tick is the janitor's interval (0: Options.JanitorTick, else 30 s).
	Tick time.Duration
	// Idle replaces browser.inactivity_timeout, without its 30 s floor.
	Idle time.Duration
	// OrphanEvery is the number of ticks between orphan sweeps (0:
	// lifespec.ReapEveryCycles(Tick)).
	OrphanEvery int
	// OrphanGrace replaces lifespec.OrphanGrace(idle).
	OrphanGrace time.Duration
	// CloseSession replaces a session's polite close in the janitor (tests
	// simulate failing cleanups with it); nil closes the tab.
	CloseSession func(key string) error
}

// tomb records a session the janitor reaped, so the task's next call gets
// session_expired instead of a silent blank browser.
type tomb struct {
	key  string
	idle time.Duration
	at   time.Time
	why  string // set when not an idle reap (a cloud provider's expiry, manager_cloud.go)
}

// lifecycle is the Manager's janitor state: reaped sessions and failed
// cleanups.
type lifecycle struct {
	opts LifecycleOptions

	mu    sync.Mutex
	tombs map[string]tomb // by session key and by owner task
	fails map[string]int  // key → consecutive failed cleanups

	creating    atomic.Int32 // session() calls in flight: the idle browser is not stopped under them
	rendering   atomic.Int32 // web_extract renders in flight (Manager.Render): nor under them
	stopPending bool         // a reap left no session: stop the browser (janitor goroutine only)
}

func (l *lifecycle) init(o LifecycleOptions) {
	l.opts = o
	l.tombs, l.fails = map[string]tomb{}, map[string]int{}
}

// idleTimeout is the inactivity timeout in effect.
func (m *Manager) idleTimeout() time.Duration {
	if m.life.opts.Idle > 0 {
		return m.life.opts.Idle
	}
	return max(m.cfg.Browser.InactivityTimeout, config.MinInactivityTimeout)
}

// expiredErr returns session_expired when key or task names a session the
// janitor reaped and no navigation has happened since.
func (m *Manager) expiredErr(task, key string) *reason.Error {
	m.life.mu.Lock()
	t, ok := m.life.tombs[key]
	if !ok {
		t, ok = m.life.tombs[task]
	}
	m.life.mu.Unlock()
	if !ok {
		return nil
	}
	if t.why != "" {
		return reason.Newf(reason.SessionExpired, "",
			"The browser session %q was closed at %s: %s; its page, cookies and refs are gone. Call browser_navigate to start a fresh session; nothing was run.",
			t.key, t.at.UTC().Format(time.RFC3339), t.why)
	}
	return reason.Newf(reason.SessionExpired, "",
		"The browser session %q was closed at %s after sitting idle for %s (browser.inactivity_timeout is %s); its page, cookies and refs are gone. Call browser_navigate to start a fresh session; nothing was run.",
		t.key, t.at.UTC().Format(time.RFC3339), t.idle.Round(time.Second), m.idleTimeout())
}

// clearExpired forgets the reaped sessions of task (its navigation succeeded).
func (m *Manager) clearExpired(task string) {
	m.life.mu.Lock()
	defer m.life.mu.Unlock()
	for k, t := range m.life.tombs {
		if k == task || sessionkey.BareTask(t.key) == task {
			delete(m.life.tombs, k)
		}
	}
}

// recycledNote is the result text of the call that recycled a suspect session.
func recycledNote(why string) string {
	return fmt.Sprintf("The previous browser session was recycled because %s; this call ran in a fresh session (page, cookies and refs of the old one are gone).", why)
}

// runJanitor ticks every tick: it closes sessions idle longer than the
// inactivity timeout (spec §B7) and runs the orphan sweep at start (cycle 0)
// and every ReapEveryCycles ticks.
func (m *Manager) runJanitor(tick time.Duration) {
	defer m.wg.Done()
	every := m.life.opts.OrphanEvery
	if every <= 0 {
		every = lifespec.ReapEveryCycles(tick)
	}
	m.sweepOrphans()
	t := time.NewTicker(tick)
	defer t.Stop()
	for cycle := 1; ; cycle++ {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.reapIdle()
		if m.recs != nil {
			m.reapRecords() // records.go
		}
		m.trimSpares() // spares.go
		m.expireCloudAll()
		if m.camo != nil {
			m.camo.reapIdle() // camofox.go
		}
		if cycle%every == 0 {
			m.sweepOrphans()
		}
	}
}

// reapIdle closes every session idle longer than the timeout and not in a
// call, one log record per reap. A failed cleanup keeps the session for the
// next tick; the lifespec.ForceReapAfter-th consecutive failure drops it without the
// polite close. Only a successful cleanup resets the count. When the last
// session is gone the browser process is stopped too (the next session
// starts it again).
func (m *Manager) reapIdle() {
	idle := m.idleTimeout()
	now := time.Now()
	m.mu.Lock()
	var reap []*Session
	for k, s := range m.sessions {
		if s.rec != nil {
			continue // reaped by its record (records.go: reapRecords)
		}
		if now.Sub(s.lastUsed) > idle && s.mu.TryLock() {
			delete(m.sessions, k)
			reap = append(reap, s)
		}
	}
	m.mu.Unlock()
	for _, s := range reap {
		sat := now.Sub(s.lastUsed)
		fails := m.life.failures(s.Key)
		var err error
		forced := fails+1 >= lifespec.ForceReapAfter
		if m.life.opts.CloseSession != nil {
			err = m.life.opts.CloseSession(s.Key)
		} else {
			err = s.tab.Close()
		}
		if err != nil && !forced {
			m.reapFailed(s.Key, fails, err)
			m.mu.Lock()
			if _, taken := m.sessions[s.Key]; !taken && !m.closed {
				m.sessions[s.Key] = s
			}
			m.mu.Unlock()
			s.mu.Unlock()
			continue
		}
		if err != nil {
			s.tab.Close() // force: best effort, the tab's context is cancelled either way
		}
		s.proxy.Close()
		s.reaped = true
		m.reaped(s.Key, s.Owner, sat, now)
		s.mu.Unlock()
		m.logger.Info("Cleaning up inactive session", "session", s.Key, "idle_s", int(sat.Seconds()), "timeout_s", int(idle.Seconds()), "forced", err != nil)
	}
	if len(reap) > 0 {
		m.life.stopPending = true
	}
	m.ht.Prune(now) // handles.go
	if m.life.stopPending {
		// Retried on later ticks while a spare or a new session is being made.
		m.life.stopPending = !m.stopIdleBrowser()
	}
}

// failures is how many cleanups of key failed in a row.
func (l *lifecycle) failures(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fails[key]
}

// reapFailed records the (fails+1)-th failed cleanup of key, to be retried
// on the next tick; errv is logged.
func (m *Manager) reapFailed(key string, fails int, errv any) {
	m.life.mu.Lock()
	m.life.fails[key] = fails + 1
	m.life.mu.Unlock()
	m.logger.Warn("browser session cleanup failed; retrying on the next tick", "session", key, "failures", fails+1, "err", errv)
}

// reaped records the janitor's reap of key (owner's session, idle for
// idle): the binding is dropped, the failures forgotten, and the next call
// of the key or its owner is session_expired (a tomb).
func (m *Manager) reaped(key, owner string, idle time.Duration, now time.Time) {
	m.bindings.DropIf(owner, key)
	tb := tomb{key: key, idle: idle, at: now}
	m.dropHandle(key, &tb)
	m.life.mu.Lock()
	delete(m.life.fails, key)
	m.life.tombs[key], m.life.tombs[owner] = tb, tb
	m.life.mu.Unlock()
}

// stopIdleBrowser stops the local Chromium (and the spare session) when no
// session is left. It reports whether nothing is left to do: the browser was
// stopped, is gone, or has sessions again.
func (m *Manager) stopIdleBrowser() bool {
	m.procMu.Lock() // held until the old browser is gone (see Manager.procMu)
	defer m.procMu.Unlock()
	m.mu.Lock()
	if len(m.sessions) > 0 || m.local == nil || m.closed {
		m.mu.Unlock()
		return true
	}
	if m.spare.making > 0 || m.life.creating.Load() > 0 || m.life.rendering.Load() > 0 {
		m.mu.Unlock()
		return false
	}
	l, sps := m.local, m.spares
	m.local, m.spares = nil, nil
	m.mu.Unlock()
	for _, sp := range sps {
		sp.tab.Close()
		sp.proxy.Close()
	}
	if err := l.Close(); err != nil {
		m.logger.Warn("browser stop failed", "err", err)
	}
	m.logger.Info("browser stopped", "why", "no session left")
	return true
}
