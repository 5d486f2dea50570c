package egress

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Private Network Access in the browser's egress proxy (issue 16).
//
// A request whose destination is private — judged on the IP actually
// dialed, after DNS, as the strict gate judges it: loopback, RFC 1918,
// link-local, CGNAT, ULA and the rest of urlsafe's non-public classes;
// addresses in security.fake_ip_ranges and Options.AllowAddrPorts count as
// public — goes through a ProxySession only when
//
//   - ProxyOptions.AllowPrivateFromPublic is set (security.allow_private_urls), or
//   - every top-level document of the session is itself private (the
//     browser side reports them: TopLevelCommitted, TopLevelGone, and
//     TopLevelNavigating for the agent's own navigation to a public URL), or
//   - it targets exactly the host:port of the agent's own pending
//     navigation (AllowNavigation), until that navigation commits or ends,
//     and on plain HTTP its Fetch Metadata, when the browser sent it, says
//     it is that navigation or a same-origin request of its document
//     (navigationRequest). The browser side opens the allowance only after
//     the left page is gone, public popups are closed and Drain waited out
//     the old page's last requests (browser/pna.go).
//
// Everything else into the private network is refused with
// private_network_from_public: a public page's sub-resources, frames,
// WebSockets, EventSource, form posts, redirects and navigations. The proxy
// does not trust request headers to learn a request's initiator (a CONNECT
// tunnel has none to read); it keeps the address space of the session's
// top-level documents instead, and fails closed: no known document, a
// document it cannot place (about:blank without an opener, data:, an error
// page, a host it never dialed) and any public top-level document anywhere
// in the session (another tab, a popup) make the session public. A document
// is private when its URL's host is a private IP literal or a localhost
// name, or when the proxy's last dial to its host:port reached a private IP.
//
// A navigation a page starts is judged by that page (its initiator), as
// PNA does: the state changes when the new document commits. The commit
// is reported by the renderer before the new document's parser asks for
// anything, but it reaches the proxy through CDP: a public page that a
// private page navigated to could in principle have a request reach the
// proxy before its commit is seen. That window only opens from a private
// page the user navigated to.
//
// The check runs twice: when a request or tunnel arrives (so a pooled
// upstream connection to a host:port once dialed privately is not reused by
// a public page), and on every candidate IP at dial time (DNS rebinding).
// When no private request is allowed any more, open CONNECT tunnels to
// private addresses are cut, so a tunnel the browser pooled for a private
// page is not reused by the public one that follows.

// TopLevelNavigating records that top-level document id (a tab or popup
// target) is navigating away: until its new document commits it counts as
// public. The browser side calls it when the agent's own navigation to a
// public URL starts (page-initiated navigations keep their initiator's space
// until the new document commits, as PNA judges a navigation by its
// initiator).
func (s *ProxySession) TopLevelNavigating(id string) {
	s.mu.Lock()
	s.tops[id] = false
	s.pnaChangedLocked()
	cut := s.publicCutLocked()
	s.mu.Unlock()
	closeAll(cut)
}

// TopLevelCommitted records the URL of the document now committed in
// top-level frame id. rawURL is placed as the package comment says; a
// non-http(s) URL is public, except the initial empty document ("" or
// about:blank) of a frame with an opener (a popup), which belongs to its
// opener's address space (as HTML gives it its creator's origin). A commit
// of an http(s) document in the frame of a pending AllowNavigation ends
// that allowance.
func (s *ProxySession) TopLevelCommitted(id, rawURL, opener string) {
	private, web := s.urlPrivate(rawURL)
	s.mu.Lock()
	if web && s.nav != nil && s.nav.id == id {
		s.nav = nil
	}
	if (rawURL == "" || rawURL == "about:blank") && opener != "" {
		private = s.tops[opener] // unknown opener: public
	}
	s.tops[id] = private
	s.pnaChangedLocked()
	cut := s.publicCutLocked()
	s.mu.Unlock()
	closeAll(cut)
}

