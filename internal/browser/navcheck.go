package browser

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// What a navigation loaded: browser_navigate's own, or one an action started
// (a link, a form submit, a key press). A page that did not load is reported
// the same way by both: the egress proxy's refusal of the document's host
// keeps its code, an unreachable host or Chromium's net error is
// navigation_failed, and a URL that serves a file is navigation_download.

// proxyRefusal is the egress proxy's refusal of the request for the
// document docURL since start, as browser_navigate reports it (the code of
// the refusal: ssrf_private, ssrf_metadata, policy_blocked,
// private_network_from_public, dns_unresolvable, …), matched on host and
// port (the scheme's default when docURL names none); nil when the proxy
// refused no such request, or when the tab's document request for docURL
// got an answer other than the proxy's 403 (its server answered: a refused
// request of another document to that host, such as a left page's beacon,
// is not this document's refusal). The message names what was refused, the
// request for scheme://host:port, not "the page": the document may be one
// the page led to (landingRefusal words that case).
func proxyRefusal(s *Session, start time.Time, docURL string) *reason.Error {
	fu, err := urlsafe.Parse(docURL)
	if err != nil {
		return nil
	}
	if d := s.tab.LastDocLoad(); d.URL == docURL && d.Status != 0 && d.Status != http.StatusForbidden {
		return nil
	}
	port := urlPort(fu)
	for _, rf := range s.proxy.RefusedSince(start) {
		if rf.Host == fu.Host && (port == 0 || rf.Port == 0 || rf.Port == port) {
			return reason.Newf(rf.Reason, reason.GateSSRF,
				"Blocked: the egress proxy refused the request for %s (%s).%s", gate.Origin(docURL), rf.Reason, refusalHint(rf.Reason))
		}
	}
	return nil
}

// urlPort is u's port: the explicit one, else the scheme's default (80,
// 443); 0 when neither is known.
func urlPort(u *urlsafe.URL) uint16 {
	if u.Port != "" {
		if n, err := strconv.ParseUint(u.Port, 10, 16); err == nil {
			return uint16(n)
		}
		return 0
	}
	switch u.Scheme {
	case "http", "ws":
		return 80
	case "https", "wss":
		return 443
	}
	return 0
}

// refusalHint is the fix a refusal of code names after its message, ""
// for codes whose message says it already.
func refusalHint(code reason.Code) string {
	if code == reason.PrivateNetworkFromPublic {
		return " A public page may not lead the browser into the private network (Private Network Access): open that address with browser_navigate yourself, or set security.allow_private_urls: true."
	}
	return ""
}

// loadFailure is navigation_failed for a document that did not load: the
// egress proxy could not reach its host (its own 502/504 answer, whose text
// would otherwise read like a page), or Chromium's net error errText. nil
// when the document loaded.
func loadFailure(s *Session, start time.Time, doc backend.DocLoad, errText string) *reason.Error {
	if doc.Status == 502 || doc.Status == 504 {
		if fu, err := urlsafe.Parse(doc.URL); err == nil {
			for _, f := range s.proxy.FailedSince(start) {
				if strings.EqualFold(f.Host, fu.Host) && (fu.Port == "" || fu.Port == strconv.Itoa(int(f.Port))) {
					return reason.Newf(reason.NavigationFailed, "",
						"The page could not be loaded: its server %s did not answer (%s: connection refused, unreachable or timed out).", gate.Origin(doc.URL), f.Reason)
				}
			}
		}
	}
	if errText == "" {
		errText = doc.ErrorText
	}
	if errText != "" {
		return reason.Newf(reason.NavigationFailed, "", "The page could not be loaded (%s).", errText)
	}
	return nil
}

// resetBlank navigates the tab to about:blank (10 s, even when ctx is done)
// so no later call reads a refused or failed document (spec §B8.1 step 6),
// and reports it in p.
func (m *Manager) resetBlank(ctx context.Context, s *Session, p *Page) {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.tab.Navigate(bctx, "about:blank"); err == nil {
		p.URL, p.Title = "about:blank", ""
	}
}

// actionLanding judges the document an action navigated to (after the
// action's wait): the gates on its URL (what browser_navigate checks first:
// metadata, private when the guard is on, website policy), the proxy's
// refusal of its host, an unreachable host or a net error. On a refusal or
// failure the tab is reset to about:blank (as browser_navigate does) and the
// error, with the code browser_navigate would report for that URL, is
// written to p; it reports whether it did.
func (m *Manager) actionLanding(ctx context.Context, s *Session, p *Page, before backend.Activity, start time.Time) bool {
	doc := s.tab.LastDocLoad()
	if doc.Seq <= before.DocLoads || doc.URL == "" {
		return false // no document request of its own (same-document change, bfcache, popup)
	}
	rr := m.gates.JudgeStatic(doc.URL, s.active)
	if rr == nil {
		rr = proxyRefusal(s, start, doc.URL)
	}
	if rr == nil {
		rr = loadFailure(s, start, doc, "")
	}
	if rr == nil {
		return false
	}
	m.resetBlank(ctx, s, p)
	m.errOf(s, p, reason.Wrap(rr.Code, rr.Gate,
		"The action navigated to "+gate.Origin(doc.URL)+", which was not loaded; the tab was reset to about:blank. "+rr.Message, rr))
	return true
}

// downloadWaitBegin bounds how long browser_navigate waits, after Chromium
// aborted the navigation, for the download that replaced it to be reported.
const downloadWaitBegin = 2 * time.Second

// navigationDownload handles a browser_navigate whose URL serves a file
// (Content-Disposition: attachment, or a type Chromium does not display):
// Chromium aborts the navigation (net::ERR_ABORTED) and, where downloads are
// on (every local session: <GATEHOUSE_HOME>/downloads/<session>/, popups.go),
// saves the file. The result is navigation_download naming the saved file
// (downloads[]); the tab stays on the page it was on. false when the
// navigation was not a download.
func (m *Manager) navigationDownload(ctx context.Context, s *Session, r *NavigateResult, mark int64, errText string) bool {
	if errText != "net::ERR_ABORTED" {
		return false
	}
	doc := s.tab.LastDocLoad()
	waitTab(ctx, s, downloadWaitBegin, func() bool { return len(s.tab.DownloadsSince(mark)) > 0 })
	m.collectDownloads(ctx, s, &r.Page, mark)
	if len(r.Downloads) == 0 && !doc.Attachment {
		return false
	}
	if cur, err := s.tab.Current(ctx); err == nil {
		r.URL, r.Title = redactText(cur.URL), redactText(cur.Title)
	}
	msg := "The URL serves a file download, not a page (Content-Disposition: attachment or a type the browser does not display)"
	switch {
	case len(r.Downloads) == 0:
		msg += "; this browser backend does not save downloads"
	case r.Downloads[0].Path != "":
		// The file name is the server's choice (Content-Disposition): it is
		// named only in downloads[], which surfaces treat as page text (MCP
		// wraps it), never repeated in Gatehouse's own message.
		msg += "; it was saved (downloads[0].path names the file)"
	default:
		msg += "; it was not saved (downloads[].state: " + r.Downloads[0].State + ")"
	}
	m.errOf(s, &r.Page, reason.New(reason.NavigationDownload, "", msg+". The tab stays on the page it was on."))
	return true
}
