package browser

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/pnanav"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Record sessions (issue 19): with browser nodes and shared state, a
// session placed on a node is a handle.Record in Redis. Its tab is opened
// with backend.TabOptions.Detach and its node proxy with
// node.Client.OpenHandleProxy, so both outlive this replica; any replica
// attaches to them (attachHandle) and serves the call under the handle's
// Redis lock (recTab), reloading the record's counters first and saving
// them after. The janitor of every replica reaps idle records once each
// (reapRecords: a lease), and a record whose node is gone is session_lost.

// recTab is a record session's tab for one call: lock takes the handle's
// Redis lock (two calls on one session, from any replicas, never
// interleave) and reloads the record; release saves it.
type recTab struct {
	*localTab
	ctx      context.Context
	err      error           // the record is gone or lost: the call fails with it
	answered *backend.Dialog // the dialog unblock answered for this call
}

func (m *Manager) recordTab(ctx context.Context, s *Session) *recTab {
	return &recTab{localTab: &localTab{m: m, s: s}, ctx: ctx}
}

func (t *recTab) lock() func() {
	m, s := t.m, t.s
	lctx, cancel := context.WithTimeout(t.ctx, time.Duration(m.timeouts.Open)*time.Second)
	unlock, err := m.recs.Lock(lctx, s.principal, s.handle)
	cancel()
	s.mu.Lock()
	if err != nil {
		t.err = err // session_busy, state_unavailable or state_corrupt (handle.Store.Lock)
		if reason.Of(err) == "" {
			t.err = reason.Wrap(reason.BrowserFailed, "", "Another call on this browser session did not finish in time; retry.", err)
		}
		return s.mu.Unlock
	}
	if t.err = m.reloadRecord(t.ctx, s); t.err == nil && s.tab == nil {
		t.err = m.unblock(t)
	}
	return func() {
		if t.err == nil && !s.reaped && !m.saveRecord(t.ctx, s) {
			m.loseRecord(t.ctx, s, handle.WhyRecordGone) //nolint:errcheck // the next call reads the marker
		}
		m.mu.Lock()
		s.lastUsed = time.Now()
		m.mu.Unlock()
		s.mu.Unlock()
		unlock()
	}
}

func (t *recTab) closed() bool { return t.err != nil || t.s.reaped }

// answerKey carries how a call answers a dialog that blocks a record
// session's tab (unblock): browser_dialog's answer, browser_navigate's
// dismissal.
type answerKey struct{}

type answerOf struct {
	accept     bool
	prompt, by string
}

// unblock serves a call on a session whose tab a dialog blocks that this
// replica did not see open (s.tab nil, attachTo): the node answers it
// (node.Proxy.AnswerDialog, as one process would: browser_dialog as asked,
// browser_navigate dismisses, an auto browser.dialog_policy by it, past
// browser.dialog_timeout_s dismissed) and the tab is attached; else the
// call goes on blocked and a page call is dialog_pending (current).
func (m *Manager) unblock(t *recTab) error {
	s := t.s
	px, _ := s.proxy.(*node.Proxy)
	if s.dialog == nil || px == nil {
		return reason.New(reason.BrowserFailed, "", "The browser session has no tab attached here; call browser_navigate again.")
	}
	a, ok := t.ctx.Value(answerKey{}).(answerOf)
	switch pol, to := dialogPolicy(m.cfg), m.cfg.Browser.DialogTimeout; {
	case ok:
	case pol != backend.DialogMustRespond:
		a = answerOf{accept: pol == backend.DialogAccept, by: "policy"}
	case to > 0 && time.Duration(s.dialog.AgeMS)*time.Millisecond > to:
		a = answerOf{by: "timeout"}
	default:
		return nil
	}
	d, answered := px.AnswerDialog(s.dialog.Target, a.accept, a.prompt)
	if answered {
		t.answered = &backend.Dialog{Type: d.Type, Message: d.Message, DefaultPrompt: d.DefaultPrompt, Action: "dismissed", By: a.by}
		if a.accept {
			t.answered.Action = "accepted"
		}
	}
	if err := m.attachTo(t.ctx, s, *s.rec); err != nil || s.tab != nil {
		return err
	}
	if !answered {
		return reason.New(reason.DialogPending, "", "The browser node did not answer the JavaScript dialog (its text is in pending_dialogs); retry browser_dialog, or browser_navigate to leave the page.")
	}
	return reason.New(reason.DialogPending, "", "Another JavaScript dialog opened at once (its text is in pending_dialogs); answer it with browser_dialog first.")
}

