package browser

import (
	"context"
	"sync"
	"time"

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

// handleEntry is an in-process handle: the session key it names, for the
// principal that got it.
type handleEntry struct {
	principal, key string
	reaped         *tomb // the janitor closed its session: session_expired
}

type handleTable struct {
	mu    sync.Mutex
	byH   map[string]*handleEntry
	byKey map[string]string // session key → its handle
}

func (h *handleTable) init() {
	h.byH, h.byKey = map[string]*handleEntry{}, map[string]string{}
}

// notFound is the refusal of a handle that names no session of the caller:
// the same for one never issued, another principal's and a closed one.
func notFound() *reason.Error {
	return reason.New(reason.SessionNotFound, "",
		"The session argument names no browser session of yours (never issued, closed with browser_close, or not yours). Call browser_navigate without session to start one; nothing was run.")
}

// handleFor returns key's handle for principal p, issuing one for a
// session that has none (its record session's own when it has one).
func (m *Manager) handleFor(p, key string, s *Session) string {
	m.ht.mu.Lock()
	defer m.ht.mu.Unlock()
	if s != nil && s.rec != nil {
		if s.principal != p {
			return "" // a record is its creator's principal's (records.go)
		}
		m.ht.byH[s.handle] = &handleEntry{principal: p, key: key}
		m.ht.byKey[key] = s.handle
		return s.handle
	}
	if h, ok := m.ht.byKey[key]; ok {
		if e := m.ht.byH[h]; e != nil && e.principal == p && e.reaped == nil {
			return h
		}
		delete(m.ht.byH, h)
	}
	h := handle.New()
	m.ht.byH[h] = &handleEntry{principal: p, key: key}
	m.ht.byKey[key] = h
	return h
}

// dropHandle forgets key's handle (its session was closed): the handle
// reads session_not_found from now on; with reaped set it reads
// session_expired instead.
func (m *Manager) dropHandle(key string, reaped *tomb) {
	m.ht.mu.Lock()
	defer m.ht.mu.Unlock()
	h, ok := m.ht.byKey[key]
	if !ok {
		return
	}
	delete(m.ht.byKey, key)
	if e := m.ht.byH[h]; e != nil && reaped != nil {
		e.reaped = reaped
		return
	}
	delete(m.ht.byH, h)
}

// pruneHandles forgets reaped handles a day after their reap (they read
// session_not_found from then on, as a record's marker expires).
func (m *Manager) pruneHandles(now time.Time) {
	m.ht.mu.Lock()
	defer m.ht.mu.Unlock()
	for h, e := range m.ht.byH {
		if e.reaped != nil && now.Sub(e.reaped.at) > handle.MarkerTTL {
			delete(m.ht.byH, h)
		}
	}
}

// openHandle resolves handle h of a call of task (principal from ctx) to
// its session's tab: an in-process handle's session key, or a record in
// Redis (records.go; attached to on this replica). Unknown, another
// principal's or closed: session_not_found; reaped: session_expired.
func (m *Manager) openHandle(ctx context.Context, d driver, task, h string, nav bool) (tab, string, error) {
	p := principal.From(ctx)
	if !handle.Valid(h) {
		return nil, "", notFound()
	}
	m.ht.mu.Lock()
	e := m.ht.byH[h]
	m.ht.mu.Unlock()
	if e != nil && e.principal == p {
		if e.reaped != nil {
			return nil, e.key, m.tombErr(*e.reaped)
		}
		s, ok := m.Session(e.key)
		if ok && s.rec != nil && s.handle == h {
			return m.recordTab(ctx, s), e.key, nil
		}
		if !ok && m.recs != nil {
			return m.attachHandle(ctx, p, h) // records.go
		}
		t, err := d.open(ctx, e.key, sessionkey.BareTask(e.key), nav)
		return t, e.key, err
	}
	if m.recs == nil {
		return nil, "", notFound()
	}
	return m.attachHandle(ctx, p, h)
}

// tombErr is session_expired for a reaped session's tomb.
func (m *Manager) tombErr(t tomb) *reason.Error {
	return reason.Newf(reason.SessionExpired, "",
		"The browser session %q was closed at %s after sitting idle for %s (browser.inactivity_timeout is %s); its page, cookies and refs are gone. Call browser_navigate without session to start a fresh session; nothing was run.",
		t.key, t.at.UTC().Format(time.RFC3339), t.idle.Round(time.Second), m.idleTimeout())
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
	s.tab.Close()
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

func lostErr(key string, why string) *reason.Error {
	return reason.Newf(reason.SessionLost, "",
		"The browser session %q is lost: %s, so its page, cookies and refs are gone and its record was removed. Call browser_navigate without session to start a new session on a surviving node; nothing was run.", key, why)
}

// closeHandle is browser_close with session h: that session ends (with a
// record, on every replica: its context disposed, its proxy closed, its
// record deleted), whatever its task.
func (m *Manager) closeHandle(ctx context.Context, task, h string) CloseResult {
	r := CloseResult{Page: Page{SessionKey: sessionkey.TaskID(task)}, Closed: []string{}}
	p := principal.From(ctx)
	m.ht.mu.Lock()
	e := m.ht.byH[h]
	m.ht.mu.Unlock()
	if e != nil && e.principal == p && e.reaped == nil && handle.Valid(h) {
		if _, ok := m.Session(e.key); ok || m.recs == nil {
			r.SessionKey = e.key
			r.Closed = m.CloseTask(e.key)
			if r.Closed == nil {
				r.Closed = []string{}
			}
			r.Success = true
			return r
		}
	}
	if m.recs == nil || !handle.Valid(h) {
		m.errOf(nil, &r.Page, notFound())
		return r
	}
	t, key, err := m.attachHandle(ctx, p, h)
	r.SessionKey = key
	if err != nil {
		m.errOf(nil, &r.Page, err)
		return r
	}
	rt := t.(*recTab)
	release := rt.lock()
	if rt.closed() {
		release()
		m.errOf(nil, &r.Page, goneErr(rt))
		return r
	}
	s := rt.s
	s.reaped = true // not saved again
	m.endRecord(s)
	release()
	m.dropRecordSession(s)
	m.dropHandle(s.Key, nil)
	m.logger.Info("browser session closed", "session", s.Key)
	r.Closed, r.Success = []string{key}, true
	return r
}