// TopLevelGone forgets top-level frame id (its tab or popup closed).
func (s *ProxySession) TopLevelGone(id string) {
	s.mu.Lock()
	delete(s.tops, id)
	s.pnaChangedLocked()
	cut := s.publicCutLocked()
	s.mu.Unlock()
	closeAll(cut)
}

// PrivateDocuments reports whether the session's top-level documents are
// all private (requests into the private network are allowed), false when
// there is none. Always true with ProxyOptions.AllowPrivateFromPublic.
func (s *ProxySession) PrivateDocuments() bool {
	if s.policy().allowPNA {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.privateLocked()
}

// AllowNavigation lets requests to exactly host:port into the private
// network while the agent's own navigation of top-level frame id to that
// origin is pending: the navigation's document request (and its own
// sub-resources on the same host:port before the commit is reported). host
// is canonical as urlsafe.Parse gives it (lower case, IPv6 without
// brackets). The allowance ends at the first http(s) commit in frame id
// (TopLevelCommitted) or when done is called, whichever comes first; a
// later AllowNavigation replaces it. Only requests navigationRequest
// qualifies use it (a CONNECT tunnel always does: it shows no headers).
// Redirect hops to another host:port are not covered: an agent navigation of
// a public URL that redirects into the private network is refused.
func (s *ProxySession) AllowNavigation(id, host string, port uint16) (done func()) {
	a := &navAllowance{id: id, host: originHost(host), port: port}
	s.mu.Lock()
	s.nav = a
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.nav == a {
			s.nav = nil
			s.pnaChangedLocked()
		}
		cut := s.publicCutLocked()
		s.mu.Unlock()
		closeAll(cut)
	}
}

// defaultCommitWait bounds how long pnaRefusal holds a private request while
// the agent's own navigation is pending (see there): the commit of a loaded
// page is reported within milliseconds, seconds on a machine under heavy load.
const defaultCommitWait = 3 * time.Second

// pnaChangedLocked wakes the requests pnaRefusal holds: the session's
// top-level documents or its pending navigation changed. s.mu is held.
func (s *ProxySession) pnaChangedLocked() {
	close(s.pnaChanged)
	s.pnaChanged = make(chan struct{})
}

// navAllowance is a pending AllowNavigation.
type navAllowance struct {
	id   string
	host string
	port uint16
}

