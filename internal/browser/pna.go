package browser

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Private Network Access for local sessions (issue 16; the rule is in
// egress/pna.go, docs/browser.md states it for users). The session's egress
// proxy learns the address space of the session's top-level documents from
// the browser (topLevelReporter: main-frame navigation starts and commits,
// popups and tabs the page opened) and lets a request into the private
// network through only from private documents. browser_navigate is the
// agent's own navigation: beginNavigation opens a narrow allowance for its
// target host:port (the seeds' per-backend rules have judged the URL
// already: the local backend may browse localhost, metadata never).

// topLevelReporter feeds a session proxy the tab's top-level document
// changes (backend.TabOptions.OnTopLevel).
func topLevelReporter(p sessionProxy) func(backend.TopLevel) {
	return func(e backend.TopLevel) {
		switch e.Phase {
		case backend.TopLevelCommitted:
			p.TopLevelCommitted(e.Target, e.URL, e.Opener)
		case backend.TopLevelGone:
			p.TopLevelGone(e.Target)
		}
	}
}

// pnaBlankWait bounds the about:blank hop of beginNavigation.
const pnaBlankWait = 5 * time.Second

// pnaQuiet and pnaDrainMax bound beginNavigation's wait for the left page's
// last requests (egress.ProxySession.Drain).
const (
	pnaQuiet    = 100 * time.Millisecond
	pnaDrainMax = 500 * time.Millisecond
)

// beginNavigation prepares s's egress proxy for browser_navigate to u and
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
//     browser asked for nothing for pnaQuiet (at most pnaDrainMax): the
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
// that allow private URLs need none of it.
func (m *Manager) beginNavigation(ctx context.Context, s *Session, u *urlsafe.URL) (done func(), popupsClosed int) {
	nothing := func() {}
	if s.cloud != nil || m.gates.AllowPrivate {
		return nothing, 0
	}
	id := string(s.tab.MainFrame())
	if !m.privateTarget(ctx, u) {
		s.proxy.TopLevelNavigating(id)
		return nothing, 0
	}
	if s.proxy.PrivateDocuments() {
		return nothing, 0
	}
	if cur, err := s.tab.Current(ctx); err == nil && cur.URL != "about:blank" && cur.URL != "" {
		bctx, cancel := context.WithTimeout(ctx, pnaBlankWait)
		s.tab.Navigate(bctx, "about:blank") //nolint:errcheck // best effort; the drain and the allowance's narrowing still hold
		cancel()
	}
	if ids := s.proxy.PublicTopLevels(id); len(ids) > 0 {
		popupsClosed = s.tab.CloseTopLevels(ctx, ids)
	}
	if !s.proxy.Drain(ctx, pnaQuiet, pnaDrainMax) {
		m.logger.Debug("browser: the left page's requests did not stop before the private navigation", "session", s.Key)
	}
	return s.proxy.AllowNavigation(id, u.Host, egress.PortOf(u)), popupsClosed
}

// privateTarget reports whether u's host is in the private network as the
// strict gate sees it (DNS resolved; a lookup failure is not private).
func (m *Manager) privateTarget(ctx context.Context, u *urlsafe.URL) bool {
	_, rerr := m.gates.Strict.Check(ctx, u)
	return rerr != nil && rerr.Code == reason.SSRFPrivate
}
