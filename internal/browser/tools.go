package browser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Page is the part every browser tool result shares (spec §B2 shapes plus what
// the described system hides): success, the URL, title and session key of the
// page the call acted on (so a stale binding is visible), and on failure an
// error message with a stable reason code.
type Page struct {
	Success    bool             `json:"success"`
	URL        string           `json:"url,omitempty"`
	Title      string           `json:"title,omitempty"`
	SessionKey string           `json:"session_key,omitempty"`
	Error      string           `json:"error,omitempty"`
	Reason     reason.Code      `json:"reason,omitempty"`
	PageBusy   bool             `json:"page_busy,omitempty"` // the settle cap (< 1 s) fired before the page went quiet
	Dialogs    []backend.Dialog `json:"dialogs,omitempty"`   // JavaScript dialogs that opened during the call
	// PendingDialogs is the open dialog waiting for browser_dialog
	// (browser.dialog_policy must_respond, spec §B12); page calls fail with
	// dialog_pending until it is answered.
	PendingDialogs []backend.Dialog `json:"pending_dialogs,omitempty"`
	// Popup is a tab the page opened during the call; the session follows
	// it after an action, not after browser_navigate (the agent asked for
	// the page; Followed false), and a tab opened before the call is never
	// reported (popups.go). Downloads are the files the call downloaded.
	Popup     *PopupInfo         `json:"popup,omitempty"`
	Downloads []backend.Download `json:"downloads,omitempty"`
	Recycled  string             `json:"recycled,omitempty"` // this call replaced a session whose command had timed out (spec §B6)
}

// Refused reports whether the call failed (tools.Refuser).
func (p Page) Refused() bool { return !p.Success }

// Change is what an action did to the page: the compact snapshot of the new
// document when it navigated, else a delta against the last snapshot.
type Change struct {
	Navigated    bool   `json:"navigated,omitempty"`
	Snapshot     string `json:"snapshot,omitempty"`
	ElementCount *int   `json:"element_count,omitempty"`
	Delta        string `json:"delta,omitempty"` // "+ added", "- removed", "~ changed" lines; "" = no change
	// Coverage: the snapshot lists only part of a huge page
	// (snapwalk.go); a delta is never given then.
	snapshot.Coverage
}

// Settle caps (issue 8: a hard cap under 1 s, never a fixed sleep).
const (
	settleCap   = 900 * time.Millisecond
	quietWindow = 40 * time.Millisecond // DOM and network idle this long = quiet; also the navigation probe
	pollEvery   = 15 * time.Millisecond
)

// NavigateInput is browser_navigate's input.
type NavigateInput struct {
	URL string `json:"url" jsonschema:"absolute http(s) URL to open"`
}

// NavigateResult is browser_navigate's result: the final URL after redirects,
// its title, the compact snapshot and its ref count.
type NavigateResult struct {
	Page
	Snapshot            string        `json:"snapshot,omitempty"`
	ElementCount        int           `json:"element_count"`
	Truncated           bool          `json:"truncated,omitempty"`
	BotDetectionWarning string        `json:"bot_detection_warning,omitempty"`
	BlockedByPolicy     *policy.Block `json:"blocked_by_policy,omitempty"`
	BackendInfo                       // which backend served it; a cloud fallback (manager_cloud.go)
	snapshot.Coverage                 // the snapshot lists only part of a huge page (snapwalk.go)
	// UsedRealProfile: the page loaded in the copy of the user's browser
	// profile (browser.use_real_profile, spec §B10; profile.go).
	UsedRealProfile bool `json:"used_real_profile,omitempty"`
	// PopupsClosed counts the popups and tabs a public page had opened that
	// were closed before this navigation into the private network, so none
	// of them could use the navigation's allowance (Private Network Access,
	// pna.go; docs/browser.md).
	PopupsClosed int `json:"popups_closed,omitempty"`
}

// SnapshotInput is browser_snapshot's input.
type SnapshotInput struct {
	Full bool `json:"full,omitempty" jsonschema:"true: every element with a ref; default false: compact (interactive elements, headings, landmarks, text)"`
}

// SnapshotResult is browser_snapshot's result.
type SnapshotResult struct {
	Page
	Snapshot      string           `json:"snapshot,omitempty"`
	ElementCount  int              `json:"element_count"`
	Truncated     bool             `json:"truncated,omitempty"`
	RecentDialogs []backend.Dialog `json:"recent_dialogs,omitempty"` // the tab's latest dialogs (spec §B12)

	// Coverage: the snapshot lists only part of a huge page (snapshot.Note).
	snapshot.Coverage
}

// RefInput names one element by a ref from the latest snapshot.
type RefInput struct {
	Ref string `json:"ref" jsonschema:"element ref from the latest snapshot, e.g. e5 or @e5"`
}

// ClickResult is browser_click's result.
type ClickResult struct {
	Page
	Clicked       string `json:"clicked,omitempty"`
	InterceptedBy string `json:"intercepted_by,omitempty"` // ref of the element that covers the target (click_intercepted)
	Change
}

// TypeInput is browser_type's input.
type TypeInput struct {
	Ref  string `json:"ref" jsonschema:"ref of a text field or editable element"`
	Text string `json:"text" jsonschema:"text that replaces the field's content"`
}

// TypeResult is browser_type's result; Typed is display-redacted.
type TypeResult struct {
	Page
	Typed   string `json:"typed,omitempty"`
	Element string `json:"element,omitempty"`
	Change
}

// ScrollInput is browser_scroll's input.
type ScrollInput struct {
	Direction string `json:"direction" jsonschema:"up or down (500 px)"`
}

// ScrollResult is browser_scroll's result.
type ScrollResult struct {
	Page
	Scrolled string `json:"scrolled,omitempty"`
	Change
}

// BackResult is browser_back's result.
type BackResult struct {
	Page
	Change
}

// PressInput is browser_press's input.
type PressInput struct {
	Key string `json:"key" jsonschema:"key name: Enter, Tab, Escape, ArrowDown, Backspace, … or one character"`
}

// PressResult is browser_press's result.
type PressResult struct {
	Page
	Pressed string `json:"pressed,omitempty"`
	Change
}

// ConsoleInput is browser_console's input.
type ConsoleInput struct {
	Clear      bool   `json:"clear,omitempty" jsonschema:"empty the message buffer after reading"`
	Expression string `json:"expression,omitempty" jsonschema:"JavaScript to evaluate in the page; omit to read console messages"`
}

// ConsoleResult is browser_console's result (spec §B2 shapes).
type ConsoleResult struct {
	Page
	ConsoleMessages []backend.ConsoleMessage `json:"console_messages,omitempty"`
	JSErrors        []JSError                `json:"js_errors,omitempty"`
	TotalMessages   *int                     `json:"total_messages,omitempty"`
	TotalErrors     *int                     `json:"total_errors,omitempty"`
	Result          json.RawMessage          `json:"result,omitempty"`      // the value as JSON (a promise's resolved value)
	ResultType      string                   `json:"result_type,omitempty"` // JavaScript type, or an object's subtype (node, map, array, …)
	// ResultDescription says what a value with no JSON form is (then result
	// is absent): undefined, NaN, 10n, Symbol(x), a function's source, a DOM
	// node, a Map (backend.EvalResult); beside a result, that the result
	// is a copy with values JSON cannot hold (a function, BigInt or cycle
	// inside an object) described in place.
	ResultDescription string `json:"result_description,omitempty"`
}

// JSError is one uncaught page exception.
type JSError struct {
	Message string `json:"message"`
	Source  string `json:"source"` // "exception"
}

// Image is one <img> of the page.
type Image struct {
	Src    string `json:"src"`
	Alt    string `json:"alt"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// ImagesResult is browser_get_images's result; data: URIs are excluded.
type ImagesResult struct {
	Page
	Images []Image `json:"images"`
	Count  int     `json:"count"`
}

// VisionInput is browser_vision's input.
type VisionInput struct {
	Question string `json:"question" jsonschema:"what to look for; Gatehouse hosts no model, the screenshot is returned for the caller's own vision"`
	Annotate bool   `json:"annotate,omitempty" jsonschema:"draw ref labels on interactive elements"`
}

// Annotation labels one ref drawn on an annotated screenshot.
type Annotation struct {
	Ref   string `json:"ref"`
	Label string `json:"label"`
}

// VisionResult is browser_vision's result: the PNG's path (and, for the MCP
// surface, its bytes in PNG). Analysis is left to the caller's model.
type VisionResult struct {
	Page
	Question       string       `json:"question,omitempty"`
	ScreenshotPath string       `json:"screenshot_path,omitempty"`
	Annotations    []Annotation `json:"annotations,omitempty"`
	PNG            []byte       `json:"-"`
}

// CloseResult is browser_close's result.
type CloseResult struct {
	Page
	Closed []string `json:"closed"`
}

// begin resolves the session of a non-navigation call (spec §B3 binding and
// ownership), locks it, fills p with the current page and applies the page
// gate when read or input is true (spec §B8.2). The returned release unlocks.
func (m *Manager) begin(ctx context.Context, task string, p *Page) (*Session, func(), bool) {
	task = sessionkey.TaskID(task)
	key, dropped := m.bindings.Resolve(task, m.lookupOwner)
	if dropped {
		m.logger.Info("browser binding dropped", "task", task, "why", "session gone or owned by another task")
	}
	p.SessionKey = key
	m.expireCloud(key, true) // a provider expiry reads like a reap (manager_cloud.go)
	if rerr := m.expiredErr(task, key); rerr != nil {
		m.errOf(nil, p, rerr)
		return nil, nil, false
	}
	s, err := m.session(ctx, key, task)
	if err != nil {
		m.errOf(nil, p, err)
		return nil, nil, false
	}
	s.mu.Lock()
	if s.reaped { // the janitor closed it while we waited for the lock
		s.mu.Unlock()
		if rerr := m.expiredErr(task, key); rerr != nil {
			m.errOf(nil, p, rerr)
		} else {
			m.errOf(nil, p, reason.New(reason.BrowserFailed, "", "The session was closed while this call waited for it; call browser_navigate again."))
		}
		return nil, nil, false
	}
	p.Recycled, s.recycled = s.recycled, ""
	release := func() {
		m.mu.Lock()
		s.lastUsed = time.Now()
		m.mu.Unlock()
		s.mu.Unlock()
	}
	cur, err := s.tab.Current(ctx)
	if err != nil {
		m.errOf(s, p, err)
		release()
		return nil, nil, false
	}
	p.URL, p.Title = redactText(cur.URL), redactText(cur.Title)
	if rerr := m.gates.PageRefusal(cur.URL, s.active); rerr != nil {
		m.errOf(s, p, rerr)
		release()
		return nil, nil, false
	}
	return s, release, true
}

func (m *Manager) cmdCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, time.Duration(m.timeouts.Command)*time.Second)
}

// finish refreshes url/title (redacted) and reports dialogs opened since
// mark; it returns the raw page URL for the gates ("" when unknown).
func (m *Manager) finish(ctx context.Context, s *Session, p *Page, mark int64) (rawURL string) {
	if cur, err := s.tab.Current(ctx); err == nil {
		p.URL, p.Title = redactText(cur.URL), redactText(cur.Title)
		rawURL = cur.URL
	}
	p.Dialogs = redactDialogs(s.tab.DialogsSince(mark))
	p.PendingDialogs = pendingDialogs(s)
	return rawURL
}

// Navigate is browser_navigate (spec §B8.1): secret floor (raw and normalized),
// session key (hybrid routing before the gates), metadata floor, private check
// when the SSRF guard is active, website policy; then the load, the page's
// client redirects settling (meta refresh, script; navsettle.go), the
// post-redirect check of where they ended (a refused final URL resets the
// tab to about:blank and leaves the binding alone), the proxy's own refusals
// of the document, the last-active binding, and the compact snapshot, whose
// url and title are those of the document it shows. The redirect wait and
// the snapshot walk get what the load left of navTarget (snapwalk.go); a
// tab the page opened while loading is reported in Popup, not followed.
func (m *Manager) Navigate(ctx context.Context, task string, in NavigateInput) NavigateResult {
	if m.camo != nil {
		return m.camoNavigate(ctx, task, in) // Camofox backend (camofox.go)
	}
	task = sessionkey.TaskID(task)
	key := sessionkey.NavigationKey(task, in.URL, m.route, m.privateFn(ctx))
	r := NavigateResult{Page: Page{SessionKey: key}}
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
	s, err := m.session(ctx, key, task)
	if err != nil {
		m.errOf(nil, &r.Page, err)
		return r
	}
	s.mu.Lock()
	defer func() {
		m.mu.Lock()
		s.lastUsed = time.Now()
		m.mu.Unlock()
		s.mu.Unlock()
	}()
	if s.reaped {
		m.errOf(nil, &r.Page, reason.New(reason.BrowserFailed, "", "The session was closed by the janitor while this navigation waited; call browser_navigate again."))
		return r
	}
	r.Recycled, s.recycled = s.recycled, ""
	r.BackendInfo = m.backendInfo(s)
	to := m.timeouts.Open
	if s.navs == 0 {
		to = m.timeouts.FirstOpen
	}
	nctx, cancel := context.WithTimeout(ctx, time.Duration(to)*time.Second)
	defer cancel()
	m.dismissForNavigation(ctx, s)
	mark := s.tab.DialogMark()
	before := s.tab.Activity()
	start := time.Now()
	// Tabs opened before this navigation are not its own (popups.go).
	s.tab.TakePopups()
	pnaDone, closed := m.beginNavigation(nctx, s, u) // the agent's own navigation (pna.go)
	r.PopupsClosed = closed
	nr, err := s.tab.Navigate(nctx, u.Href)
	pnaDone()
	if err != nil && !backend.IsNavigated(err) {
		r.Dialogs = redactDialogs(s.tab.DialogsSince(mark))
		m.errOf(s, &r.Page, err)
		return r
	}
	if nr.ErrorText == "" {
		// Client redirects (meta refresh, script) settle before the landing
		// is judged and shown (navsettle.go).
		st := m.settleNavigation(nctx, s, navSettleLimit(snapshot.WithWalkEnd(nctx, start.Add(m.navTarget))))
		switch {
		case !st.navigated && err == nil:
		case st.url != "" && !strings.HasPrefix(st.url, "chrome-error:"):
			nr.URL, nr.Title = st.url, st.title
		default:
			cur, cerr := s.tab.Current(nctx)
			if cerr != nil {
				r.Dialogs = redactDialogs(s.tab.DialogsSince(mark))
				m.errOf(s, &r.Page, cerr)
				return r
			}
			nr.URL, nr.Title = cur.URL, cur.Title
		}
	}
	r.Dialogs = redactDialogs(s.tab.DialogsSince(mark))
	r.URL, r.Title = redactText(nr.URL), redactText(nr.Title)
	final := nr.URL
	rr := m.landingRefusal(s, u.Href, final, start, active)
	if rr == nil && m.navigationDownload(ctx, s, &r, mark, nr.ErrorText) {
		return r // a file, not a page: saved; the tab stays where it was (navcheck.go)
	}
	if rr == nil {
		doc := s.tab.LastDocLoad()
		if doc.Seq <= before.DocLoads {
			doc = backend.DocLoad{} // no document request of this navigation's
		}
		rr = loadFailure(s, start, doc, nr.ErrorText)
	}
	if rr != nil {
		// Never leave refused content readable by a later snapshot (spec §B8.1 6).
		m.resetBlank(ctx, s, &r.Page)
		r.Error, r.Reason = rr.Message, rr.Code
		return r
	}
	s.navs++
	m.bindings.Set(task, key)
	m.clearExpired(task)
	r.UsedRealProfile = s.realProfile
	if pd := pendingDialogs(s); len(pd) > 0 {
		r.Success, r.PendingDialogs = true, pd // the page opened a dialog while loading: no snapshot until it is answered
		return r
	}
	// The walk gets what the load and the settle wait left of navTarget
	// (at least snapshot.MinWalkTime; snapwalk.go).
	sctx, scancel := m.cmdCtx(snapshot.WithWalkEnd(ctx, start.Add(m.navTarget)))
	defer scancel()
	d, err := m.snapshotSettled(sctx, s, false)
	if err != nil {
		m.errOf(s, &r.Page, err)
		return r
	}
	if shown := showDocument(&r.Page, d); shown != "" && shown != final {
		// The page moved on after the landing was judged: judge the
		// document the snapshot shows.
		if rr := m.landingRefusal(s, u.Href, shown, start, active); rr != nil {
			m.resetBlank(ctx, s, &r.Page)
			r.Error, r.Reason = rr.Message, rr.Code
			return r
		}
	}
	if pops := s.tab.TakePopups(); len(pops) > 0 {
		// Reported, not followed: the session stays on the page asked for.
		r.Popup = &PopupInfo{URL: redactText(pops[len(pops)-1].URL), Opened: len(pops)}
	}
	r.Success = true
	r.Coverage = d.Coverage()
	r.Snapshot, r.Truncated = m.renderCovered(ctx, d.Snapshot, r.Coverage)
	r.ElementCount = d.Refs
	r.BotDetectionWarning = snapshot.BotDetectionWarning(r.Title)
	return r
}

// Snapshot is browser_snapshot.
func (m *Manager) Snapshot(ctx context.Context, task string, in SnapshotInput) SnapshotResult {
	if m.camo != nil {
		return m.camoSnapshot(ctx, task)
	}
	var r SnapshotResult
	s, release, ok := m.begin(ctx, task, &r.Page)
	if !ok {
		return r
	}
	defer release()
	cctx, cancel := m.cmdCtx(ctx)
	defer cancel()
	d, err := m.snapshotSettled(cctx, s, in.Full)
	r.RecentDialogs = s.tab.RecentDialogs(5)
	if err != nil {
		m.errOf(s, &r.Page, err)
		return r
	}
	if rerr := m.shownRefusal(s, &r.Page, d); rerr != nil {
		m.errOf(s, &r.Page, rerr)
		return r
	}
	r.Success = true
	r.Coverage = d.Coverage()
	r.Snapshot, r.Truncated = m.renderCovered(ctx, d.Snapshot, r.Coverage)
	r.ElementCount = d.Refs
	return r
}

type pointData struct {
	Stale       bool    `json:"stale"`
	Hidden      bool    `json:"hidden"`
	Disabled    bool    `json:"disabled"` // a :disabled form control: the browser delivers it no click
	Intercepted string  `json:"intercepted"`
	By          string  `json:"by"`
	X           float64 `json:"x"`
	Y           float64 `json:"y"`
	Next        int     `json:"next"`
}

func staleErr(ref string) *reason.Error {
	return reason.Newf(reason.StaleRef, "",
		"Ref %s is not on the current page (the page navigated, the element was removed, or the ref was never issued). Call browser_snapshot and use a fresh ref.", snapshot.NormalizeRef(ref))
}

// Click is browser_click: the element is scrolled into view and hit-tested at
// its centre; when another element would receive the click, click_intercepted
// names that element's ref and nothing is clicked. A ref that names no live
// element of the current document is stale_ref; it is never re-resolved.
func (m *Manager) Click(ctx context.Context, task string, in RefInput) ClickResult {
	if m.camo != nil {
		return m.camoClick(ctx, task, in)
	}
	var r ClickResult
	if m.act(ctx, task, &r.Page, &r.Change, 0, func(cctx context.Context, s *Session, _ *actMark) error {
		var pt pointData
		dx, dy, gone, err := s.callRef(cctx, in.Ref, "point", map[string]any{}, &pt)
		if err != nil {
			return err
		}
		if dx == 0 && dy == 0 && !frameRefRe.MatchString(snapshot.RefID(in.Ref)) {
			s.nextRef = max(s.nextRef, pt.Next)
		}
		pt.X, pt.Y, pt.Stale = pt.X+dx, pt.Y+dy, pt.Stale || gone
		switch {
		case pt.Stale:
			return staleErr(in.Ref)
		case pt.Disabled:
			return reason.Newf(reason.ElementDisabled, "",
				"Ref %s is %s, which is disabled: the browser delivers no click to it, so nothing was clicked. Do what the page needs to enable it (fill in the form, tick a box), then take a new browser_snapshot.",
				snapshot.NormalizeRef(in.Ref), pt.By)
		case pt.Hidden:
			return reason.Newf(reason.NotVisible, "", "Ref %s has no visible box to click.", snapshot.NormalizeRef(in.Ref))
		case pt.Intercepted != "":
			r.InterceptedBy = "@" + pt.Intercepted
			return reason.Newf(reason.ClickIntercepted, "",
				"The click on %s would land on %s [ref=%s], which covers it (an overlay, banner or dialog). Dismiss or click that element first.",
				snapshot.NormalizeRef(in.Ref), pt.By, pt.Intercepted)
		}
		return s.tab.Click(cctx, pt.X, pt.Y)
	}) {
		r.Clicked = snapshot.NormalizeRef(in.Ref)
	}
	return r
}

// actMark is where an action starts: the dialog/download mark, the tab's
// activity and the time (for the egress proxy's records).
type actMark struct {
	dialogs int64
	before  backend.Activity
	start   time.Time
	// history: the action goes through the tab's history (browser_back);
	// a tab the page it lands on opens while loading is reported, not
	// followed, as after browser_navigate (popups.go).
	history bool
}

func markAction(s *Session) actMark {
	s.tab.TakePopups() // tabs opened before the action are not its own (popups.go)
	return actMark{dialogs: s.tab.DialogMark(), before: s.tab.Activity(), start: time.Now()}
}

// afterAction waits for what the action caused — a navigation it triggered,
// then DOM and network quiet — for at most settleCap (page_busy when the cap
// fires), then reports the change and the current page. A navigation to a
// page that is refused or did not load fails the call with the code
// browser_navigate would give that URL, the tab reset to about:blank
// (actionLanding).
func (m *Manager) afterAction(ctx context.Context, s *Session, p *Page, c *Change, mk actMark) {
	mark := mk.dialogs
	navigated, busy := m.settle(ctx, s, mk.before)
	if m.afterEffects(ctx, s, p, mark, !mk.history) { // downloads and a followed popup (popups.go)
		navigated, busy, mark = true, false, 0
	} else if navigated && len(p.Downloads) == 0 && m.actionLanding(ctx, s, p, mk.before, mk.start) {
		c.Navigated = true // to a page that was refused or did not load (navcheck.go)
		p.Dialogs = redactDialogs(s.tab.DialogsSince(mark))
		return
	}
	p.Success = true
	p.PageBusy = busy
	raw := m.finish(ctx, s, p, mark)
	if rerr := m.gates.PageRefusal(raw, s.active); rerr != nil {
		m.errOf(s, p, rerr)
		return
	}
	if len(p.PendingDialogs) > 0 {
		return // no snapshot while a dialog blocks the page (dialogs.go)
	}
	doc := s.tab.Activity().DocSeq
	prev, prevDoc, prevCut := s.lastSnap, s.lastDoc, s.lastCut
	d, err := m.snapshotSettled(ctx, s, false)
	if err == nil {
		if rerr := m.shownRefusal(s, p, d); rerr != nil {
			m.errOf(s, p, rerr)
			return
		}
	}
	if err != nil {
		if reason.Of(err) == reason.CommandTimeout {
			// The action happened, but the page no longer answers (a script
			// holds its main thread): say so; the session is recycled next call.
			m.errOf(s, p, reason.Wrap(reason.CommandTimeout, "",
				"The action was performed, but the page stopped responding (a script keeps it busy) within browser.command_timeout; the session will be replaced by a fresh one on the next call.", err))
			return
		}
		if busy {
			return // the page is mid-navigation; the next call snapshots it
		}
		m.errOf(s, p, err)
		return
	}
	// A partial snapshot (snapwalk.go) is given whole: a delta against
	// another partial one would list the lines past either's end as
	// removed or added.
	c.Coverage = d.Coverage()
	if navigated || doc != prevDoc || prev == "" || prevCut || c.SnapshotTruncated {
		c.Navigated = navigated || doc != prevDoc
		c.Snapshot, _ = m.renderCovered(ctx, d.Snapshot, c.Coverage)
		n := d.Refs
		c.ElementCount = &n
		return
	}
	c.Delta, _, _ = m.render(ctx, snapshot.Delta(prev, d.Snapshot))
}

func (m *Manager) settle(ctx context.Context, s *Session, before backend.Activity) (navigated, busy bool) {
	return m.settleWithin(ctx, s, before, settleCap)
}

// settleWithin is settle with its cap as a parameter (the render step waits
// longer, see render.go).
func (m *Manager) settleWithin(ctx context.Context, s *Session, before backend.Activity, limit time.Duration) (navigated, busy bool) {
	start := time.Now()
	deadline := start.Add(limit)
	for {
		a := s.tab.Activity()
		navigated = a.NavSeq > before.NavSeq || a.DocSeq > before.DocSeq
		if _, open := s.tab.PendingDialog(); open {
			return navigated, false // the page is blocked until browser_dialog answers
		}
		now := time.Now()
		if now.After(deadline) || ctx.Err() != nil {
			return navigated, true
		}
		ready := now.Sub(start) >= quietWindow &&
			!(navigated && a.Loading) &&
			a.Inflight == 0 && now.Sub(a.LastNet) >= quietWindow
		if ready {
			var q struct {
				Since float64 `json:"since"`
			}
			qctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			err := s.callJS(qctx, "quiet", nil, &q)
			cancel()
			if err == nil && q.Since >= float64(quietWindow.Milliseconds()) {
				return navigated, false
			}
		}
		wait := pollEvery
		if rem := time.Until(deadline); rem < wait {
			wait = max(rem, time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-a.Changed:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
		}
	}
}

type focusData struct {
	Stale    bool   `json:"stale"`
	Editable bool   `json:"editable"`
	What     string `json:"what"`
	Why      string `json:"why"` // "disabled" or "read-only" for a text field that takes no input
}

// originOf returns scheme://host[:port] of raw for messages (never its
// path or query, which may carry a secret): the port when raw names one
// other than the scheme's default, an IPv6 host in brackets.
func originOf(raw string) string {
	u, err := urlsafe.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	host := u.Host
	if u.Addr.Is6() {
		host = "[" + host + "]"
	}
	if u.Port != "" {
		host += ":" + u.Port
	}
	return u.Scheme + "://" + host
}

// Type is browser_type: focus the field, replace its content with text (one
// input event, then change), wait and report the delta.
func (m *Manager) Type(ctx context.Context, task string, in TypeInput) TypeResult {
	if m.camo != nil {
		return m.camoType(ctx, task, in)
	}
	var r TypeResult
	if m.act(ctx, task, &r.Page, &r.Change, 0, func(cctx context.Context, s *Session, mk *actMark) error {
		var f focusData
		_, _, gone, err := s.callRef(cctx, in.Ref, "focus", map[string]any{"clear": in.Text == ""}, &f)
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
		mk.before = s.tab.Activity() // focusing is not what the call is judged by
		if in.Text != "" {
			if err := s.tab.InsertText(cctx, in.Text); err != nil && !openedDialog(err) {
				return err
			}
		}
		s.callRef(cctx, in.Ref, "changed", map[string]any{}, nil) //nolint:errcheck // best effort: a navigation may have replaced the page
		return nil
	}) {
		r.Typed, r.Element = redactText(in.Text), snapshot.NormalizeRef(in.Ref) // echoed input redacted (spec §B2)
	}
	return r
}

// Scroll is browser_scroll: 500 px up or down (invalid_direction otherwise).
func (m *Manager) Scroll(ctx context.Context, task string, in ScrollInput) ScrollResult {
	var r ScrollResult
	dy, ok := snapshot.ScrollDelta(in.Direction)
	if !ok {
		r.SessionKey = sessionkey.TaskID(task)
		r.Error, r.Reason = fmt.Sprintf("Invalid scroll direction %q: use \"up\" or \"down\".", in.Direction), reason.InvalidDirection
		return r
	}
	if m.camo != nil {
		return m.camoScroll(ctx, task, in)
	}
	if m.act(ctx, task, &r.Page, &r.Change, 0, func(cctx context.Context, s *Session, _ *actMark) error {
		return s.callJS(cctx, "scroll", map[string]any{"dy": dy}, nil)
	}) {
		r.Scrolled = in.Direction
	}
	return r
}

// act is the one sequence of a page action whose result is the page and its
// snapshot change (browser_click, browser_type, browser_scroll, browser_back,
// browser_press, browser_dialog): the session (m.begin), the timeout
// (browser.command_timeout when timeout is 0), do (a dialog it opened is not a
// failure: the result reports it; one already open is dialog_pending; do may move *mk when what it did first is
// not part of the action, e.g. browser_back switching to the opener tab), then
// afterAction's wait, landing check and change. A failure of do is written to
// p (m.errOf) and act reports false; true means the action was performed
// (afterAction may still report a failure of what it caused in p).
func (m *Manager) act(ctx context.Context, task string, p *Page, c *Change, timeout time.Duration, do func(context.Context, *Session, *actMark) error) bool {
	s, release, ok := m.begin(ctx, task, p)
	if !ok {
		return false
	}
	defer release()
	if timeout <= 0 {
		timeout = time.Duration(m.timeouts.Command) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	mk := markAction(s)
	if err := do(cctx, s, &mk); err != nil && !(openedDialog(err) && len(s.tab.DialogsSince(mk.dialogs)) > 0) {
		m.errOf(s, p, err) // a dialog that was open before the action still fails it (dialog_pending)
		return false
	}
	m.afterAction(cctx, s, p, c, mk)
	return true
}

// Press is browser_press: one key to the focused element.
func (m *Manager) Press(ctx context.Context, task string, in PressInput) PressResult {
	var r PressResult
	if _, ok := backend.KeyRune(in.Key); !ok {
		r.SessionKey = sessionkey.TaskID(task)
		r.Error, r.Reason = fmt.Sprintf("Unknown key %q; use a DOM key name such as Enter, Tab, Escape, ArrowDown, Backspace or a single character.", in.Key), reason.InvalidKey
		return r
	}
	if m.camo != nil {
		return m.camoPress(ctx, task, in)
	}
	if m.act(ctx, task, &r.Page, &r.Change, 0, func(cctx context.Context, s *Session, _ *actMark) error {
		return s.tab.Press(cctx, in.Key)
	}) {
		r.Pressed = in.Key
	}
	return r
}

// Back is browser_back: one history entry back, then the page gate on where
// history landed (spec §B8.2) and the new document's snapshot.
func (m *Manager) Back(ctx context.Context, task string) BackResult {
	if m.camo != nil {
		return m.camoBack(ctx, task)
	}
	var r BackResult
	m.act(ctx, task, &r.Page, &r.Change, time.Duration(m.timeouts.Open)*time.Second, func(nctx context.Context, s *Session, mk *actMark) error {
		mk.history = true
		_, err := s.tab.Back(nctx)
		if isNoHistory(err) && m.backToOpener(s) {
			*mk = markAction(s) // back in the opener (popups.go)
			mk.history = true
			return nil
		}
		return err
	})
	return r
}

// Console is browser_console: without expression the buffered console messages
// and uncaught exceptions of the session's tab (clear empties the buffer); with
// expression its value, evaluated in the page.
func (m *Manager) Console(ctx context.Context, task string, in ConsoleInput) ConsoleResult {
	if m.camo != nil {
		return m.camoConsole(ctx, task, in)
	}
	var r ConsoleResult
	s, release, ok := m.begin(ctx, task, &r.Page)
	if !ok {
		return r
	}
	defer release()
	if in.Expression == "" {
		msgs := redactConsole(s.tab.Console(in.Clear))
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
		return r
	}
	// Eval policy (spec §B8.3): the opt-in denylist, then the URL-literal
	// pre-screen (the metadata floor always, the rest when the guard is on).
	cctx, cancel := m.cmdCtx(ctx)
	defer cancel()
	if rerr := m.gates.CheckEval(cctx, in.Expression, m.evalSettings(), s.active); rerr != nil {
		m.errOf(s, &r.Page, rerr)
		return r
	}
	mark := s.tab.DialogMark()
	before := s.tab.Activity()
	v, err := s.tab.EvalPage(cctx, in.Expression)
	r.Dialogs = redactDialogs(s.tab.DialogsSince(mark))
	m.settleAfterEval(cctx, s, before)
	if err != nil {
		if rerr := m.pageMoved(cctx, s, &r.Page); rerr != nil {
			m.withheld(ctx, s, &r.Page, rerr)
			return r
		}
		m.errOf(s, &r.Page, err)
		return r
	}
	// An eval may have moved the page: withhold the result if it now sits on a
	// refused URL (spec §B8.3 step 6).
	raw := m.finish(cctx, s, &r.Page, mark)
	if rerr := m.gates.PageRefusal(raw, s.active); rerr != nil {
		m.withheld(ctx, s, &r.Page, rerr)
		return r
	}
	r.Success, r.ResultType = true, v.Type
	if v.Value != nil {
		r.Result = redactJSON(v.Value)
	}
	if v.Description != "" {
		// (With a value: what was described in it, see backend.EvalResult.)
		r.ResultDescription = redactText(v.Description)
	}
	return r
}

// GetImages is browser_get_images.
func (m *Manager) GetImages(ctx context.Context, task string) ImagesResult {
	if m.camo != nil {
		return m.camoImages(ctx, task)
	}
	var r ImagesResult
	s, release, ok := m.begin(ctx, task, &r.Page)
	if !ok {
		return r
	}
	defer release()
	cctx, cancel := m.cmdCtx(ctx)
	defer cancel()
	r.Images = []Image{}
	if err := s.callJS(cctx, "images", nil, &r.Images); err != nil {
		m.errOf(s, &r.Page, err)
		return r
	}
	redactImages(r.Images)
	r.Success, r.Count = true, len(r.Images)
	return r
}

// Vision is browser_vision: a PNG screenshot of the viewport saved under
// <home>/cache/screenshots (annotated with ref labels when asked), returned by
// path and as bytes for an MCP image content block.
func (m *Manager) Vision(ctx context.Context, task string, in VisionInput) VisionResult {
	if m.camo != nil {
		return m.camoVision(ctx, task, in)
	}
	r := VisionResult{Question: in.Question}
	s, release, ok := m.begin(ctx, task, &r.Page)
	if !ok {
		return r
	}
	defer release()
	cctx, cancel := m.cmdCtx(ctx)
	defer cancel()
	if in.Annotate {
		if _, err := s.snapshot(cctx, false); err != nil {
			m.errOf(s, &r.Page, err)
			return r
		}
		if err := s.callJS(cctx, "annotate", nil, &r.Annotations); err != nil {
			m.errOf(s, &r.Page, err)
			return r
		}
		defer s.callJS(cctx, "unannotate", nil, nil) //nolint:errcheck
	}
	png, err := s.tab.Screenshot(cctx)
	if err != nil {
		m.errOf(s, &r.Page, err)
		return r
	}
	r.ScreenshotPath = m.saveScreenshot(png)
	r.Success, r.PNG = true, png
	return r
}

// saveScreenshot writes png to <home>/cache/screenshots/browser_screenshot_
// <16 random hex>.png with the symlink-safe writer, owner-only (0600 in a
// 0700 directory: a screenshot can show private content, as cached pages
// can), and returns its agent-visible path, or "" when it could not be
// written (the image is still returned inline).
func (m *Manager) saveScreenshot(png []byte) string {
	dir := filepath.Join(m.home, "cache", "screenshots")
	var rnd [8]byte
	rand.Read(rnd[:])
	p := filepath.Join(dir, "browser_screenshot_"+hex.EncodeToString(rnd[:])+".png")
	if truncate.PrivateDir(dir) != nil || truncate.WriteNoFollow(p, png, 0o600) != nil {
		return ""
	}
	return m.store.AgentPath(p)
}

// CloseSessions is browser_close: it releases the task's sessions now (the
// task's own and its ::local sidecar) and drops its binding.
func (m *Manager) CloseSessions(_ context.Context, task string) CloseResult {
	r := CloseResult{Page: Page{Success: true, SessionKey: sessionkey.TaskID(task)}}
	r.Closed = m.CloseTask(sessionkey.TaskID(task))
	if r.Closed == nil {
		r.Closed = []string{}
	}
	return r
}