// current is dialog_pending while a dialog blocks the tab (unblock).
func (t *recTab) current(ctx context.Context, p *Page) (string, bool, error) {
	if d := t.s.dialog; t.s.tab == nil && d != nil {
		p.URL = redactText(d.URL)
		return "", false, reason.Newf(reason.DialogPending, "",
			"A JavaScript %s dialog is open (its text is in pending_dialogs) and blocks the page; answer it with browser_dialog (action accept or dismiss) first (browser.dialog_policy must_respond).", d.Type)
	}
	return t.localTab.current(ctx, p)
}

// answerDialog reports the dialog unblock answered, else answers the tab's.
func (t *recTab) answerDialog(ctx context.Context, in DialogInput, accept bool, r *DialogResult) error {
	if t.answered != nil {
		d := redactDialogs([]backend.Dialog{*t.answered})[0]
		r.Action, r.Dialog = in.Action, &d
		return nil
	}
	return t.localTab.answerDialog(ctx, in, accept, r)
}

// gone is the refusal of a call whose record is gone (closed reads nil).
func (t *recTab) gone() error { return t.err }

// vanished is called after a call on the session failed: when its record
// is gone from Redis meanwhile (a restart without persistence, an
// eviction: the node then closes the session's proxy, which is likely
// why the call failed), the session is lost: p says session_lost instead
// of the failure, and the record is never saved back (breaker9 D3).
func (t *recTab) vanished(p *Page) bool {
	m, s := t.m, t.s
	if t.err != nil || s.reaped || s.recFresh {
		return false
	}
	_, found, err := m.recs.Get(t.ctx, s.principal, s.handle)
	if err != nil || found {
		return false
	}
	s.reaped = true // not saved again
	t.err = m.loseRecord(t.ctx, s, handle.WhyRecordGone)
	p.PendingDialogs = nil
	m.errOf(nil, p, t.err)
	return true
}

func (t *recTab) fail(ctx context.Context, p *Page, what string, err error) {
	t.localTab.fail(ctx, p, what, err)
	t.vanished(p)
}

func (t *recTab) load(ctx, nctx context.Context, u *urlsafe.URL, active bool, r *NavigateResult) (string, string, bool) {
	sent, final, ok := t.localTab.load(ctx, nctx, u, active, r)
	if !ok {
		t.vanished(&r.Page)
	}
	return sent, final, ok
}

func (t *recTab) landed(ctx context.Context, sent, final string, r *NavigateResult) (*reason.Error, bool) {
	rr, stop := t.localTab.landed(ctx, sent, final, r)
	if (rr != nil || (stop && r.Reason != "")) && t.vanished(&r.Page) {
		return nil, true
	}
	return rr, stop
}

// record returns s's record with its counters as they are now.
func (s *Session) record() handle.Record {
	r := *s.rec
	r.Key, r.Owner, r.Active, r.Principal = s.Key, s.Owner, s.active, state.PrincipalKey(s.principal)
	r.Navs, r.NextRef, r.Frames = s.navs, max(s.nextRef, 1), s.frames()
	r.SnapHash, r.Suspect = handle.SnapHash(s.lastSnap), s.suspect.Load()
	r.LastActive = time.Now().UnixMilli()
	return r
}

// saveRecord writes s's record back after a call (only over the record
// that is there: Store.Update); false when it is gone from Redis (the
// session is lost), true when saved or when Redis did not answer (logged).
func (m *Manager) saveRecord(ctx context.Context, s *Session) bool {
	r := s.record()
	found, err := m.recs.Update(ctx, s.principal, r, handle.RecordTTL(m.idleTimeout()))
	if err != nil {
		m.logger.Warn("browser session record not saved", "session", s.Key, "err", err)
		return true
	}
	if !found {
		return false
	}
	*s.rec = r
	return true
}

