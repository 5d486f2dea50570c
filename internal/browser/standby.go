package browser

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/standby"
)

// Standby attachments (browser.standby_replicas; docs/browser.md "Standby
// attachments"): with records, a replica announces each record session it
// opens (reloadRecord, once its record is in Redis), and up to K other
// replicas attach to it in the background through attachRecord, the path
// of an on-demand attach, so the session's next call there is served at
// once. The standby package runs the duty (claims, bounded workers, end
// events); this file connects it to the Manager.

// startStandby starts this replica's standby duty (nil without records or
// with browser.standby_replicas 0); Close stops it (m.stop).
func (m *Manager) startStandby() {
	if m.recs == nil || m.cfg.Browser.StandbyReplicas <= 0 {
		return
	}
	m.standby = standby.Start(context.Background(), standby.Options{Store: m.recs, Replicas: m.cfg.Browser.StandbyReplicas,
		TTL: handle.RecordTTL(m.idleTimeout()), Timeout: time.Duration(m.timeouts.Open) * time.Second,
		Attach: m.preAttach, Held: m.holds, Drop: m.dropEnded, Logger: m.logger})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		<-m.stop
		m.standby.Close()
	}()
}

// preAttach is the standby's attach of principal p's handle h: the
// record is read and checked as for a call (handle.Store.Get), then
// attachRecord keeps the attachment (lastUsed now: the janitor drops it
// idle like any other). A failure ends nothing: the session's next call
// here attaches itself, and decides whether the session is lost.
func (m *Manager) preAttach(ctx context.Context, p, h string) error {
	rec, found, err := m.recs.Get(ctx, p, h)
	switch {
	case err != nil:
		return err
	case !found:
		return errors.New("its record is gone")
	}
	_, why, err := m.attachRecord(ctx, p, h, rec, true)
	if why != "" {
		return fmt.Errorf("%s: %w", why, err)
	}
	return err
}

// holds reports whether this replica already serves handle h.
func (m *Manager) holds(h string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.attached[h] != nil
}

// dropEnded drops this replica's attachment to handle h, whose record
// ended on some replica (closed, lost or reaped: an end event). An
// attachment in a call is left to that call, which reads the record gone
// and drops it (reloadRecord).
func (m *Manager) dropEnded(h string) bool {
	m.mu.Lock()
	s := m.attached[h]
	if s == nil || !s.mu.TryLock() {
		m.mu.Unlock()
		return false
	}
	delete(m.attached, h)
	m.mu.Unlock()
	m.detach(s)
	s.mu.Unlock()
	m.logger.Debug("browser session attachment dropped: the session ended", "session", s.Key)
	return true
}

// StandbyStats returns this replica's standby counters (zero without the
// duty) and how many other replicas' sessions it holds attached now.
func (m *Manager) StandbyStats() (standby.Stats, int) {
	m.mu.Lock()
	n := len(m.attached)
	m.mu.Unlock()
	return m.standby.Stats(), n
}
