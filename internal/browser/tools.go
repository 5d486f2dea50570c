package browser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/renderstep"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// Page is the part every browser tool result shares (spec §B2 shapes plus what
// the described system hides): success, the URL, title and session key of the
// page the call acted on (so a stale binding is visible; a delta result omits
// a title that did not change since the snapshot the delta is against), and
// on failure an error message with a stable reason code.
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
	// RetryAfterS is when a refused call may succeed, in seconds: set with
	// browser_capacity (every browser node full, issue 19).
	RetryAfterS int `json:"retry_after_s,omitempty"`
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
	quietWindow = renderstep.QuietWindow // DOM and network idle this long = quiet; also the navigation probe
	pollEvery   = 15 * time.Millisecond
)

// NavigateInput is browser_navigate's input.
type NavigateInput struct {
	URL  string `json:"url" jsonschema:"absolute http(s) URL to open"`
	Find string `json:"find,omitempty" jsonschema:"show only the snapshot lines containing this text"`
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
	Full bool   `json:"full,omitempty" jsonschema:"every element, not the compact view"`
	Find string `json:"find,omitempty" jsonschema:"show only the snapshot lines containing this text"`
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
	Ref  string `json:"ref" jsonschema:"ref from the latest snapshot (e5)"`
	Find string `json:"find,omitempty" jsonschema:"show only the snapshot lines containing this text"`
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
	Ref    string `json:"ref" jsonschema:"text field ref"`
	Text   string `json:"text" jsonschema:"new content"`
	Submit bool   `json:"submit,omitempty" jsonschema:"press Enter after"`
	Find   string `json:"find,omitempty" jsonschema:"show only the snapshot lines containing this text"`
}

// FillInput is browser_fill's input: several fields typed in one call.
type FillInput struct {
	Fields []FillField `json:"fields" jsonschema:"[{ref, text}] in order"`
}

// FillField is one field of browser_fill.
type FillField struct {
	Ref  string `json:"ref" jsonschema:"text field ref"`
	Text string `json:"text" jsonschema:"new content"`
}

