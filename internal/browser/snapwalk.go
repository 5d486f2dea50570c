package browser

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// Budgets of one snapshot walk (page.js snapshot; issue 16 item 5). A page of
// 200 000 elements took the unbounded walk 10–30 s of the renderer's main
// thread on a loaded 2-core machine, past browser.command_timeout: the call
// failed with command_timeout and the session was recycled. The walk now
// stops at the first budget spent and the snapshot says how much of the page
// it covers (SnapshotWalk); the rest of the tool call (load, transfer, the
// truncate-and-store step) stays within seconds.
const (
	// SnapshotTimeBudget is the most wall time the in-page walk spends
	// (frames included), and at most half of what is left of the call's
	// deadline and what is left until its walk end (withWalkEnd).
	SnapshotTimeBudget = 5 * time.Second
	// SnapshotNodeBudget is the most elements the walk examines (frames
	// included). A page of more elements than this is also walked from its
	// viewport down once scrolled (elements scrolled past are left out), so
	// scrolling reaches any part of it.
	SnapshotNodeBudget = 30_000
	// minWalkTime is the least time budget a walk is given (a call with
	// little of its deadline left still lists the top of the page).
	minWalkTime = 500 * time.Millisecond
	// navigateTarget is how long browser_navigate aims to take from its
	// start to its answer (issue 16 item 5: 20 s on a loaded 2-core
	// machine, which leaves room for what cannot be cut short: a first
	// layout, the transfer of the snapshot). The page's own load comes
	// first; the wait for client redirects and the snapshot walk get what it
	// left (navSettleLimit, walkEnd), so a page whose load took most of it
	// is answered with a shorter partial snapshot (browser_snapshot gives
	// the whole SnapshotTimeBudget), not later.
	navigateTarget = 12 * time.Second
	// walkReserve is the part of what is left of a call's target kept for
	// its snapshot walk when the redirect settle wait is bounded.
	walkReserve = 2 * time.Second
)

// walkEndKey is the context key of the time a call's snapshot walks should
// end by (withWalkEnd).
type walkEndKey struct{}

// withWalkEnd returns ctx carrying end: a snapshot walk under it (retries
// and frames included) is given at most what is left until end, and at
// least minWalkTime.
func withWalkEnd(ctx context.Context, end time.Time) context.Context {
	return context.WithValue(ctx, walkEndKey{}, end)
}

// walkEnd returns the time set by withWalkEnd (zero when none).
func walkEnd(ctx context.Context) time.Time {
	end, _ := ctx.Value(walkEndKey{}).(time.Time)
	return end
}

// navSettleLimit bounds a wait for client redirects (settleNavigation)
// under ctx: redirectSettleCap, or what is left until ctx's walk end less
// walkReserve when that is shorter, and at least refreshWaitMax plus
// refreshGrace (a meta refresh browser_navigate waits for is still followed
// on a page that was slow to load).
func navSettleLimit(ctx context.Context) time.Duration {
	end := walkEnd(ctx)
	if end.IsZero() {
		return redirectSettleCap
	}
	return min(max(time.Until(end)-walkReserve, refreshWaitMax+refreshGrace), redirectSettleCap)
}

// Values of SnapshotWalk.StoppedBy.
const (
	WalkNodeBudget = "node_budget"
	WalkTimeBudget = "time_budget"
	WalkSizeBudget = "size_budget" // SnapshotStoreCap chars of lines written
)

// SnapshotWalk says how much of the page a snapshot covers when it does not
// cover all of it (snapshot_truncated): the walk stopped at a budget
// (StoppedBy), or, in a page of more than SnapshotNodeBudget elements
// scrolled down, parts above the viewport were left out (AboveViewport).
type SnapshotWalk struct {
	// StoppedBy names the budget that stopped the walk: node_budget
	// (SnapshotNodeBudget elements examined), time_budget
	// (SnapshotTimeBudget spent) or size_budget (SnapshotStoreCap chars
	// written); "" when the walk reached the end of the page.
	StoppedBy string `json:"stopped_by,omitempty"`
	// ElementsWalked is the number of elements the walk examined;
	// ElementsTotal the number in the top document (frames not counted).
	ElementsWalked int `json:"elements_walked"`
	ElementsTotal  int `json:"elements_total"`
	// AboveViewport is the number of parts of the page (element subtrees)
	// left out because they lie above the viewport.
	AboveViewport int `json:"above_viewport,omitempty"`
	// RefsShown is the number of refs in the snapshot (element_count).
	RefsShown int `json:"refs_shown"`
}

// SnapshotCoverage is the part of a browser result that says a snapshot does
// not cover the whole page. Snapshot text cut at browser.snapshot_threshold
// (with the full text stored) is "truncated"; this is about what the walk
// itself listed.
type SnapshotCoverage struct {
	// SnapshotTruncated is true when the snapshot lists only part of the
	// page (SnapshotWalk says which part); the snapshot text ends with a
	// note naming how to reach the rest.
	SnapshotTruncated bool          `json:"snapshot_truncated,omitempty"`
	SnapshotWalk      *SnapshotWalk `json:"snapshot_walk,omitempty"`
}