// reloadRecord (under the handle's lock) reads s's record and takes its
// counters: a session another replica drove since is served with the same
// refs; a cached snapshot that is not the one the record names is
// forgotten, so the next result is a full snapshot, never a wrong delta.
// A record that is gone is session_expired (reaped) or session_not_found;
// one whose tab or node is gone is session_lost (the record is deleted).
func (m *Manager) reloadRecord(ctx context.Context, s *Session) error {
	if s.recFresh {
		s.recFresh = false
		r := s.record()
		if err := m.recs.Put(ctx, s.principal, r, handle.RecordTTL(m.idleTimeout())); err != nil {
			return err
		}
		*s.rec = r
		m.standby.Announce(s.principal, s.handle) // other replicas may stand by (standby.go)
		return nil
	}
	rec, found, err := m.recs.Get(ctx, s.principal, s.handle)
	if err != nil {
		return err
	}
	if !found {
		rerr, r, marked := m.recs.Gone(ctx, s.principal, s.handle, m.idleTimeout(), m.nextSession(ctx))
		if !marked {
			// This replica served the session, so the handle was issued:
			// Redis lost its record (breaker9 D3). Lost, on every replica.
			return m.loseRecord(ctx, s, handle.WhyRecordGone)
		}
		m.dropRecordSession(s)
		if reason.Of(rerr) == reason.SessionNotFound && sessionArg(ctx) == "" {
			rerr = handle.NotFoundTask() // no session argument was sent
		}
		if r != nil && !s.attached {
			m.reaped(s.Key, s.Owner, r.Idle, r.At) // another replica reaped it: the task reads session_expired too
		} else {
			m.ht.Drop(s.Key, r)
		}
		return rerr
	}
	if rec.Suspect { // a command timed out, on any replica (spec §B6)
		return m.recycle(ctx, s, rec)
	}
	if s.tab == nil || rec.Gen != s.rec.Gen || (rec.Target == s.tab.TargetID() && !s.tab.Healthy() && m.nodes.Registered(ctx, rec.Node)) {
		// Another replica recycled it (its new tab), a dialog blocked its
		// tab, or this replica's connection to the node dropped (not the node).
		if err := m.attachTo(ctx, s, rec); err != nil {
			return err
		}
	}
	if s.tab != nil && (rec.Target != s.tab.TargetID() || !s.tab.Healthy()) {
		why := "its tab on the browser node closed"
		if !m.nodes.Registered(ctx, rec.Node) {
			why = "its browser node is gone"
		}
		return m.loseRecord(ctx, s, why)
	}
	s.navs, s.nextRef, s.active = rec.Navs, rec.NextRef, rec.Active
	s.suspect.Store(false) // the record says (another replica may have recycled it)
	s.loadFrames(rec.Frames)
	if handle.SnapHash(s.lastSnap) != rec.SnapHash {
		s.lastSnap, s.lastCut, s.lastWhole, s.lastTitle = "", false, false, ""
	}
	*s.rec = rec
	return nil
}

func (m *Manager) attachOptions(p sessionProxy) backend.TabOptions {
	return backend.TabOptions{OnTopLevel: pnanav.Reporter(p),
		DialogPolicy: dialogPolicy(m.cfg), DialogTimeout: m.cfg.Browser.DialogTimeout,
		DownloadDir: m.downloadDir(), DownloadCap: m.downloadCap}
}

// loseRecord deletes s's record and drops s here: session_lost, why
// naming what is gone (written to the marker, so every replica says it).
func (m *Manager) loseRecord(ctx context.Context, s *Session, why string) error {
	m.recs.Lose(ctx, s.principal, *s.rec, why) //nolint:errcheck // it expires anyway
	m.dropRecordSession(s)
	m.dropHandle(s.Key, nil)
	m.bindings.DropIf(s.Owner, s.Key)
	m.logger.Info("browser session lost", "session", s.Key, "node", s.node, "why", why)
	return handle.Lost(s.Key, why, m.nextSession(ctx))
}

// nextSession says where a new session would run now, for session_lost's
// message: on a browser node with room, in this replica's own browser (no
// node registered), or nowhere until a node has room (browser_capacity).
func (m *Manager) nextSession(ctx context.Context) string {
	if m.nodes == nil {
		return "a new session runs in this replica's own browser"
	}
	reg, room, err := m.nodes.Room(ctx)
	switch {
	case err != nil:
		return "a new session lands on a browser node with room, if the shared state (Redis) answers"
	case room > 0:
		return "a new session lands on a browser node that has room now"
	case reg == 0:
		return "no browser node is registered now, so a new session runs in this replica's own browser"
	}
	return "every browser node this replica may use is full now, so a new session waits for room (browser_capacity, retry_after_s)"
}

// dropRecordSession forgets this replica's connection to s (in sessions or
// attached), leaving the session itself alone.
func (m *Manager) dropRecordSession(s *Session) {
	m.mu.Lock()
	if m.sessions[s.Key] == s {
		delete(m.sessions, s.Key)
	}
	if m.attached[s.handle] == s {
		delete(m.attached, s.handle)
	}
	m.mu.Unlock()
	m.detach(s)
}

// endRecord ends a record session for good (browser_close): its
// BrowserContext disposed, its node proxy closed, its record deleted.
func (m *Manager) endRecord(s *Session) {
	if s.tab != nil { // nil: blocked by a dialog; the node disposes its context with its proxy
		s.tab.Dispose()
	}
	s.proxy.Close()
	m.recs.Delete(context.Background(), s.principal, *s.rec) //nolint:errcheck // it expires anyway
}