// publicCutLocked returns the open tunnel ends that lead to a private
// address when no private request is allowed any more (the session's
// documents are not all private and no agent navigation is pending), so a
// tunnel the browser pooled while it was allowed is not reused by a public
// page. The caller closes them after unlocking.
func (s *ProxySession) publicCutLocked() []net.Conn {
	if s.policy().allowPNA || s.privateLocked() || s.nav != nil {
		return nil
	}
	var cut []net.Conn
	for c, priv := range s.tunnels {
		if priv {
			cut = append(cut, c)
		}
	}
	return cut
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

// privateLocked: every top-level document is private (and there is one).
func (s *ProxySession) privateLocked() bool {
	if len(s.tops) == 0 {
		return false
	}
	for _, p := range s.tops {
		if !p {
			return false
		}
	}
	return true
}

// urlPrivate places a document URL: web reports an http(s) URL; private
// whether its host is private (see the package comment on Private Network
// Access).
func (s *ProxySession) urlPrivate(raw string) (private, web bool) {
	u, err := urlsafe.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false, false
	}
	port := portOf(u)
	switch {
	case u.Addr.IsValid():
		return s.policy().guard.isPrivate(u.Scheme, u.Host, u.Addr, port), true
	case urlsafe.IsLocalhostName(u.Host):
		return s.policy().guard.isPrivate(u.Scheme, u.Host, urlsafe.LocalhostAddrs[0], port), true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastDial[hostPortKey(u.Host, port)], true
}

// pnaRefusal is the Private Network Access decision for one request to
// host:port whose destination is private (the caller judged that): nil when
// allowed, else private_network_from_public. nav reports whether the request
// may be the agent's own navigation or its document's own sub-resources
// (navigationRequest); only such a request uses a pending AllowNavigation.
func (s *ProxySession) pnaRefusal(host string, port uint16, nav bool) *reason.Error {
	if s.policy().allowPNA {
		return nil
	}
	// While the agent's own navigation into the private network is pending,
	// a request to another private host:port is most likely the new
	// document's sub-resource that arrived before its commit was reported
	// (a dev page on localhost:3000 calling its API on localhost:8080): it is
	// held until the commit, a close or the navigation's end changes the
	// session's state, for at most ProxyOptions.CommitWait, and decided then. It never
	// gets more than a request arriving after that change would.
	deadline := time.Now().Add(s.commitWait)
	for {
		s.mu.Lock()
		ok := s.privateLocked() || (nav && s.nav != nil && s.nav.host == originHost(host) && s.nav.port == port)
		pending, changed := s.nav != nil, s.pnaChanged
		s.mu.Unlock()
		if ok {
			return nil
		}
		left := time.Until(deadline)
		if !pending || left <= 0 {
			break
		}
		t := time.NewTimer(left)
		select {
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
	return reason.New(reason.PrivateNetworkFromPublic, reason.GateSSRF,
		"Blocked: a public page asked for a private-network address (Private Network Access); only private pages, or your own browser_navigate to that address, may reach it. Set security.allow_private_urls: true to allow it.")
}

// navigationRequest narrows AllowNavigation on a plain HTTP request by its
// Fetch Metadata headers (W3C Fetch Metadata Request Headers). They are
// forbidden header names: a page's script can neither set nor change them,
// so they may narrow an allowance (never widen one). When the browser sent
// them, the request qualifies only as
//
//   - the agent's own navigation: Sec-Fetch-Site: none (a browser-initiated
//     navigation, as CDP's Page.navigate is), Sec-Fetch-Mode: navigate,
//     Sec-Fetch-Dest: document; or
//   - a request of a document of the target's own origin (Sec-Fetch-Site:
//     same-origin): the new page's sub-resources before its commit is seen.
//
// A keepalive fetch or beacon of the public page the tab left, or any
// request or navigation of a public popup, says cross-site and is refused.
// Chromium sends the headers only to potentially trustworthy URLs (loopback,
// localhost names, https): a plain-HTTP request to another private address
// carries none, and CONNECT tunnels show no headers at all; those keep the
// host:port allowance, which the browser side narrows in time instead
// (browser/pna.go: the old page is gone, public popups closed, Drain).
func navigationRequest(h http.Header) bool {
	site := h.Get("Sec-Fetch-Site")
	if site == "" {
		return true // no metadata to narrow with
	}
	switch strings.ToLower(site) {
	case "none":
		return strings.EqualFold(h.Get("Sec-Fetch-Mode"), "navigate") && strings.EqualFold(h.Get("Sec-Fetch-Dest"), "document")
	case "same-origin":
		return true
	}
	return false
}

// navKey carries navigationRequest's verdict from a request's arrival to the
// dial made for it.
const navKey ctxKey = 2

func withNavRequest(ctx context.Context, nav bool) context.Context {
	return context.WithValue(ctx, navKey, nav)
}

// navRequestFrom: a dial without the verdict (none is expected) does not use
// the allowance.
func navRequestFrom(ctx context.Context) bool {
	v, _ := ctx.Value(navKey).(bool)
	return v
}

// Drain prepares the session for an AllowNavigation: it closes every
// connection the browser has open to the proxy (requests in flight, idle
// keep-alive connections, CONNECT tunnels), so a request the browser queued
// behind them is sent now, while it is still refused, and then waits until
// the browser has asked for nothing for quiet, or max has passed. It reports
// whether the session was quiet. Requests the browser holds back longer
// than max (none of Chromium's keepalive or beacon requests is deferred) are
// not covered; a request queued before and sent after is refused by the
// headers where the browser sends them (navigationRequest).
func (s *ProxySession) Drain(ctx context.Context, quiet, max time.Duration) bool {
	s.mu.Lock()
	var cs []net.Conn
	for c := range s.clients {
		cs = append(cs, c)
	}
	for c := range s.tunnels {
		cs = append(cs, c)
	}
	s.lastArrival = time.Now()
	s.mu.Unlock()
	closeAll(cs)
	deadline := time.Now().Add(max)
	for {
		s.mu.Lock()
		idle := time.Since(s.lastArrival)
		s.mu.Unlock()
		if idle >= quiet {
			return true
		}
		wait := quiet - idle
		if time.Now().Add(wait).After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// clientState tracks the browser's connections to the proxy (Drain).
func (s *ProxySession) clientState(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateNew:
		s.clients[c] = struct{}{}
	case http.StateHijacked, http.StateClosed:
		delete(s.clients, c)
	}
}

// PublicTopLevels returns the ids of the session's top-level documents,
// other than except, that count as public (see the package comment): the
// popups and tabs a public page opened.
func (s *ProxySession) PublicTopLevels(except string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, private := range s.tops {
		if !private && id != except {
			out = append(out, id)
		}
	}
	return out
}

// arrivalRefusal is the request-time half of the check: host:port is
// private when its host is a private IP literal or a localhost name, or when
// the session has ever dialed it to a private IP (a pooled connection may
// still lead there).
func (s *ProxySession) arrivalRefusal(scheme, host string, port uint16, nav bool) *reason.Error {
	if s.policy().allowPNA {
		return nil
	}
	private := false
	if a, err := netip.ParseAddr(originHost(host)); err == nil {
		private = s.policy().guard.isPrivate(scheme, host, a, port)
	} else if urlsafe.IsLocalhostName(host) {
		private = s.policy().guard.isPrivate(scheme, host, urlsafe.LocalhostAddrs[0], port)
	} else {
		s.mu.Lock()
		private = s.everPrivate[hostPortKey(host, port)]
		s.mu.Unlock()
	}
	if !private {
		return nil
	}
	return s.pnaRefusal(host, port, nav)
}

// dial is the proxy's guarded dial: Guard.DialContext with the Private
// Network Access check on every candidate IP, then a record of where
// host:port led (urlPrivate, arrivalRefusal). private reports whether the
// connection reached a private address.
func (s *ProxySession) dial(ctx context.Context, network, addr string) (c net.Conn, private bool, err error) {
	scheme, nav := schemeFrom(ctx), navRequestFrom(ctx)
	c, err = s.policy().guard.dial(ctx, network, addr, func(host string, a netip.Addr, port uint16) *reason.Error {
		if !s.policy().guard.isPrivate(scheme, host, a, port) {
			return nil
		}
		return s.pnaRefusal(host, port, nav)
	})
	if err != nil {
		return nil, false, err
	}
	host, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.ParseUint(p, 10, 16)
	if ap, perr := netip.ParseAddrPort(c.RemoteAddr().String()); perr == nil {
		private = s.policy().guard.isPrivate(scheme, host, ap.Addr().Unmap(), uint16(port))
	}
	k := hostPortKey(host, uint16(port))
	s.mu.Lock()
	s.lastDial[k] = private
	if private {
		s.everPrivate[k] = true
	}
	s.mu.Unlock()
	return c, private, nil
}

func hostPortKey(host string, port uint16) string {
	return strings.TrimSuffix(originHost(host), ".") + ":" + strconv.Itoa(int(port))
}

// isPrivate reports whether a (dialed for host:port with scheme) is in the
// private network as the strict gate sees it: JudgeAddr with private
// addresses refused would say ssrf_private, and no explicit allowance
// (AllowAddrPorts, WithOrigin) or declared fake-IP range lifts it. Metadata
// addresses are not "private" here: every gate refuses them anyway.
func (g *Guard) isPrivate(scheme, host string, a netip.Addr, port uint16) bool {
	o := g.opts.Gate
	o.AllowPrivate = false
	rerr := o.JudgeAddr(scheme, host, a)
	return rerr != nil && rerr.Code == reason.SSRFPrivate && !g.excused(rerr, a, port) && !g.originExcused(rerr, host, port)
}
