// Package pnanav is Private Network Access for a browser session's own
// navigations (issue 16; the rule is in egress/pna.go, docs/browser.md
// states it for users): the session's egress proxy learns the address
// space of the session's top-level documents from the browser (Reporter:
// main-frame navigation starts and commits, popups and tabs the page
// opened) and lets a request into the private network through only from
// private documents. browser_navigate is the agent's own navigation: Begin
// opens a narrow allowance for its target host:port (the seeds'
// per-backend rules have judged the URL already: the local backend may
// browse localhost, metadata never).
package pnanav

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Reporter feeds a session proxy the tab's top-level document
// changes (backend.TabOptions.OnTopLevel).
func Reporter(p node.SessionProxy) func(backend.TopLevel) {
	return func(e backend.TopLevel) {
		switch e.Phase {
		case backend.TopLevelCommitted:
			p.TopLevelCommitted(e.Target, e.URL, e.Opener)
		case backend.TopLevelGone:
			p.TopLevelGone(e.Target)
		}
	}
}

// BlankWait bounds the about:blank hop of Begin.
const BlankWait = 5 * time.Second

// Quiet and DrainMax bound Begin's wait for the left page's
// last requests (egress.ProxySession.Drain).
const (
	Quiet    = 100 * time.Millisecond
	DrainMax = 500 * time.Millisecond
)

// Begin prepares a session's egress proxy (proxy; its tab t) for
// browser_navigate to u, whose host is private (the strict gate's
// ssrf_private) when private is set, and
// returns the function that ends the preparation (call it once the
// navigation returned, whatever its outcome) and the number of public
// popups it closed (NavigateResult.PopupsClosed).
//
//   - u's host is public: the main frame counts as public from now on, so
//     neither the new page nor a redirect hop of it inherits the access of
//     a private page the tab was on.
//   - u's host is private (an IP literal, a localhost name, or a name
//     resolving into the private network) and the session's documents are
//     all private already: nothing changes; the new document's commit
//     places the session.
//   - u's host is private and the session is public: nothing of a public
//     document may still send when the allowance for u's host:port opens.
//     The tab first goes to about:blank (the old page's scripts stop), the
//     session's other public top-level documents — popups and tabs a public
//     page opened, which would keep running — are closed, and the proxy
//     cuts every connection the browser has open to it and waits until the
//     browser asked for nothing for Quiet (at most DrainMax): the
//     keepalive fetches and beacons the old page queued in pagehide, unload
//     or visibilitychange reach the proxy while they are still refused.
//     Then requests to exactly u's host:port are allowed until the
//     navigation commits or returns (egress.ProxySession.AllowNavigation),
//     and where the browser sends Fetch Metadata (loopback, localhost
//     names) only the navigation itself and same-origin requests of its
//     document use it. A redirect hop to another host:port is refused
//     (private_network_from_public).
//
// Sessions whose browser does not use the proxy (cloud) and configurations
// that allow private URLs need none of it: the caller does not call Begin.
func Begin(ctx context.Context, t *backend.Tab, proxy node.SessionProxy, u *urlsafe.URL, private bool, lg *slog.Logger) (done func(), popupsClosed int) {
	nothing := func() {}
	id := string(t.MainFrame())
	if !private {
		proxy.TopLevelNavigating(id)
		return nothing, 0
	}
	if proxy.PrivateDocuments() {
		return nothing, 0
	}
	if cur, err := t.Current(ctx); err == nil && cur.URL != "about:blank" && cur.URL != "" {
		bctx, cancel := context.WithTimeout(ctx, BlankWait)
		t.Navigate(bctx, "about:blank") //nolint:errcheck // best effort; the drain and the allowance's narrowing still hold
		cancel()
	}
	if ids := proxy.PublicTopLevels(id); len(ids) > 0 {
		popupsClosed = t.CloseTopLevels(ctx, ids)
	}
	if !proxy.Drain(ctx, Quiet, DrainMax) {
		lg.Debug("browser: the left page's requests did not stop before the private navigation")
	}
	return proxy.AllowNavigation(id, u.Host, egress.PortOf(u)), popupsClosed
}