// attachHandle serves principal p's handle h from its record: this
// replica's cached attachment (one a standby pre-attach in flight is
// making is waited for: standby.go), or a new one (attachRecord). No
// record: session_expired after a reap, else session_not_found; a node
// that is not registered or does not answer: session_lost.
func (m *Manager) attachHandle(ctx context.Context, p, h string) (tab, string, error) {
	m.mu.Lock()
	s := m.attached[h]
	m.mu.Unlock()
	if s == nil && m.standby.Wait(ctx, h) {
		m.mu.Lock()
		s = m.attached[h]
		m.mu.Unlock()
	}
	if s != nil && s.principal == p && (s.tab == nil || s.tab.Healthy() || m.nodes.Registered(ctx, s.node)) {
		return m.recordTab(ctx, s), s.Key, nil
	}
	if s != nil && s.principal == p {
		m.dropRecordSession(s) // its node is gone: the record says what is left
	}
	rec, found, err := m.recs.Get(ctx, p, h)
	if err != nil {
		return nil, "", err
	}
	if !found {
		rerr, r, _ := m.recs.Gone(ctx, p, h, m.idleTimeout(), m.nextSession(ctx))
		if r != nil {
			return nil, r.Key, rerr
		}
		return nil, "", rerr
	}
	s, why, err := m.attachRecord(ctx, p, h, rec, false)
	if why != "" {
		m.logger.Info("browser session lost", "session", rec.Key, "node", rec.Node, "why", why, "err", err)
		m.recs.Lose(ctx, p, rec, why) //nolint:errcheck // it expires anyway
		return nil, rec.Key, handle.Lost(rec.Key, why, m.nextSession(ctx))
	}
	if err != nil {
		return nil, rec.Key, err
	}
	return m.recordTab(ctx, s), rec.Key, nil
}

// attachRecord attaches this replica to principal p's record rec of
// handle h (the node's CDP relay, the session proxy's credential from the
// node) and keeps it in m.attached, or returns the attachment made
// meanwhile. why is set when the session is lost (its node gone or not
// answering, its proxy or tab gone: the caller decides whether to end the
// record); else err is state_unavailable, browser_failed (shut down) or
// session_not_found (another principal's attachment under h). The
// on-demand attach (attachHandle) and the standby's (preAttach, standby
// true) share it.
func (m *Manager) attachRecord(ctx context.Context, p, h string, rec handle.Record, standby bool) (*Session, string, error) {
	s := &Session{Key: rec.Key, Owner: rec.Owner, active: rec.Active, nextRef: rec.NextRef, navs: rec.Navs,
		handle: h, rec: &rec, principal: p, attached: true, node: rec.Node, lastUsed: time.Now()}
	s.loadFrames(rec.Frames)
	switch {
	case rec.Suspect && standby:
		// Recycling is the next call's (under the handle's lock).
		return nil, "", reason.New(reason.BrowserFailed, "", "The session is suspect: the next call recycles it.")
	case rec.Suspect:
		// Its old tab may hang (a timed-out command): recycled under the
		// lock before this replica attaches to anything (reloadRecord).
		rt := m.recordTab(ctx, s)
		rt.lock()()
		if rt.err != nil {
			return nil, "", rt.err
		}
	default:
		t, px, d, err := m.nodes.Attach(ctx, rec.Node, rec.Proxy, rec.Target, rec.Context, m.attachOptions)
		if lost := (*node.Lost)(nil); errors.As(err, &lost) {
			return nil, lost.Why, lost.Err
		} else if err != nil {
			return nil, "", err
		}
		s.tab, s.proxy, s.dialog = t, px, d
	}
	m.mu.Lock()
	if old := m.attached[h]; old != nil || m.closed {
		m.mu.Unlock()
		m.detach(s)
		if old == nil {
			return nil, "", reason.New(reason.BrowserFailed, "", "The browser service is shut down.")
		} else if old.principal != p {
			return nil, "", handle.NotFound()
		}
		return old, "", nil
	}
	key, nodeID := s.Key, s.node // s is a call's from here on, maybe on another goroutine
	m.attached[h] = s
	m.mu.Unlock()
	m.logger.Info("browser session attached", "session", key, "node", nodeID, "standby", standby)
	return s, "", nil
}

