package browser

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Session handles (issue 19; docs/browser.md "Browser nodes"). Every
// session a navigation lands in gets a handle (handle.New), returned as
// the result's session and bound to the caller's principal; a call with
// session acts on that session whatever its task. In process a handle
// names a session key of this Manager (handles); with browser nodes and
// shared state a session placed on a node is also a handle.Record in
// Redis (records.go), so any replica serves it.

type sessionArgKey struct{}

// WithSession returns ctx carrying the session handle of a call (the
// browser tools' session argument); "" carries none.
func WithSession(ctx context.Context, h string) context.Context {
	if h == "" {
		return ctx
	}
	return context.WithValue(ctx, sessionArgKey{}, h)
}

func sessionArg(ctx context.Context) string {
	h, _ := ctx.Value(sessionArgKey{}).(string)
	return h
}

// handleFor returns key's handle for principal p: a record session's own
// (its creator principal's only), else one of the in-process table.
func (m *Manager) handleFor(p, key string, s *Session) string {
	if s != nil && s.rec != nil {
		if s.principal != p {
			return ""
		}
		m.ht.Bind(s.handle, p, key)
		return s.handle
	}
	return m.ht.Issue(p, key)
}

// dropHandle forgets key's handle (session_not_found from now on), or
// keeps it as reaped (session_expired) when tb is set.
func (m *Manager) dropHandle(key string, tb *tomb) {
	var r *handle.Reaped
	if tb != nil {
		r = &handle.Reaped{Key: tb.key, Idle: tb.idle, At: tb.at}
	}
	m.ht.Drop(key, r)
}

// openHandle resolves handle h of a call of task (principal from ctx) to
// its session's tab: an in-process handle's session key, or a record in
// Redis (records.go; attached to on this replica). Unknown, another
// principal's or closed: session_not_found; reaped: session_expired.
func (m *Manager) openHandle(ctx context.Context, d driver, task, h string, nav bool) (tab, string, error) {
	p := principal.From(ctx)
	if !handle.Valid(h) {
		return nil, "", handle.NotFound()
	}
	if e, ok := m.ht.Lookup(h); ok && e.Principal == p {
		if r := e.Reaped; r != nil {
			return nil, e.Key, m.tombErr(tomb{key: r.Key, idle: r.Idle, at: r.At})
		}
		s, ok := m.Session(e.Key)
		if ok && s.rec != nil && s.handle == h {
			if nav && !s.tab.Healthy() && !m.nodes.Registered(ctx, s.node) {
				return nil, e.Key, m.loseRecord(ctx, s, "its browser node is gone") // records.go
			}
			return m.recordTab(ctx, s), e.Key, nil
		}
		if !ok && m.recs != nil {
			return m.attachHandle(ctx, p, h) // records.go
		}
		t, err := d.open(ctx, e.Key, sessionkey.BareTask(e.Key), nav)
		return t, e.Key, err
	}
	if m.recs == nil {
		return nil, "", handle.NotFound()
	}
	return m.attachHandle(ctx, p, h)
}

// tombErr is session_expired for a reaped session's tomb.
func (m *Manager) tombErr(t tomb) *reason.Error {
	return handle.ExpiredErr(handle.Reaped{Key: t.key, Idle: t.idle, At: t.at}, m.idleTimeout())
}

// handleResult fills a navigation's session handle (the principal's, for
// the session t landed in under key).
func (m *Manager) handleResult(ctx context.Context, key string, t tab, r *NavigateResult) {
	var s *Session
	switch lt := t.(type) {
	case *localTab:
		s = lt.s
	case *recTab:
		s = lt.s
	}
	if s != nil && s.attached {
		r.Session = s.handle // another replica's session, attached here
		return
	}
	r.Session = m.handleFor(principal.From(ctx), key, s)
}

