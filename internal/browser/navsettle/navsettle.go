// Package navsettle waits, after a page loaded, until its tab stays on one
// document (navigation under load, issue 16 item 6). A page may leave as
// soon as it loaded: a <meta http-equiv=refresh> with a short delay,
// location.replace in an inline script, location.href in a load handler or a
// timer. Under load, the next document commits while Gatehouse reads the
// first one, so browser_navigate waits (Wait) for such client redirects to
// settle before it judges where the tab landed and snapshots it. Package
// browser does the rest: a snapshot whose document was replaced under it is
// taken once more on the new document (snapshotSettled), and url and title
// are read in the same evaluation as the snapshot (showDocument).
package navsettle

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
)

// Bounds of Wait.
const (
	// PollEvery is how often the Manager re-checks a tab it waits on
	// (package browser's pollEvery).
	PollEvery = 15 * time.Millisecond
	// RedirectSettleCap is the longest browser_navigate waits, after the
	// load event, for client redirects (a page that refreshes itself in a
	// loop is snapshotted as it is then).
	RedirectSettleCap = 3 * time.Second
	// RefreshWaitMax: a meta refresh whose delay is at most this is waited
	// for; a longer one is a page meant to be seen first ("you will be
	// redirected in 5 seconds"), and a later call sees where it went.
	RefreshWaitMax = time.Second
	// RefreshGrace is added to a refresh's delay for the renderer to act on
	// it (its timer starts when the load event has finished).
	RefreshGrace = 500 * time.Millisecond
	// navQuiet is how long no main-frame navigation event must have been
	// seen (requested, started, committed, stopped) for the page to count as
	// staying where it is.
	navQuiet = PollEvery
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

// Settled is where Wait left the tab.
type Settled struct {
	// Navigated: a main-frame navigation happened while it waited.
	Navigated bool
	// URL and Title of the document the tab stays on, read by the last
	// probe with no navigation since; "" when it did not answer (an error
	// page, a busy page, the cap), then only Tab.Current knows.
	URL, Title string
}

// Wait waits, after a document loaded, until tab stays on one document: no
// main-frame navigation in progress or seen for navQuiet, the document
// complete, and no meta refresh of at most RefreshWaitMax pending
// (waited for until its delay plus RefreshGrace passed). A probe evaluation
// in the page is the barrier: a script redirect the renderer queued before it
// (a load handler, a 0 ms timer) shows as a navigation event before its
// answer. It returns after limit (or ctx's end) at the latest, and at once
// when a dialog blocks the page.
func Wait(ctx context.Context, tab *backend.Tab, limit time.Duration) (out Settled) {
	start := time.Now()
	deadline := start.Add(limit)
	first := tab.Activity()
	var refreshDoc int64 = -1 // the document whose meta refresh was waited for
	var waitDoc int64 = -1    // the document waitUntil is for
	var waitUntil time.Time
	for {
		a := tab.Activity()
		out.Navigated = out.Navigated || a.NavSeq != first.NavSeq || a.DocSeq != first.DocSeq
		if _, open := tab.PendingDialog(); open {
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
			wait := min(max(next.Sub(now), PollEvery), deadline.Sub(now))
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
		raw, err := tab.CallIsolated(pctx, pendingJS)
		cancel()
		if b := tab.Activity(); b.NavSeq != a.NavSeq || b.DocSeq != a.DocSeq {
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
			waitDoc, waitUntil = a.DocSeq, time.Now().Add(4*PollEvery)
		case p.Refresh >= 0 && p.Refresh <= RefreshWaitMax.Seconds() && refreshDoc != a.DocSeq:
			refreshDoc, waitDoc = a.DocSeq, a.DocSeq
			waitUntil = time.Now().Add(time.Duration(p.Refresh*float64(time.Second)) + RefreshGrace)
		default:
			out.URL, out.Title = p.URL, p.Title
			return out
		}
	}
}