// recycle replaces the suspect record session s (under its handle's lock)
// by a fresh one under the same handle, as spec §B6 replaces an in-process
// one: a new BrowserContext and tab placed on a node (placeOnNode), the
// record's next generation written (refs start over), then the old
// context disposed and its proxy closed on its node; the call's result
// says recycled. Errors: placement's (browser_capacity: the record stays
// suspect), session_lost when no node is registered.
func (m *Manager) recycle(ctx context.Context, s *Session, old handle.Record) error {
	ns, placed, err := m.placeOnNode(ctx, s.Key, old.Active)
	if err != nil {
		return err
	}
	if !placed {
		return m.loseRecord(ctx, s, "a command of it timed out and no browser node is registered for a fresh one")
	}
	m.logger.Info("Recycling suspect browser session", "session", s.Key, "why", "command timeout", "node", ns.node)
	m.detach(s)
	rec := *ns.rec
	rec.Handle, rec.Gen = old.Handle, old.Gen+1
	s.tab, s.proxy, s.node, s.rec, s.dialog = ns.tab, ns.proxy, ns.node, &rec, nil
	s.navs, s.nextRef, s.lastSnap, s.lastCut, s.lastWhole, s.lastTitle, s.lastDoc = 0, 1, "", false, false, "", 0
	s.loadFrames(nil)
	s.suspect.Store(false)
	s.recycled = recycledNote("a command of the previous session timed out (browser.command_timeout)")
	saved := m.saveRecord(ctx, s)
	m.nodes.End(ctx, old.Node, old.Context, old.Proxy)
	if !saved {
		return m.loseRecord(ctx, s, handle.WhyRecordGone)
	}
	return nil
}

// attachTo attaches s to rec's session on its node (node.Pool.Attach),
// detaching its old connection: its proxy and tab, or, while a dialog the
// node saw open blocks the tab, its proxy and that dialog (s.tab nil: a
// page call is dialog_pending, recTab.current; unblock answers it). A
// session gone is session_lost (loseRecord).
func (m *Manager) attachTo(ctx context.Context, s *Session, rec handle.Record) error {
	t, px, d, err := m.nodes.Attach(ctx, rec.Node, rec.Proxy, rec.Target, rec.Context, m.attachOptions)
	if lost := (*node.Lost)(nil); errors.As(err, &lost) {
		m.logger.Info("browser session lost", "session", rec.Key, "node", rec.Node, "why", lost.Why, "err", lost.Err)
		return m.loseRecord(ctx, s, lost.Why)
	} else if err != nil {
		return err
	}
	m.detach(s)
	s.tab, s.proxy, s.dialog, s.node = t, px, d, rec.Node
	return nil
}

// reapRecords is the janitor's pass over the records
// (handle.Store.ReapIdle: each idle one reaped by exactly one replica, its
// context disposed and its proxy closed on the node here), and drops this
// replica's attachments idle as long (detached).
func (m *Manager) reapRecords() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	idle, now := m.idleTimeout(), time.Now()
	m.mu.Lock()
	var stale []*Session
	for h, s := range m.attached {
		// A dead tab too (its session ended and the end event was missed).
		if (now.Sub(s.lastUsed) > idle || !s.tab.Healthy()) && s.mu.TryLock() {
			delete(m.attached, h)
			stale = append(stale, s)
		}
	}
	m.mu.Unlock()
	for _, s := range stale {
		m.detach(s)
		s.mu.Unlock()
	}
	ls, idles, err := m.recs.ReapIdle(ctx, idle, func(l handle.Listed) { m.nodes.End(ctx, l.Record.Node, l.Record.Context, l.Record.Proxy) })
	if err != nil {
		m.logger.Warn("browser session records not reaped", "err", err)
	}
	for i, l := range ls {
		m.reapedHere(l.Handle, idles[i], now)
		m.logger.Info("Cleaning up inactive session", "session", l.Record.Key, "idle_s", int(idles[i].Seconds()), "timeout_s", int(idle.Seconds()), "node", l.Record.Node)
	}
}

// reapedHere drops this replica's connection to a reaped record session;
// the creating replica's task then reads session_expired (a tomb).
func (m *Manager) reapedHere(h string, idle time.Duration, now time.Time) {
	m.mu.Lock()
	var s *Session
	for k, x := range m.sessions {
		if x.handle == h && x.rec != nil {
			s = x
			delete(m.sessions, k)
		}
	}
	if x := m.attached[h]; x != nil {
		delete(m.attached, h)
		if s == nil {
			s = x
		}
	}
	m.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	s.reaped = true
	s.mu.Unlock()
	m.detach(s)
	if !s.attached {
		m.reaped(s.Key, s.Owner, idle, now)
		tb := tomb{key: s.Key, idle: idle, at: now}
		m.dropHandle(s.Key, &tb)
	}
}
