package browser

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// driver is one browser backend as the Manager's tools drive it: the local
// Chromium, also when reached through a CDP URL or a cloud provider
// (localDriver, local.go), or a Camofox server (camofoxDriver, camofox.go,
// over package camofoxmode).
// The Manager runs the gate sequence around it once, for every backend
// (Navigate, begin, act): the URL gates before a navigation leaves, the
// post-redirect re-check with the reset to about:blank, the last-active
// binding with its ownership check, the expiry record of a reaped session,
// and the page gate on the URL a call acts on. A driver finds, creates and
// closes the sessions' tabs; a tab carries the calls.
type driver interface {
	// navigationKey is the session key browser_navigate uses for rawURL
	// (spec §B3 hybrid routing).
	navigationKey(ctx context.Context, task, rawURL string) string
	// unusable is the refusal of every call when the backend is selected
	// but cannot run; nil when it can.
	unusable() *reason.Error
	// info is the provenance a navigation result carries before a session
	// is found (tab.backendInfo after).
	info() BackendInfo
	// lookup is the owner record of key's live session (the binding's
	// ownership check, spec §B3).
	lookup(key string) (sessionkey.Owner, bool)
	// expire records a session of key the backend itself ended (a cloud
	// provider's expiry), so the call reads session_expired.
	expire(key string)
	// open returns key's tab for a call of task: browser_navigate
	// (navigation) may create the session; other calls need one.
	open(ctx context.Context, key, task string, navigation bool) (tab, error)
	// closeTask closes the sessions a cleanup of key reaps (spec §B3) and
	// returns their keys, sorted.
	closeTask(key string) []string
}

// tab is one session's tab for one call, locked between lock and its
// release. Its methods carry the call to the backend and report into the
// result; the gates around them are the Manager's.
type tab interface {
	lock() (release func())
	closed() bool // closed while the call waited for lock
	guardActive() bool
	claim(p *Page) // what the session carries for the next call's result (a recycle note)
	backendInfo() BackendInfo
	navigations() int
	navigated() // a navigation landed and was bound
	// current reads the URL (and title) of the page the call acts on into
	// p and returns the raw URL; known false skips the page gate (Camofox
	// before its first page).
	current(ctx context.Context, p *Page) (raw string, known bool, err error)
	// fail writes err to p: what names a backend call that failed.
	fail(ctx context.Context, p *Page, what string, err error)
	resetBlank(ctx context.Context, p *Page)

	// load navigates to u (nctx bounds the load) and returns the URL it
	// sent and where the tab landed; false when it failed (written to r).
	load(ctx, nctx context.Context, u *urlsafe.URL, active bool, r *NavigateResult) (sent, final string, ok bool)
	// landed is the backend's own verdict on a landing the gates passed:
	// a refusal (the tab is reset), or stop with the result already
	// written (a download, a failed call).
	landed(ctx context.Context, sent, final string, r *NavigateResult) (rr *reason.Error, stop bool)
	// show fills a bound navigation's result: its snapshot.
	show(ctx context.Context, r *NavigateResult)

	startAction()
	actionFailed(err error) bool // false: the action's error is reported in the result, not as a failure
	afterAction(ctx context.Context, p *Page, c *Change)
	click(ctx context.Context, ref string, r *ClickResult) error
	typeText(ctx context.Context, in TypeInput) error
	scroll(ctx context.Context, direction string, dy int) error
	press(ctx context.Context, key string) error
	back(ctx context.Context) error
	answerDialog(ctx context.Context, in DialogInput, accept bool, r *DialogResult) error

	snapshot(ctx, cctx context.Context, full bool, r *SnapshotResult)
	console(clear bool, r *ConsoleResult)
	eval(ctx, cctx context.Context, expression string, r *ConsoleResult)
	images(ctx context.Context, r *ImagesResult)
	vision(ctx context.Context, annotate bool, r *VisionResult) (png []byte, ok bool)
}

// driver returns the backend the tools drive: Camofox in Camofox mode, else
// the local one.
func (m *Manager) driver() driver {
	if m.camo != nil {
		return m.camo
	}
	return localDriver{m}
}

