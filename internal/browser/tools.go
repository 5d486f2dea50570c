package browser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/navsettle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/renderstep"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/browser/toolio"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// The browser tools' inputs and results (package toolio), under their names
// in this package.
type (
	Page           = toolio.Page
	Change         = toolio.Change
	BackendInfo    = toolio.BackendInfo
	NavigateInput  = toolio.NavigateInput
	NavigateResult = toolio.NavigateResult
	SnapshotInput  = toolio.SnapshotInput
	SnapshotResult = toolio.SnapshotResult
	RefInput       = toolio.RefInput
	ClickResult    = toolio.ClickResult
	TypeInput      = toolio.TypeInput
	FillInput      = toolio.FillInput
	FillField      = toolio.FillField
	FillResult     = toolio.FillResult
	TypeResult     = toolio.TypeResult
	ScrollInput    = toolio.ScrollInput
	ScrollResult   = toolio.ScrollResult
	BackResult     = toolio.BackResult
	PressInput     = toolio.PressInput
	PressResult    = toolio.PressResult
	ConsoleInput   = toolio.ConsoleInput
	ConsoleResult  = toolio.ConsoleResult
	JSError        = toolio.JSError
	Image          = toolio.Image
	ImagesResult   = toolio.ImagesResult
	VisionInput    = toolio.VisionInput
	Annotation     = toolio.Annotation
	VisionResult   = toolio.VisionResult
	CloseResult    = toolio.CloseResult
	PopupInfo      = toolio.PopupInfo
	DialogInput    = toolio.DialogInput
	DialogResult   = toolio.DialogResult
	SessionInput   = toolio.SessionInput
)

// The session argument's name and its MCP header name (toolio).
const (
	SessionArg    = toolio.SessionArg
	SessionHeader = toolio.SessionHeader
)

// Settle caps (issue 8: a hard cap under 1 s, never a fixed sleep).
const (
	settleCap   = 900 * time.Millisecond
	quietWindow = renderstep.QuietWindow // DOM and network idle this long = quiet; also the navigation probe
	pollEvery   = navsettle.PollEvery
)

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
//
// With a session handle in ctx (WithSession) it closes that session.
func (m *Manager) CloseSessions(ctx context.Context, task string) CloseResult {
	if h := sessionArg(ctx); h != "" {
		return m.closeHandle(ctx, task, h) // handles.go
	}
	r := CloseResult{Page: Page{Success: true, SessionKey: sessionkey.TaskID(task)}}
	r.Closed = m.CloseTask(sessionkey.TaskID(task))
	if r.Closed == nil {
		r.Closed = []string{}
	}
	return r
}