// FillResult is browser_fill's result: the refs filled, in order, and one
// delta for all of them.
type FillResult struct {
	Page
	Filled []string `json:"filled,omitempty"`
	Change
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
	Direction string `json:"direction" jsonschema:"up or down"`
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
	Key  string `json:"key" jsonschema:"DOM key name or one character"`
	Find string `json:"find,omitempty" jsonschema:"show only the snapshot lines containing this text"`
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
	Question string `json:"question" jsonschema:"what to look for (for your own vision)"`
	Annotate bool   `json:"annotate,omitempty" jsonschema:"label elements with their refs"`
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

// Click is browser_click: the element is clicked (locally: scrolled into
// view and hit-tested at its centre, click_intercepted when another element
// would receive it; a stale ref is never re-resolved; localTab.click).
func (m *Manager) Click(ctx context.Context, task string, in RefInput) ClickResult {
	var r ClickResult
	ctx = withFind(ctx, in.Find)
	if m.act(ctx, task, &r.Page, &r.Change, 0, "click "+snapshot.NormalizeRef(in.Ref), func(cctx context.Context, t tab) error {
		return t.click(cctx, in.Ref, &r)
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
	prev, prevDoc, prevCut, prevTitle, prevWhole := s.lastSnap, s.lastDoc, s.lastCut, s.lastTitle, s.lastWhole
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
		var cut bool
		c.Snapshot, cut = m.renderCovered(ctx, m.foldChrome(ctx, s, prev, prevCut || !prevWhole, d), c.Coverage)
		s.lastWhole = s.lastWhole && !cut // the agent saw only its head
		n := d.Refs
		c.ElementCount = &n
		return
	}
	if p.Title == prevTitle {
		p.Title = "" // the same document under the same title: a compact delta result
	}
	delta := snapshot.Delta(prev, d.Snapshot)
	if q := findQuery(ctx); q != "" {
		delta = snapshot.FindDelta(delta, q)
	}
	c.Delta, _, _ = m.render(ctx, delta)
}

// foldChrome returns the text of d a result shows whole after a navigation:
// the page chrome it repeats from prev, the snapshot the agent was last
// shown whole, folded (snapshot.Collapse); d's own text when the call has a
// find input, prev was not shown whole (skip), or d lists only part of a
// huge page. It records whether the agent now sees d whole.
func (m *Manager) foldChrome(ctx context.Context, s *Session, prev string, skip bool, d snapData) string {
	find := findQuery(ctx) != ""
	s.lastWhole = !find
	if find || skip || d.Coverage().SnapshotTruncated {
		return d.Snapshot
	}
	return snapshot.Collapse(prev, d.Snapshot)
}

func (m *Manager) settle(ctx context.Context, s *Session, before backend.Activity) (navigated, busy bool) {
	return m.settleWithin(ctx, s, before, settleCap)
}

// settleWithin is settle with its cap as a parameter (the render step waits
// longer, see renderstep).
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

// Type is browser_type: focus the field, replace its content with text, wait
// and report the delta.
func (m *Manager) Type(ctx context.Context, task string, in TypeInput) TypeResult {
	var r TypeResult
	ctx = withFind(ctx, in.Find)
	if m.act(ctx, task, &r.Page, &r.Change, 0, "type into "+snapshot.NormalizeRef(in.Ref), func(cctx context.Context, t tab) error {
		if err := t.typeText(cctx, in); err != nil || !in.Submit {
			return err
		}
		return t.press(cctx, "Enter")
	}) {
		r.Typed, r.Element = redactText(in.Text), snapshot.NormalizeRef(in.Ref) // echoed input redacted (spec §B2)
	}
	return r
}

// Fill is browser_fill: each field typed as browser_type types it, in order,
// then one wait and one delta for all of them. A field that cannot be typed
// into (stale_ref, not_editable) fails the call with its code, naming the
// field; the fields before it stay filled.
func (m *Manager) Fill(ctx context.Context, task string, in FillInput) FillResult {
	var r FillResult
	if len(in.Fields) == 0 {
		r.SessionKey = sessionkey.TaskID(task)
		r.Error, r.Reason = "browser_fill needs at least one field: fields=[{ref, text}, …].", reason.InvalidArguments
		return r
	}
	var done []string
	if m.act(ctx, task, &r.Page, &r.Change, 0, "fill", func(cctx context.Context, t tab) error {
		for i, f := range in.Fields {
			if err := t.typeText(cctx, TypeInput{Ref: f.Ref, Text: f.Text}); err != nil {
				if re := reason.As(err); re != nil && re.Code != "" {
					return reason.Wrap(re.Code, "", fmt.Sprintf("Field %d of %d (%s): %s", i+1, len(in.Fields), snapshot.NormalizeRef(f.Ref), re.Message), err)
				}
				return err
			}
			done = append(done, snapshot.NormalizeRef(f.Ref))
		}
		return nil
	}) {
		r.Filled = done
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
	if m.act(ctx, task, &r.Page, &r.Change, 0, "scroll", func(cctx context.Context, t tab) error {
		return t.scroll(cctx, in.Direction, dy)
	}) {
		r.Scrolled = in.Direction
	}
	return r
}

// Press is browser_press: one key to the focused element.
func (m *Manager) Press(ctx context.Context, task string, in PressInput) PressResult {
	var r PressResult
	ctx = withFind(ctx, in.Find)
	if _, ok := backend.KeyRune(in.Key); !ok {
		r.SessionKey = sessionkey.TaskID(task)
		r.Error, r.Reason = fmt.Sprintf("Unknown key %q; use a DOM key name such as Enter, Tab, Escape, ArrowDown, Backspace or a single character.", in.Key), reason.InvalidKey
		return r
	}
	if m.act(ctx, task, &r.Page, &r.Change, 0, "press "+in.Key, func(cctx context.Context, t tab) error {
		return t.press(cctx, in.Key)
	}) {
		r.Pressed = in.Key
	}
	return r
}

// Back is browser_back: one history entry back, then the page gate on where
// history landed (spec §B8.2) and the new document's snapshot.
func (m *Manager) Back(ctx context.Context, task string) BackResult {
	var r BackResult
	m.act(ctx, task, &r.Page, &r.Change, time.Duration(m.timeouts.Open)*time.Second, "go back", func(nctx context.Context, t tab) error {
		return t.back(nctx)
	})
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