// Navigate is browser_navigate (spec §B8.1) on every backend: the session key
// (hybrid routing before the gates), the URL gates before anything leaves
// (secret floor on the raw and normalized URL, metadata floor, private check
// when the SSRF guard is active, website policy; Gates.CheckURL), the load,
// then the post-redirect check of where it ended (Gates.RedirectRefusal, then
// the backend's own evidence: the egress proxy's refusals and load failures
// locally, the snapshot's page URL on Camofox); a refused landing resets the
// tab to about:blank and leaves the binding alone. A landing that passes is
// bound (last-active binding) and shown (the compact snapshot, whose url and
// title are those of the document it shows; local.go and camofoxmode).
func (m *Manager) Navigate(ctx context.Context, task string, in NavigateInput) NavigateResult {
	d := m.driver()
	ctx = context.WithValue(withFind(ctx, in.Find), answerKey{}, answerOf{by: "navigation"}) // records.go unblock
	task = sessionkey.TaskID(task)
	h := sessionArg(ctx) // a session handle (handles.go): that session, whatever its task
	var t tab
	var key string
	if h == "" {
		key = d.navigationKey(ctx, task, in.URL)
	}
	r := NavigateResult{Page: Page{SessionKey: key}, BackendInfo: d.info()}
	if rerr := d.unusable(); rerr != nil {
		m.errOf(nil, &r.Page, rerr)
		return r
	}
	if h != "" {
		var err error
		t, key, err = m.openHandle(ctx, d, task, h, true)
		r.SessionKey = key
		if reason.Of(err) == reason.SessionLost {
			// Navigating a lost session starts over: a new session of the
			// task, as without session (the result names its handle).
			h, t, key, err = "", nil, d.navigationKey(ctx, task, in.URL), nil
			r.SessionKey = key
		}
		if err != nil {
			m.errOf(nil, &r.Page, err)
			return r
		}
	}
	active := m.gates.GuardActive(m.localBackend(), key)
	chk := m.gates.CheckURL(ctx, in.URL, active)
	if !chk.Allowed {
		r.Error, r.Reason, r.BlockedByPolicy = chk.Message, *chk.Reason, chk.BlockedByPolicy
		return r
	}
	u, perr := urlsafe.Parse(in.URL)
	if perr != nil {
		m.errOf(nil, &r.Page, perr)
		return r
	}
	if t == nil {
		var err error
		if t, err = d.open(ctx, key, task, true); err != nil {
			m.errOf(nil, &r.Page, err)
			return r
		}
	}
	release := t.lock()
	if t.closed() && h == "" && goneErr(t) != nil {
		// The task's record session went while this call waited (lost,
		// closed through its handle, reaped): a navigation without session
		// starts a fresh one at once (docs/browser.md "Losing").
		release()
		var err error
		if t, err = d.open(ctx, key, task, true); err != nil {
			m.errOf(nil, &r.Page, err)
			return r
		}
		release = t.lock()
	}
	defer func() { release() }()
	if t.closed() {
		if err := goneErr(t); err != nil {
			m.errOf(nil, &r.Page, err)
			return r
		}
		m.errOf(nil, &r.Page, reason.New(reason.BrowserFailed, "", "The session was closed while this navigation waited; call browser_navigate again."))
		return r
	}
	t.claim(&r.Page)
	r.BackendInfo = t.backendInfo()
	to := m.timeouts.Open
	if t.navigations() == 0 {
		to = m.timeouts.FirstOpen
	}
	nctx, cancel := context.WithTimeout(ctx, time.Duration(to)*time.Second)
	defer cancel()
	sent, final, ok := t.load(ctx, nctx, u, active, &r)
	if !ok {
		return r
	}
	rr := m.gates.RedirectRefusal(sent, final, active)
	if rr == nil {
		var stop bool
		if rr, stop = t.landed(ctx, sent, final, &r); stop && rr == nil {
			return r
		}
	}
	if rr != nil {
		// Never leave refused content readable by a later snapshot (spec §B8.1 6).
		t.resetBlank(ctx, &r.Page)
		r.Error, r.Reason = rr.Message, rr.Code
		return r
	}
	t.navigated()
	if h == "" || sessionkey.BareTask(key) == task {
		m.bindings.Set(task, key) // a handle of another task's session leaves this task's binding alone
	}
	m.clearExpired(task)
	t.show(ctx, &r)
	m.handleResult(ctx, key, t, &r) // handles.go
	return r
}

// goneErr is the refusal of a call whose record session is gone
// (records.go), else nil.
func goneErr(t tab) error {
	if rt, ok := t.(*recTab); ok {
		return rt.gone()
	}
	return nil
}

// begin resolves the session of a non-navigation call (spec §B3 binding and
// ownership; session_expired after a reap), locks it, fills p with the
// current page and applies the page gate to it (spec §B8.2). The returned
// release unlocks.
func (m *Manager) begin(ctx context.Context, task string, p *Page) (tab, func(), bool) {
	d := m.driver()
	task = sessionkey.TaskID(task)
	if h := sessionArg(ctx); h != "" { // a session handle (handles.go)
		if rerr := d.unusable(); rerr != nil {
			m.errOf(nil, p, rerr)
			return nil, nil, false
		}
		t, key, err := m.openHandle(ctx, d, task, h, false)
		p.SessionKey = key
		if err != nil {
			m.errOf(nil, p, err)
			return nil, nil, false
		}
		return m.beginOn(ctx, t, task, key, p)
	}
	key, dropped := m.bindings.Resolve(task, d.lookup)
	if dropped {
		m.logger.Info("browser binding dropped", "task", task, "why", "session gone or owned by another task")
	}
	p.SessionKey = key
	if rerr := d.unusable(); rerr != nil {
		m.errOf(nil, p, rerr)
		return nil, nil, false
	}
	d.expire(key)
	if rerr := m.expiredErr(task, key); rerr != nil {
		m.errOf(nil, p, rerr)
		return nil, nil, false
	}
	t, err := d.open(ctx, key, task, false)
	if err != nil {
		m.errOf(nil, p, err)
		return nil, nil, false
	}
	return m.beginOn(ctx, t, task, key, p)
}

