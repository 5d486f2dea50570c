package browser

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/browser/navsettle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
)

// Targets of browser_navigate's snapshot walk (snapshot.BudgetFor).
const (
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

// navSettleLimit bounds a wait for client redirects (navsettle.Wait)
// under ctx: navsettle.RedirectSettleCap, or what is left until ctx's walk
// end less walkReserve when that is shorter, and at least
// navsettle.RefreshWaitMax plus navsettle.RefreshGrace (a meta refresh browser_navigate waits for is still followed
// on a page that was slow to load).
func navSettleLimit(ctx context.Context) time.Duration {
	end := snapshot.WalkEnd(ctx)
	if end.IsZero() {
		return navsettle.RedirectSettleCap
	}
	return min(max(time.Until(end)-walkReserve, navsettle.RefreshWaitMax+navsettle.RefreshGrace), navsettle.RedirectSettleCap)
}

// renderCovered is render for a snapshot whose walk may not have covered the
// whole page: the walk note (walkNote) ends both the stored text and the
// text shown, which stays within browser.snapshot_threshold.
func (m *Manager) renderCovered(ctx context.Context, text string, c snapshot.Coverage) (out string, truncated bool) {
	note := snapshot.Note(c)
	if q := findQuery(ctx); q != "" {
		out, _ = snapshot.Find(text, q)
		if note != "" {
			out += "\n\n" + note
		}
		return out, false
	}
	if note == "" {
		out, truncated, _ = m.render(ctx, text)
		return out, truncated
	}
	full := text + "\n\n" + note
	th := snapshot.Threshold(m.cfg.Browser.SnapshotThreshold)
	if utf8.RuneCountInString(full) <= th {
		return full, false
	}
	out, truncated, _ = m.renderAt(ctx, full, max(th-utf8.RuneCountInString(note)-1, 200))
	return out + "\n" + note, truncated
}

type findKey struct{}

// withFind returns ctx carrying a tool call's find input: the whole
// snapshot its result would show is cut to the part that matches
// (snapshot.Find; renderCovered, renderShown). The session keeps the whole
// snapshot, so deltas and refs are those of the whole page.
func withFind(ctx context.Context, q string) context.Context {
	if strings.TrimSpace(q) == "" {
		return ctx
	}
	return context.WithValue(ctx, findKey{}, q)
}

func findQuery(ctx context.Context) string {
	q, _ := ctx.Value(findKey{}).(string)
	return q
}

// renderShown is render for a whole snapshot a result shows (not a delta):
// cut to the call's find input when it has one.
func (m *Manager) renderShown(ctx context.Context, text string) (out string, truncated bool, stored string) {
	if q := findQuery(ctx); q != "" {
		out, _ = snapshot.Find(text, q)
		return out, false, ""
	}
	return m.render(ctx, text)
}
