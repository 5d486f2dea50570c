package browser

import (
	"context"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/navsettle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/browser/toolio"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// localDriver is the driver of sessions in a Chromium this process reaches
// over CDP: the local one, a CDP override's, or a cloud provider's (spec
// §B4). Each session is a Session: a BrowserContext behind its own egress
// proxy.
type localDriver struct{ m *Manager }

func (d localDriver) navigationKey(ctx context.Context, task, rawURL string) string {
	return sessionkey.NavigationKey(task, rawURL, d.m.route, d.m.privateFn(ctx))
}

func (d localDriver) unusable() *reason.Error { return nil }

func (d localDriver) info() BackendInfo { return BackendInfo{} }

func (d localDriver) lookup(key string) (sessionkey.Owner, bool) { return d.m.lookupOwner(key) }

// expire: a provider expiry reads like a reap (manager_cloud.go).
func (d localDriver) expire(key string) { d.m.expireCloud(key, true) }

func (d localDriver) open(ctx context.Context, key, task string, nav bool) (tab, error) {
	if s, ok := d.m.Session(key); ok && s.rec != nil {
		// records.go: its record decides (a tab or node gone is
		// session_lost, and a navigation without session then starts a
		// fresh one; a recycle by another replica is followed).
		return d.m.recordTab(ctx, s), nil
	}
	s, err := d.m.session(ctx, key, task)
	if err != nil {
		return nil, err
	}
	if s.rec != nil {
		return d.m.recordTab(ctx, s), nil
	}
	return &localTab{m: d.m, s: s}, nil
}

func (d localDriver) closeTask(key string) []string { return d.m.closeLocalTask(key) }

// localTab is a Session for one call. A navigation keeps what its load saw
// for the landing check and the snapshot (load → landed → show); an action
// keeps its mark (startAction → afterAction).
type localTab struct {
	m *Manager
	s *Session

	u       *urlsafe.URL
	active  bool
	mark    int64
	before  backend.Activity
	start   time.Time
	errText string // Chromium's net error of the load ("" when it loaded)
	final   string

	mk actMark
}

func (t *localTab) lock() func() {
	s := t.s
	s.mu.Lock()
	return func() {
		t.m.mu.Lock()
		s.lastUsed = time.Now()
		t.m.mu.Unlock()
		s.mu.Unlock()
	}
}

func (t *localTab) closed() bool             { return t.s.reaped }
func (t *localTab) guardActive() bool        { return t.s.active }
func (t *localTab) claim(p *Page)            { p.Recycled, t.s.recycled = t.s.recycled, "" }
func (t *localTab) backendInfo() BackendInfo { return t.m.backendInfo(t.s) }
func (t *localTab) navigations() int         { return t.s.navs }
func (t *localTab) navigated()               { t.s.navs++ }

func (t *localTab) current(ctx context.Context, p *Page) (string, bool, error) {
	cur, err := t.s.tab.Current(ctx)
	if err != nil {
		return "", false, err
	}
	p.URL, p.Title = redactText(cur.URL), redactText(cur.Title)
	return cur.URL, true, nil
}

func (t *localTab) fail(_ context.Context, p *Page, _ string, err error) { t.m.errOf(t.s, p, err) }

func (t *localTab) resetBlank(ctx context.Context, p *Page) { t.m.resetBlank(ctx, t.s, p) }

// load is the local navigation: a dialog left open is dismissed, the
// tabs opened before are not its own (popups.go), Private Network Access
// allows this one navigation (pna.go), then the load and the page's client
// redirects (meta refresh, script) settling before the landing is judged
// (navsettle.Wait), within what the load left of navTarget.
func (t *localTab) load(ctx, nctx context.Context, u *urlsafe.URL, active bool, r *NavigateResult) (string, string, bool) {
	m, s := t.m, t.s
	m.dismissForNavigation(ctx, s)
	t.u, t.active = u, active
	t.mark = s.tab.DialogMark()
	t.before = s.tab.Activity()
	t.start = time.Now()
	s.tab.TakePopups()
	pnaDone, closed := m.beginNavigation(nctx, s, u) // the agent's own navigation (pna.go)
	r.PopupsClosed = closed
	nr, err := s.tab.Navigate(nctx, u.Href)
	pnaDone()
	if err != nil && !backend.IsNavigated(err) {
		r.Dialogs = redactDialogs(s.tab.DialogsSince(t.mark))
		m.errOf(s, &r.Page, err)
		return "", "", false
	}
	if nr.ErrorText == "" {
		st := navsettle.Wait(nctx, s.tab, navSettleLimit(snapshot.WithWalkEnd(nctx, t.start.Add(m.navTarget))))
		switch {
		case !st.Navigated && err == nil:
		case st.URL != "" && !strings.HasPrefix(st.URL, "chrome-error:"):
			nr.URL, nr.Title = st.URL, st.Title
		default:
			cur, cerr := s.tab.Current(nctx)
			if cerr != nil {
				r.Dialogs = redactDialogs(s.tab.DialogsSince(t.mark))
				m.errOf(s, &r.Page, cerr)
				return "", "", false
			}
			nr.URL, nr.Title = cur.URL, cur.Title
		}
	}
	r.Dialogs = redactDialogs(s.tab.DialogsSince(t.mark))
	r.URL, r.Title = redactText(nr.URL), redactText(nr.Title)
	t.errText, t.final = nr.ErrorText, nr.URL
	return u.Href, nr.URL, true
}

// landed is the rest of the local landing check: the egress proxy's refusal
// of the landing's host (proxyLanding), a file instead of a page (saved; the
// tab stays where it was, navcheck.go), a document that did not load
// (loadFailure).
func (t *localTab) landed(ctx context.Context, sent, final string, r *NavigateResult) (*reason.Error, bool) {
	if rr := proxyLanding(t.s, sent, final, t.start); rr != nil {
		return rr, false
	}
	if t.m.navigationDownload(ctx, t.s, r, t.mark, t.errText) {
		return nil, true
	}
	doc := t.s.tab.LastDocLoad()
	if doc.Seq <= t.before.DocLoads {
		doc = backend.DocLoad{} // no document request of this navigation's
	}
	return loadFailure(t.s, t.start, doc, t.errText), false
}

// show takes the compact snapshot of a bound navigation, whose walk gets
// what the load and the settle wait left of navTarget (at least
// snapshot.MinWalkTime). A document the page moved on to after the landing
// was judged is judged too (landingRefusal); a tab the page opened while
// loading is reported in Popup, not followed.
func (t *localTab) show(ctx context.Context, r *NavigateResult) {
	m, s := t.m, t.s
	r.UsedRealProfile = s.realProfile
	if pd := pendingDialogs(s); len(pd) > 0 {
		r.Success, r.PendingDialogs = true, pd // the page opened a dialog while loading: no snapshot until it is answered
		return
	}
	sctx, scancel := m.cmdCtx(snapshot.WithWalkEnd(ctx, t.start.Add(m.navTarget)))
	defer scancel()
	prev, prevSkip := s.lastSnap, s.lastCut || !s.lastWhole
	d, err := m.snapshotSettled(sctx, s, false)
	if err != nil {
		m.errOf(s, &r.Page, err)
		return
	}
	if shown := showDocument(&r.Page, d); shown != "" && shown != t.final {
		if rr := m.landingRefusal(s, t.u.Href, shown, t.start, t.active); rr != nil {
			m.resetBlank(ctx, s, &r.Page)
			r.Error, r.Reason = rr.Message, rr.Code
			return
		}
	}
	if pops := s.tab.TakePopups(); len(pops) > 0 {
		// Reported, not followed: the session stays on the page asked for.
		r.Popup = &PopupInfo{URL: redactText(pops[len(pops)-1].URL), Opened: len(pops)}
	}
	r.Success = true
	r.Coverage = d.Coverage()
	r.Snapshot, r.Truncated = m.renderCovered(ctx, m.foldChrome(ctx, s, prev, prevSkip, d), r.Coverage)
	s.lastWhole = s.lastWhole && !r.Truncated // the agent saw only its head
	r.ElementCount = d.Refs
	r.BotDetectionWarning = snapshot.BotDetectionWarning(r.Title)
}

func (t *localTab) startAction() { t.mk = markAction(t.s) }

// actionFailed: a dialog the action opened is not a failure (the result
// reports it); one that was open before still fails it (dialog_pending).
func (t *localTab) actionFailed(err error) bool {
	return !(openedDialog(err) && len(t.s.tab.DialogsSince(t.mk.dialogs)) > 0)
}

func (t *localTab) afterAction(ctx context.Context, p *Page, c *Change) {
	t.m.afterAction(ctx, t.s, p, c, t.mk)
}

// click scrolls the element into view and hit-tests its centre; when
// another element would receive the click, click_intercepted names that
// element's ref and nothing is clicked. A ref that names no live element of
// the current document is stale_ref; it is never re-resolved.
func (t *localTab) click(ctx context.Context, ref string, r *ClickResult) error {
	s := t.s
	var pt pointData
	dx, dy, gone, err := s.callRef(ctx, ref, "point", map[string]any{}, &pt)
	if err != nil {
		return err
	}
	if dx == 0 && dy == 0 && !frameRefRe.MatchString(snapshot.RefID(ref)) {
		s.nextRef = max(s.nextRef, pt.Next)
	}
	pt.X, pt.Y, pt.Stale = pt.X+dx, pt.Y+dy, pt.Stale || gone
	switch {
	case pt.Stale:
		return staleErr(ref)
	case pt.Disabled:
		return reason.Newf(reason.ElementDisabled, "",
			"Ref %s is %s, which is disabled: the browser delivers no click to it, so nothing was clicked. Do what the page needs to enable it (fill in the form, tick a box), then take a new browser_snapshot.",
			snapshot.NormalizeRef(ref), pt.By)
	case pt.Hidden:
		return reason.Newf(reason.NotVisible, "", "Ref %s has no visible box to click.", snapshot.NormalizeRef(ref))
	case pt.Intercepted != "":
		r.InterceptedBy = "@" + pt.Intercepted
		return reason.Newf(reason.ClickIntercepted, "",
			"The click on %s would land on %s [ref=%s], which covers it (an overlay, banner or dialog). Dismiss or click that element first.",
			snapshot.NormalizeRef(ref), pt.By, pt.Intercepted)
	}
	return s.tab.Click(ctx, pt.X, pt.Y)
}

// typeText focuses the field and replaces its content with text (one input
// event, then change).
func (t *localTab) typeText(ctx context.Context, in TypeInput) error {
	s := t.s
	var f focusData
	_, _, gone, err := s.callRef(ctx, in.Ref, "focus", map[string]any{"clear": in.Text == ""}, &f)
	switch {
	case err != nil:
		return err
	case f.Stale || gone:
		return staleErr(in.Ref)
	case !f.Editable && f.Why != "":
		return reason.Newf(reason.NotEditable, "", "Ref %s is %s, a %s text field: it takes no typing. Snapshot again if the page enables it later.", snapshot.NormalizeRef(in.Ref), f.What, f.Why)
	case !f.Editable:
		return reason.Newf(reason.NotEditable, "", "Ref %s is %s, not a text field; browser_type needs an input, textarea or editable element.", snapshot.NormalizeRef(in.Ref), f.What)
	}
	t.mk.before = s.tab.Activity() // focusing is not what the call is judged by
	if in.Text != "" {
		if err := s.tab.InsertText(ctx, in.Text); err != nil && !openedDialog(err) {
			return err
		}
	}
	s.callRef(ctx, in.Ref, "changed", map[string]any{}, nil) //nolint:errcheck // best effort: a navigation may have replaced the page
	return nil
}

func (t *localTab) scroll(ctx context.Context, _ string, dy int) error {
	return t.s.callJS(ctx, "scroll", map[string]any{"dy": dy}, nil)
}

func (t *localTab) press(ctx context.Context, key string) error { return t.s.tab.Press(ctx, key) }

// back goes one history entry back; with no history, a popup the session
// followed goes back to its opener (popups.go).
func (t *localTab) back(ctx context.Context) error {
	t.mk.history = true
	_, err := t.s.tab.Back(ctx)
	if isNoHistory(err) && t.m.backToOpener(t.s) {
		t.mk = markAction(t.s) // back in the opener (popups.go)
		t.mk.history = true
		return nil
	}
	return err
}

func (t *localTab) answerDialog(ctx context.Context, in DialogInput, accept bool, r *DialogResult) error {
	d, err := t.s.tab.AnswerDialog(ctx, in.DialogID, accept, in.PromptText, "agent")
	if err != nil {
		return err
	}
	d = redactDialogs([]backend.Dialog{d})[0]
	r.Action, r.Dialog = in.Action, &d
	return nil
}

func (t *localTab) snapshot(ctx, cctx context.Context, full bool, r *SnapshotResult) {
	m, s := t.m, t.s
	d, err := m.snapshotSettled(cctx, s, full)
	r.RecentDialogs = s.tab.RecentDialogs(5)
	if err != nil {
		m.errOf(s, &r.Page, err)
		return
	}
	if rerr := m.shownRefusal(s, &r.Page, d); rerr != nil {
		m.errOf(s, &r.Page, rerr)
		return
	}
	r.Success = true
	r.Coverage = d.Coverage()
	r.Snapshot, r.Truncated = m.renderCovered(ctx, d.Snapshot, r.Coverage)
	r.ElementCount = d.Refs
	s.lastWhole = findQuery(ctx) == "" && !r.Coverage.SnapshotTruncated && !r.Truncated
}

func (t *localTab) console(clear bool, r *ConsoleResult) {
	msgs := redactConsole(t.s.tab.Console(clear))
	r.ConsoleMessages = []backend.ConsoleMessage{}
	r.JSErrors = []JSError{}
	for _, c := range msgs {
		if c.Source == "exception" {
			r.JSErrors = append(r.JSErrors, JSError{Message: c.Text, Source: "exception"})
		} else {
			r.ConsoleMessages = append(r.ConsoleMessages, c)
		}
	}
	nm, ne := len(r.ConsoleMessages), len(r.JSErrors)
	r.TotalMessages, r.TotalErrors = &nm, &ne
	r.Success = true
}

// eval evaluates expression in the page; an eval that moved the page to a
// refused URL has its result withheld and the tab reset (spec §B8.3 step 6).
func (t *localTab) eval(ctx, cctx context.Context, expression string, r *ConsoleResult) {
	m, s := t.m, t.s
	mark := s.tab.DialogMark()
	before := s.tab.Activity()
	v, err := s.tab.EvalPage(cctx, expression)
	r.Dialogs = redactDialogs(s.tab.DialogsSince(mark))
	m.settleAfterEval(cctx, s, before)
	if err != nil {
		if rerr := m.pageMoved(cctx, s, &r.Page); rerr != nil {
			m.withheld(ctx, s, &r.Page, rerr)
			return
		}
		m.errOf(s, &r.Page, err)
		return
	}
	raw := m.finish(cctx, s, &r.Page, mark)
	if rerr := m.gates.PageRefusal(raw, s.active); rerr != nil {
		m.withheld(ctx, s, &r.Page, rerr)
		return
	}
	r.Success, r.ResultType = true, v.Type
	if v.Value != nil {
		r.Result = toolio.RedactJSON(v.Value)
	}
	if v.Description != "" {
		// (With a value: what was described in it, see backend.EvalResult.)
		r.ResultDescription = redactText(v.Description)
	}
}

func (t *localTab) images(ctx context.Context, r *ImagesResult) {
	if err := t.s.callJS(ctx, "images", nil, &r.Images); err != nil {
		t.m.errOf(t.s, &r.Page, err)
		return
	}
	redactImages(r.Images)
	r.Success, r.Count = true, len(r.Images)
}

func (t *localTab) vision(ctx context.Context, annotate bool, r *VisionResult) ([]byte, bool) {
	m, s := t.m, t.s
	if annotate {
		if _, err := s.snapshot(ctx, false); err != nil {
			m.errOf(s, &r.Page, err)
			return nil, false
		}
		if err := s.callJS(ctx, "annotate", nil, &r.Annotations); err != nil {
			m.errOf(s, &r.Page, err)
			return nil, false
		}
		defer s.callJS(ctx, "unannotate", nil, nil) //nolint:errcheck
	}
	png, err := s.tab.Screenshot(ctx)
	if err != nil {
		m.errOf(s, &r.Page, err)
		return nil, false
	}
	return png, true
}