// walkData is page.js's account of a walk.
type walkData struct {
	Stopped  string `json:"stopped"` // "nodes", "time", "size" or ""
	Elements int    `json:"elements"`
	Total    int    `json:"total"`
	Above    int    `json:"above"`
}

// walkBudget is the budget argument of page.js snapshot.
type walkBudget struct {
	MS    int64 `json:"ms"`
	Nodes int   `json:"nodes"`
	Chars int   `json:"chars"`
}

// walkBudgetFor returns the budget of a walk ending no later than end (zero:
// now + SnapshotTimeBudget) with nodes elements left: at most half of the
// time left before ctx's deadline and what is left until ctx's walk end
// (withWalkEnd), at least minWalkTime. ok is false when nothing is left (end
// passed, or no nodes).
func walkBudgetFor(ctx context.Context, end time.Time, nodes int) (b walkBudget, ok bool) {
	now := time.Now()
	d := SnapshotTimeBudget
	if !end.IsZero() {
		d = end.Sub(now)
		if d <= 0 || nodes <= 0 {
			return walkBudget{}, false
		}
	} else {
		if dl, has := ctx.Deadline(); has {
			d = min(d, dl.Sub(now)/2)
		}
		if we := walkEnd(ctx); !we.IsZero() {
			d = min(d, we.Sub(now))
		}
		d = max(d, minWalkTime)
	}
	return walkBudget{MS: max(d.Milliseconds(), 1), Nodes: nodes, Chars: SnapshotStoreCap}, true
}

// coverage returns the SnapshotCoverage of a walk that listed refs refs.
func (w *walkData) coverage(refs int) SnapshotCoverage {
	if w == nil || (w.Stopped == "" && w.Above == 0) {
		return SnapshotCoverage{}
	}
	sw := &SnapshotWalk{ElementsWalked: w.Elements, ElementsTotal: w.Total, AboveViewport: w.Above, RefsShown: refs}
	switch w.Stopped {
	case "nodes":
		sw.StoppedBy = WalkNodeBudget
	case "time":
		sw.StoppedBy = WalkTimeBudget
	case "size":
		sw.StoppedBy = WalkSizeBudget
	}
	return SnapshotCoverage{SnapshotTruncated: true, SnapshotWalk: sw}
}

// merge adds a frame's walk (the frame's elements are walked too; its total
// is not the top document's).
func (w *walkData) merge(f *walkData) {
	if f == nil {
		return
	}
	w.Elements += f.Elements
	if w.Stopped == "" {
		w.Stopped = f.Stopped
	}
}

// walkNote is the line that ends a snapshot that does not cover the whole
// page: what was left out and how to reach it. "" for a whole snapshot.
func walkNote(c SnapshotCoverage) string {
	w := c.SnapshotWalk
	if w == nil {
		return ""
	}
	var what string
	switch w.StoppedBy {
	case WalkNodeBudget:
		what = fmt.Sprintf("the walk stopped at its budget of %d elements", SnapshotNodeBudget)
	case WalkTimeBudget:
		what = fmt.Sprintf("the walk stopped at its time budget (%s)", SnapshotTimeBudget)
	case WalkSizeBudget:
		what = fmt.Sprintf("the walk stopped at %d chars of text", SnapshotStoreCap)
	}
	var note string
	if what != "" {
		note = fmt.Sprintf("[Partial snapshot: %s after %d of the page's %d elements (%d refs shown); the part of the page after the last line is not listed. To reach it, scroll there (browser_scroll, or browser_console with element.scrollIntoView()) and call browser_snapshot again: on a page this large the snapshot starts at the viewport. Or ask the page directly with browser_console.",
			what, w.ElementsWalked, w.ElementsTotal, w.RefsShown)
	} else {
		note = fmt.Sprintf("[Partial snapshot: the page has %d elements, so the snapshot starts at the viewport.", w.ElementsTotal)
	}
	if w.AboveViewport > 0 {
		note += fmt.Sprintf(" %d parts of the page above the viewport (scrolled past) are not listed; scroll up and call browser_snapshot to list them.", w.AboveViewport)
	}
	return note + "]"
}

// renderCovered is render for a snapshot whose walk may not have covered the
// whole page: the walk note (walkNote) ends both the stored text and the
// text shown, which stays within browser.snapshot_threshold.
func (m *Manager) renderCovered(ctx context.Context, text string, c SnapshotCoverage) (out string, truncated bool) {
	note := walkNote(c)
	if note == "" {
		out, truncated, _ = m.render(ctx, text)
		return out, truncated
	}
	full := text + "\n\n" + note
	th := SnapshotThreshold(m.cfg.Browser.SnapshotThreshold)
	if utf8.RuneCountInString(full) <= th {
		return full, false
	}
	out, truncated, _ = m.renderAt(ctx, full, max(th-utf8.RuneCountInString(note)-1, 200))
	return out + "\n" + note, truncated
}