// EndTask releases task's sessions when the task ends (its MCP session
// closed): as CloseTask, except that a session with a record in Redis
// (placed on a browser node) is only detached from: its handle outlives
// the task, until browser_close or the janitor ends it.
func (m *Manager) EndTask(task string) []string {
	m.mu.Lock()
	var keep []*Session
	for k, s := range m.sessions {
		if s.rec != nil && sessionkey.BareTask(k) == sessionkey.TaskID(task) {
			keep = append(keep, s)
			delete(m.sessions, k)
		}
	}
	m.mu.Unlock()
	for _, s := range keep {
		m.detach(s)
	}
	return m.CloseTask(task)
}

// detach drops this replica's connection to a record session without
// ending it (its tab was opened with backend.TabOptions.Detach).
func (m *Manager) detach(s *Session) {
	if s.tab != nil { // nil: attached to a suspect record, not yet recycled (records.go)
		s.tab.Close()
	}
	if px, ok := s.proxy.(interface{ Release() }); ok {
		px.Release()
	}
}

// sessionCounters are what a Session carries between calls that a record
// keeps for another replica.
func (s *Session) frames() []handle.Frame {
	out := make([]handle.Frame, 0, len(s.frameOf))
	for k, id := range s.frameOf {
		out = append(out, handle.Frame{K: k, ID: string(id), Next: max(s.frameRef[k], 1)})
	}
	return out
}

func (s *Session) loadFrames(fs []handle.Frame) {
	s.frameK, s.frameOf, s.frameRef = map[backend.FrameID]int{}, map[int]backend.FrameID{}, map[int]int{}
	for _, f := range fs {
		id := backend.FrameID(f.ID)
		s.frameK[id], s.frameOf[f.K], s.frameRef[f.K] = f.K, id, f.Next
	}
}

// closeHandle is browser_close with session h: that session ends (with a
// record, on every replica: its context disposed, its proxy closed, its
// record deleted), whatever its task. A record session is closed under its
// handle's Redis lock, like every other call on it (breaker9 D2): a call
// running on it, on any replica, finishes first, and one waiting for it
// then reads session_not_found.
func (m *Manager) closeHandle(ctx context.Context, task, h string) CloseResult {
	r := CloseResult{Page: Page{SessionKey: sessionkey.TaskID(task)}, Closed: []string{}}
	p := principal.From(ctx)
	if e, ok := m.ht.Lookup(h); ok && e.Principal == p && e.Reaped == nil {
		s, ok := m.Session(e.Key)
		if ok && s.rec != nil && s.handle == h {
			r.SessionKey = e.Key
			m.closeRecord(m.recordTab(ctx, s), &r)
			return r
		}
		if ok || m.recs == nil {
			r.SessionKey = e.Key
			r.Closed = m.CloseTask(e.Key)
			if r.Closed == nil {
				r.Closed = []string{}
			}
			r.Success = true
			return r
		}
	}
	if m.recs == nil || !handle.Valid(h) {
		m.errOf(nil, &r.Page, handle.NotFound())
		return r
	}
	t, key, err := m.attachHandle(ctx, p, h)
	r.SessionKey = key
	if err != nil {
		m.errOf(nil, &r.Page, err)
		return r
	}
	m.closeRecord(t.(*recTab), &r)
	return r
}

// closeRecord ends rt's record session for good under its handle's lock
// and fills r: its context disposed, its proxy closed, its record deleted,
// this replica's connection and handle dropped (and its task's binding).
func (m *Manager) closeRecord(rt *recTab, r *CloseResult) {
	release := rt.lock()
	if rt.closed() {
		release()
		err := goneErr(rt)
		if err == nil {
			err = handle.NotFound()
		}
		m.errOf(nil, &r.Page, err)
		return
	}
	s := rt.s
	s.reaped = true // not saved again
	m.endRecord(s)
	release()
	m.dropRecordSession(s)
	m.dropHandle(s.Key, nil)
	m.bindings.DropIf(s.Owner, s.Key)
	m.logger.Info("browser session closed", "session", s.Key)
	r.Closed, r.Success = []string{s.Key}, true
}
