package browser

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/navsettle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Navigation under load (issue 16 item 6): browser_navigate waits for client
// redirects to settle (package navsettle); a snapshot whose document was
// replaced under it is taken once more (snapshotSettled); url and title are
// read in the same evaluation as the snapshot (showDocument).

// snapshotSettled is Session.snapshot taken once more, after the page
// settled (navsettle.Wait), when its document was replaced while it ran
// (page_navigated); a second such failure stays page_navigated. The settle
// wait and the second walk share one walk's time: they get what is left
// until ctx's walk end (withWalkEnd; SnapshotTimeBudget from now when ctx
// has none), so a retry never doubles a walk that spent its budget.
func (m *Manager) snapshotSettled(ctx context.Context, s *Session, full bool) (snapData, error) {
	if snapshot.WalkEnd(ctx).IsZero() {
		ctx = snapshot.WithWalkEnd(ctx, time.Now().Add(snapshot.TimeBudget))
	}
	d, err := s.snapshot(ctx, full)
	if backend.IsNavigated(err) {
		navsettle.Wait(ctx, s.tab, navSettleLimit(ctx))
		d, err = s.snapshot(ctx, full)
	}
	return d, err
}

// showDocument sets p's url and title to those of the document snapshot d
// was taken of (read in the same evaluation, so they cannot name another
// document), and returns that document's raw URL. A browser error page
// (chrome-error:) keeps the URL of the history entry, the address that
// failed, which p already holds.
func showDocument(p *Page, d snapData) (rawURL string) {
	if d.rawURL == "" || strings.HasPrefix(d.rawURL, "chrome-error:") {
		return ""
	}
	p.URL, p.Title = d.URL, d.Title
	return d.rawURL
}

// shownRefusal is showDocument for a call on the page the tab is on
// (browser_snapshot, the snapshot after an action): p's url and title become
// those of the snapshot's document, and when that document is not the one
// the call's page gate judged (the page moved on meanwhile), it is judged
// too (page_blocked).
func (m *Manager) shownRefusal(s *Session, p *Page, d snapData) *reason.Error {
	judged := p.URL
	if shown := showDocument(p, d); shown != "" && d.URL != judged {
		if rerr := m.gates.PageRefusal(shown, s.active); rerr != nil {
			p.Title = "" // withheld, as the snapshot is
			return rerr
		}
	}
	return nil
}

// landingRefusal is the post-redirect check of where a navigation to
// requested ended (final, after server and client redirects; spec §B8.1
// step 6): the gates on final (Gates.RedirectRefusal: redirect_metadata,
// redirect_private, policy_blocked), then the egress proxy's refusal of
// final's host since start (proxyLanding). nil when it may be shown.
func (m *Manager) landingRefusal(s *Session, requested, final string, start time.Time, active bool) *reason.Error {
	if rr := m.gates.RedirectRefusal(requested, final, active); rr != nil {
		return rr
	}
	return proxyLanding(s, requested, final, start)
}

// proxyLanding is the local backend's part of the post-redirect check, run
// when the gates passed final: the egress proxy's refusal of final's host
// since start. A redirect that landed on a refused host is redirect_metadata
// or redirect_private, as the gates would say; another refusal names both
// the page asked for and the one it led to. nil when the proxy refused
// nothing of final's.
func proxyLanding(s *Session, requested, final string, start time.Time) *reason.Error {
	docRefusal := proxyRefusal(s, start, final)
	if docRefusal == nil {
		return nil
	}
	if final == "" || final == requested || strings.HasPrefix(final, "chrome-error:") {
		return docRefusal
	}
	switch docRefusal.Code {
	case reason.SSRFMetadata:
		return reason.New(reason.RedirectMetadata, reason.GateSSRF, "Blocked: the redirect landed on a cloud metadata endpoint; the tab was reset to about:blank.")
	case reason.SSRFPrivate:
		return reason.New(reason.RedirectPrivate, reason.GateSSRF, "Blocked: the redirect landed on a private/internal address; the tab was reset to about:blank.")
	}
	// The refused request is not the page the agent asked for but one it
	// led to (a redirect, a form it submitted, a script or meta-refresh
	// navigation): say so, naming both.
	return reason.Wrap(docRefusal.Code, docRefusal.Gate, fmt.Sprintf(
		"Blocked: the page %s led the tab on to %s (a redirect, a form submission or a script navigation), and the egress proxy refused that request (%s); the tab was reset to about:blank.%s",
		gate.Origin(requested), gate.Origin(final), docRefusal.Code, refusalHint(docRefusal.Code)), docRefusal)
}
