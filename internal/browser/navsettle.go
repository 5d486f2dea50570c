package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Navigation under load (issue 16 item 6). A page may leave as soon as it
// loaded: a <meta http-equiv=refresh> with a short delay, location.replace
// in an inline script, location.href in a load handler or a timer. Under
// load, the next document commits while Gatehouse reads the first one, so
// (1) browser_navigate waits for such client redirects to settle before it
// judges where the tab landed and snapshots it (settleNavigation), (2) a
// snapshot whose document was replaced under it is taken once more on the
// new document (snapshotSettled), and (3) url and title are read in the same
// evaluation as the snapshot (showDocument), so they always name the
// document the snapshot shows.

// Bounds of settleNavigation.
const (
	// redirectSettleCap is the longest browser_navigate waits, after the
	// load event, for client redirects (a page that refreshes itself in a
	// loop is snapshotted as it is then).
	redirectSettleCap = 3 * time.Second
	// refreshWaitMax: a meta refresh whose delay is at most this is waited
	// for; a longer one is a page meant to be seen first ("you will be
	// redirected in 5 seconds"), and a later call sees where it went.
	refreshWaitMax = time.Second
	// refreshGrace is added to a refresh's delay for the renderer to act on
	// it (its timer starts when the load event has finished).
	refreshGrace = 500 * time.Millisecond
	// navQuiet is how long no main-frame navigation event must have been
	// seen (requested, started, committed, stopped) for the page to count as
	// staying where it is.
	navQuiet = pollEvery
	// pendingProbeTimeout bounds one pendingJS evaluation.
	pendingProbeTimeout = time.Second
)

// pendingJS reports whether the document finished loading and the delay in
// seconds of its meta refresh (-1 when it has none).
const pendingJS = `function () {
  const m = document.querySelector('meta[http-equiv="refresh" i]');
  let refresh = -1;
  if (m) {
    const v = parseFloat((m.getAttribute('content') || '').trim());
    if (v >= 0) refresh = v;
  }
  return { complete: document.readyState === 'complete', refresh, url: location.href, title: document.title };
}`

type pendingNav struct {
	Complete bool    `json:"complete"`
	Refresh  float64 `json:"refresh"`
	URL      string  `json:"url"`
	Title    string  `json:"title"`
}

// settled is where settleNavigation left the tab.
type settled struct {
	// navigated: a main-frame navigation happened while it waited.
	navigated bool
	// url and title of the document the tab stays on, read by the last
	// probe with no navigation since; "" when it did not answer (an error
	// page, a busy page, the cap), then only Tab.Current knows.
	url, title string
}

// settleNavigation waits, after a document loaded, until the tab stays on
// one document: no main-frame navigation in progress or seen for navQuiet, the
// document complete, and no meta refresh of at most refreshWaitMax pending
// (waited for until its delay plus refreshGrace passed). A probe evaluation
// in the page is the barrier: a script redirect the renderer queued before it
// (a load handler, a 0 ms timer) shows as a navigation event before its
// answer. It returns after limit (or ctx's end) at the latest, and at once
// when a dialog blocks the page.
func (m *Manager) settleNavigation(ctx context.Context, s *Session, limit time.Duration) (out settled) {
	start := time.Now()
	deadline := start.Add(limit)
	first := s.tab.Activity()
	var refreshDoc int64 = -1 // the document whose meta refresh was waited for
	var waitDoc int64 = -1    // the document waitUntil is for
	var waitUntil time.Time
	for {
		a := s.tab.Activity()
		out.navigated = out.navigated || a.NavSeq != first.NavSeq || a.DocSeq != first.DocSeq
		if _, open := s.tab.PendingDialog(); open {
			return out
		}
		now := time.Now()
		if !now.Before(deadline) || ctx.Err() != nil {
			return out
		}
		next := now
		if q := a.LastNav.Add(navQuiet); q.After(next) {
			next = q
		}
		if waitDoc == a.DocSeq && waitUntil.After(next) {
			next = waitUntil
		}
		if a.Loading || next.After(now) {
			wait := min(max(next.Sub(now), pollEvery), deadline.Sub(now))
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-a.Changed:
			case <-ctx.Done():
			}
			t.Stop()
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, pendingProbeTimeout)
		raw, err := s.tab.CallIsolated(pctx, pendingJS)
		cancel()
		if b := s.tab.Activity(); b.NavSeq != a.NavSeq || b.DocSeq != a.DocSeq {
			continue // the page navigated while it was asked
		}
		var p pendingNav
		if err != nil || json.Unmarshal(raw, &p) != nil {
			if backend.IsNavigated(err) {
				continue
			}
			return out // an error page, a busy page: nothing more to wait for
		}
		switch {
		case !p.Complete:
			waitDoc, waitUntil = a.DocSeq, time.Now().Add(4*pollEvery)
		case p.Refresh >= 0 && p.Refresh <= refreshWaitMax.Seconds() && refreshDoc != a.DocSeq:
			refreshDoc, waitDoc = a.DocSeq, a.DocSeq
			waitUntil = time.Now().Add(time.Duration(p.Refresh*float64(time.Second)) + refreshGrace)
		default:
			out.url, out.title = p.URL, p.Title
			return out
		}
	}
}

// snapshotSettled is Session.snapshot taken once more, after the page
// settled (settleNavigation), when its document was replaced while it ran
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
		m.settleNavigation(ctx, s, navSettleLimit(ctx))
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