// beginOn is the rest of begin on the session's tab t: lock, the page
// gate.
func (m *Manager) beginOn(ctx context.Context, t tab, task, key string, p *Page) (tab, func(), bool) {
	release := t.lock()
	if t.closed() { // the janitor or a cleanup closed it while we waited for the lock
		release()
		if err := goneErr(t); err != nil {
			m.errOf(nil, p, err)
		} else if rerr := m.expiredErr(task, key); rerr != nil {
			m.errOf(nil, p, rerr)
		} else {
			m.errOf(nil, p, reason.New(reason.BrowserFailed, "", "The session was closed while this call waited for it; call browser_navigate again."))
		}
		return nil, nil, false
	}
	t.claim(p)
	raw, known, err := t.current(ctx, p)
	if err != nil {
		t.fail(ctx, p, "", err)
		release()
		return nil, nil, false
	}
	if known {
		if rerr := m.gates.PageRefusal(raw, t.guardActive()); rerr != nil {
			t.fail(ctx, p, "", rerr)
			release()
			return nil, nil, false
		}
	}
	return t, release, true
}

// act is the one sequence of a page action whose result is the page and its
// snapshot change (browser_click, browser_type, browser_scroll, browser_back,
// browser_press, browser_dialog): the session (m.begin), the timeout
// (browser.command_timeout when timeout is 0), do (its failure, reported as
// what failed, is written to p and act reports false; locally a dialog it
// opened is not a failure, one already open is dialog_pending), then the
// tab's wait, landing check (the page gate on where the action landed) and
// change. true means the action was performed (the after step may still
// report a failure of what it caused in p).
func (m *Manager) act(ctx context.Context, task string, p *Page, c *Change, timeout time.Duration, what string, do func(context.Context, tab) error) bool {
	t, release, ok := m.begin(ctx, task, p)
	if !ok {
		return false
	}
	defer release()
	if timeout <= 0 {
		timeout = time.Duration(m.timeouts.Command) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t.startAction()
	if err := do(cctx, t); err != nil && t.actionFailed(err) {
		t.fail(cctx, p, what, err)
		return false
	}
	t.afterAction(cctx, p, c)
	return true
}

func (m *Manager) cmdCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, time.Duration(m.timeouts.Command)*time.Second)
}

// onPage runs a page call that is not an action: the session (m.begin:
// binding, ownership, page gate), then do under browser.command_timeout.
func (m *Manager) onPage(ctx context.Context, task string, p *Page, do func(cctx context.Context, t tab)) {
	t, release, ok := m.begin(ctx, task, p)
	if !ok {
		return
	}
	defer release()
	cctx, cancel := m.cmdCtx(ctx)
	defer cancel()
	do(cctx, t)
}

// Snapshot is browser_snapshot.
func (m *Manager) Snapshot(ctx context.Context, task string, in SnapshotInput) SnapshotResult {
	var r SnapshotResult
	ctx = withFind(ctx, in.Find)
	m.onPage(ctx, task, &r.Page, func(cctx context.Context, t tab) { t.snapshot(ctx, cctx, in.Full, &r) })
	return r
}

// Console is browser_console: without expression the buffered console messages
// and uncaught exceptions of the session's tab (clear empties the buffer); with
// expression the eval policy (spec §B8.3: the opt-in denylist, then the
// URL-literal pre-screen, the metadata floor always and the rest when the
// guard is on), then its value, evaluated in the page, withheld when the page
// moved to a refused URL.
func (m *Manager) Console(ctx context.Context, task string, in ConsoleInput) ConsoleResult {
	var r ConsoleResult
	m.onPage(ctx, task, &r.Page, func(cctx context.Context, t tab) {
		if in.Expression == "" {
			t.console(in.Clear, &r)
			return
		}
		if rerr := m.gates.CheckEval(cctx, in.Expression, m.evalSettings(), t.guardActive()); rerr != nil {
			t.fail(cctx, &r.Page, "", rerr)
			return
		}
		t.eval(ctx, cctx, in.Expression, &r)
	})
	return r
}

// GetImages is browser_get_images.
func (m *Manager) GetImages(ctx context.Context, task string) ImagesResult {
	r := ImagesResult{Images: []Image{}}
	m.onPage(ctx, task, &r.Page, func(cctx context.Context, t tab) { t.images(cctx, &r) })
	return r
}

// Vision is browser_vision: a PNG screenshot of the viewport saved under
// <home>/cache/screenshots (annotated with ref labels when asked), returned by
// path and as bytes for an MCP image content block.
func (m *Manager) Vision(ctx context.Context, task string, in VisionInput) VisionResult {
	r := VisionResult{Question: in.Question}
	m.onPage(ctx, task, &r.Page, func(cctx context.Context, t tab) {
		if png, ok := t.vision(cctx, in.Annotate, &r); ok {
			r.ScreenshotPath = m.saveScreenshot(png)
			r.Success, r.PNG = true, png
		}
	})
	return r
}
