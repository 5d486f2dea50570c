package snapshot

import (
	"context"
	"fmt"
	"time"
)

// Budgets of one snapshot walk (page.js snapshot; issue 16 item 5). A page of
// 200 000 elements took the unbounded walk 10–30 s of the renderer's main
// thread on a loaded 2-core machine, past browser.command_timeout: the call
// failed with command_timeout and the session was recycled. The walk now
// stops at the first budget spent and the snapshot says how much of the page
// it covers (Walk); the rest of the tool call (load, transfer, the
// truncate-and-store step) stays within seconds.
const (
	// TimeBudget is the most wall time the in-page walk spends
	// (frames included), and at most half of what is left of the call's
	// deadline and what is left until its walk end (WithWalkEnd).
	TimeBudget = 5 * time.Second
	// NodeBudget is the most elements the walk examines (frames
	// included). A page of more elements than this is also walked from its
	// viewport down once scrolled (elements scrolled past are left out), so
	// scrolling reaches any part of it.
	NodeBudget = 30_000
	// MinWalkTime is the least time budget a walk is given (a call with
	// little of its deadline left still lists the top of the page).
	MinWalkTime = 500 * time.Millisecond
)

// walkEndKey is the context key of the time a call's snapshot walks should
// end by (WithWalkEnd).
type walkEndKey struct{}

// WithWalkEnd returns ctx carrying end: a snapshot walk under it (retries
// and frames included) is given at most what is left until end, and at
// least MinWalkTime.
func WithWalkEnd(ctx context.Context, end time.Time) context.Context {
	return context.WithValue(ctx, walkEndKey{}, end)
}

// WalkEnd returns the time set by WithWalkEnd (zero when none).
func WalkEnd(ctx context.Context) time.Time {
	end, _ := ctx.Value(walkEndKey{}).(time.Time)
	return end
}

// Values of Walk.StoppedBy.
const (
	WalkNodeBudget = "node_budget"
	WalkTimeBudget = "time_budget"
	WalkSizeBudget = "size_budget" // StoreCap chars of lines written
)

// Walk says how much of the page a snapshot covers when it does not
// cover all of it (snapshot_truncated): the walk stopped at a budget
// (StoppedBy), or, in a page of more than NodeBudget elements
// scrolled down, parts above the viewport were left out (AboveViewport).
type Walk struct {
	// StoppedBy names the budget that stopped the walk: node_budget
	// (NodeBudget elements examined), time_budget
	// (TimeBudget spent) or size_budget (StoreCap chars
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

// Coverage is the part of a browser result that says a snapshot does
// not cover the whole page. Snapshot text cut at browser.snapshot_threshold
// (with the full text stored) is "truncated"; this is about what the walk
// itself listed.
type Coverage struct {
	// SnapshotTruncated is true when the snapshot lists only part of the
	// page (SnapshotWalk says which part); the snapshot text ends with a
	// note naming how to reach the rest.
	SnapshotTruncated bool  `json:"snapshot_truncated,omitempty"`
	SnapshotWalk      *Walk `json:"snapshot_walk,omitempty"`
}

// WalkData is page.js's account of a walk.
type WalkData struct {
	Stopped  string `json:"stopped"` // "nodes", "time", "size" or ""
	Elements int    `json:"elements"`
	Total    int    `json:"total"`
	Above    int    `json:"above"`
}

// Budget is the budget argument of page.js snapshot.
type Budget struct {
	MS    int64 `json:"ms"`
	Nodes int   `json:"nodes"`
	Chars int   `json:"chars"`
}

// BudgetFor returns the budget of a walk ending no later than end (zero:
// now + TimeBudget) with nodes elements left: at most half of the
// time left before ctx's deadline and what is left until ctx's walk end
// (WithWalkEnd), at least MinWalkTime. ok is false when nothing is left (end
// passed, or no nodes).
func BudgetFor(ctx context.Context, end time.Time, nodes int) (b Budget, ok bool) {
	now := time.Now()
	d := TimeBudget
	if !end.IsZero() {
		d = end.Sub(now)
		if d <= 0 || nodes <= 0 {
			return Budget{}, false
		}
	} else {
		if dl, has := ctx.Deadline(); has {
			d = min(d, dl.Sub(now)/2)
		}
		if we := WalkEnd(ctx); !we.IsZero() {
			d = min(d, we.Sub(now))
		}
		d = max(d, MinWalkTime)
	}
	return Budget{MS: max(d.Milliseconds(), 1), Nodes: nodes, Chars: StoreCap}, true
}

// coverage returns the Coverage of a walk that listed refs refs.
func (w *WalkData) Coverage(refs int) Coverage {
	if w == nil || (w.Stopped == "" && w.Above == 0) {
		return Coverage{}
	}
	sw := &Walk{ElementsWalked: w.Elements, ElementsTotal: w.Total, AboveViewport: w.Above, RefsShown: refs}
	switch w.Stopped {
	case "nodes":
		sw.StoppedBy = WalkNodeBudget
	case "time":
		sw.StoppedBy = WalkTimeBudget
	case "size":
		sw.StoppedBy = WalkSizeBudget
	}
	return Coverage{SnapshotTruncated: true, SnapshotWalk: sw}
}

// merge adds a frame's walk (the frame's elements are walked too; its total
// is not the top document's).
func (w *WalkData) Merge(f *WalkData) {
	if f == nil {
		return
	}
	w.Elements += f.Elements
	if w.Stopped == "" {
		w.Stopped = f.Stopped
	}
}

// Note is the line that ends a snapshot that does not cover the whole
// page: what was left out and how to reach it. "" for a whole snapshot.
func Note(c Coverage) string {
	w := c.SnapshotWalk
	if w == nil {
		return ""
	}
	var what string
	switch w.StoppedBy {
	case WalkNodeBudget:
		what = fmt.Sprintf("the walk stopped at its budget of %d elements", NodeBudget)
	case WalkTimeBudget:
		what = fmt.Sprintf("the walk stopped at its time budget (%s)", TimeBudget)
	case WalkSizeBudget:
		what = fmt.Sprintf("the walk stopped at %d chars of text", StoreCap)
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
