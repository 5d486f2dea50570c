// Package navgate is the browser's URL gates (spec §B8): the navigation
// gate of browser_navigate, the post-redirect check, the page gate every
// other tool applies to the page it acts on, the eval policy of
// browser_console (§B8.3), and the guards of the sessions' egress proxies.
// The Manager (internal/browser) runs them around every backend; a browser
// node builds them from the policy a replica sends (FromPolicy). They drive
// no browser.
package navgate

import (
	"context"
	"net/netip"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Gates holds the browser's URL gates (spec §B8). Open allows private
// addresses (a local backend, a ::local sidecar, security.allow_private_urls)
// but never metadata endpoints; Strict refuses private addresses too. The same
// Gates value decides browser_navigate, the page checks of the other tools, the
// egress proxy of every session and `gatehouse check --for browser`, so they
// cannot disagree. A browser node judges a session's traffic with Gates built
// from the session's policy (SessionPolicy, FromPolicy), so a session on
// a node obeys the same gates as one in the replica.
type Gates struct {
	Open   *egress.Guard
	Strict *egress.Guard
	Policy *policy.Policy // nil: no website policy
	// AllowPrivate is security.allow_private_urls (or the legacy
	// browser.allow_private_urls in a file): the SSRF guard is off for every
	// backend (spec §B8.1 3b), and so is Private Network Access in the local
	// sessions' egress proxies (internal/browser/pna.go).
	AllowPrivate bool
	// spec is the policy the gates were built from (Active unset).
	spec node.Policy
}

// New builds the gates from cfg; r replaces the system resolver (tests),
// allow lists IP:port pairs the guards may reach although private (tests'
// loopback servers; never metadata). home resolves shared blocklist files.
// Warnings name dropped fake-IP ranges, unreadable blocklist files and
// blocklist rules too long to match a host.
//
// The gates are built by FromPolicy from the node.Policy that cfg
// gives (node.ConfigPolicy), the one function that also builds a browser
// node's session guard from the policy a replica sends (SessionPolicy):
// one code path, so a session judged on a node and one judged here cannot
// differ.
func New(cfg *config.Config, home string, r egress.Resolver, allow []netip.AddrPort) (*Gates, []string) {
	spec, warns := node.ConfigPolicy(cfg, home)
	g, err := FromPolicy(spec, r, allow, nil)
	if err != nil {
		// Unreachable: every entry of spec comes from the parsers Compile
		// judges with (ParseFakeIPRanges, policy.Load). Should it happen,
		// the gates keep the metadata floor and refuse private addresses,
		// and the warning names the entry.
		warns = append(warns, err.Error())
		g, _ = FromPolicy(node.Policy{Version: node.PolicyVersion}, r, allow, nil)
	}
	return g, warns
}

// FromPolicy builds the gates of p (node.Policy.Compile validates
// it; its error is returned and no Gates): Open and Strict guards with
// p's fake-IP ranges, website blocklist and connect timeout, the
// blocklist as Policy, AllowPrivate from p.AllowPrivateURLs. p.Active is
// not used (Guard(p.Active) picks the session's guard). r and allow are
// as for New: Go-code seams, never part of a policy. The metadata
// floor holds whatever p says (urlsafe.Options.JudgeAddr). hostService,
// when not nil, names the addresses of the host's own services no request
// may reach whatever p allows (egress.Options.HostService: a browser
// node's debugging port, listener and session proxies).
func FromPolicy(p node.Policy, r egress.Resolver, allow []netip.AddrPort, hostService func(netip.AddrPort) bool) (*Gates, error) {
	cp, err := p.Compile()
	if err != nil {
		return nil, err
	}
	strictGate := cp.Gate
	strictGate.AllowPrivate = false
	openGate := cp.Gate
	openGate.AllowPrivate = true
	mk := func(o urlsafe.Options) *egress.Guard {
		// The guard carries the website policy, so its one decision
		// (Guard.Decide) applies it to navigations and to every proxied request.
		return egress.New(egress.Options{Gate: o, Resolver: r, AllowAddrPorts: allow, ConnectTimeout: cp.ConnectTimeout, Policy: cp.Blocklist, HostService: hostService})
	}
	p.Active = false
	return &Gates{Open: mk(openGate), Strict: mk(strictGate), Policy: cp.Blocklist,
		AllowPrivate: p.AllowPrivateURLs, spec: p}, nil
}

// SessionPolicy is the policy of a session judged by these gates with the
// SSRF guard active or not (GuardActive): what a browser node is sent to
// judge the session's traffic with (node.OpenRequest.Policy). Its slices
// are shared with g: treat them as read-only.
func (g *Gates) SessionPolicy(active bool) node.Policy {
	p := g.spec
	p.Active = active
	return p
}

// GuardActive reports whether the SSRF private-address check applies to a
// session (spec §B8.2): not a local backend, not a sidecar key, and private
// URLs not allowed.
func (g *Gates) GuardActive(localBackend bool, key string) bool {
	return !localBackend && !sessionkey.IsSidecar(key) && !g.AllowPrivate
}

// Guard returns the guard for a session with the SSRF check active or not.
func (g *Gates) Guard(active bool) *egress.Guard {
	if active {
		return g.Strict
	}
	return g.Open
}

// CheckURL is the navigation gate of spec §B8.1 steps 1 and 3, in order:
// secret floor on the raw and normalized URL (credential-named parameters are
// allowed for the browser), scheme, metadata floor (every backend), private
// addresses (only when active), website policy. DNS is resolved and every
// answer judged. It is the one function `gatehouse check --for browser` calls.
func (g *Gates) CheckURL(ctx context.Context, raw string, active bool) gate.CheckResult {
	return gate.CheckURL(ctx, g.Guard(active), nil, raw, gate.CheckMode{}) // the guard applies the policy
}

// JudgeStatic judges an http(s) URL without DNS: parse, scheme, metadata host
// names and IP literals, private literals when active, then website policy.
// Names are judged again, on every resolved IP, by the session's egress proxy.
func (g *Gates) JudgeStatic(raw string, active bool) *reason.Error {
	u, err := urlsafe.Parse(raw)
	if err != nil {
		return err
	}
	if rerr := g.Guard(active).CheckStatic(u); rerr != nil {
		return rerr
	}
	if b := g.Policy.CheckURL(u); b != nil {
		return b.Err()
	}
	return nil
}

// internalSchemes are browser-internal or inline schemes a page URL may carry
// (spec §B8.2).
var internalSchemes = map[string]bool{
	"about": true, "data": true, "javascript": true, "chrome": true, "chrome-untrusted": true,
	"chrome-extension": true, "chrome-search": true, "chrome-error": true, "devtools": true,
	"edge": true, "brave": true, "opera": true, "vivaldi": true, "moz-extension": true, "resource": true,
}

// maxWrapDepth is how many view-source:/blob:/filesystem: wrappers are
// unwrapped; one more fails closed (spec §B8.2).
const maxWrapDepth = 3

// PageURLBlocked is the page-URL verdict of spec §B8.2: http and https →
// blocked(url); view-source:, blob: and filesystem: → the verdict of the
// wrapped URL (at most 3 wrappers; deeper fails closed; an opaque blob:null/…
// is allowed); file: → always blocked; browser-internal and inline schemes
// (about, data, javascript, chrome, devtools, …) → allowed; another scheme with
// an //authority → host-checked with blocked("http://authority/"); any other →
// allowed; no scheme → blocked(url).
func PageURLBlocked(pageURL string, blocked func(httpURL string) bool) bool {
	u := strings.TrimSpace(pageURL)
	for depth := 0; ; depth++ {
		scheme, rest, ok := splitScheme(u)
		if !ok {
			return blocked(u)
		}
		switch scheme {
		case "http", "https":
			return blocked(u)
		case "view-source", "blob", "filesystem":
			if depth >= maxWrapDepth {
				return true
			}
			if scheme == "blob" && strings.HasPrefix(rest, "null/") {
				return false
			}
			u = rest
			continue
		case "file":
			return true
		}
		if internalSchemes[scheme] {
			return false
		}
		if strings.HasPrefix(rest, "//") {
			auth := rest[2:]
			if i := strings.IndexAny(auth, "/?#"); i >= 0 {
				auth = auth[:i]
			}
			if i := strings.LastIndexByte(auth, '@'); i >= 0 {
				auth = auth[i+1:]
			}
			if auth == "" {
				return false
			}
			return blocked("http://" + auth + "/")
		}
		return false
	}
}

func splitScheme(s string) (scheme, rest string, ok bool) {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", s, false
	}
	sc := strings.ToLower(s[:i])
	for j, c := range sc {
		if !(c >= 'a' && c <= 'z' || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", s, false
		}
	}
	return sc, s[i+1:], true
}

// strictPageSchemes are refused as page URLs by Gatehouse on top of spec
// §B8.2 (issue 8): the agent has no business reading the browser's own pages.
var strictPageSchemes = map[string]bool{"chrome": true, "chrome-untrusted": true, "devtools": true, "file": true}

// PageRefusal judges the tab's current page URL for a session (spec §B8.2 plus
// Gatehouse's stricter schemes): nil when the page may be read and acted on,
// else page_blocked wrapping the gate's refusal. No DNS is done: hosts are
// judged statically here and on every dialed IP by the egress proxy.
func (g *Gates) PageRefusal(pageURL string, active bool) *reason.Error {
	if sc, _, ok := splitScheme(pageURL); ok && strictPageSchemes[sc] {
		return reason.Newf(reason.PageBlocked, reason.GateScheme,
			"Blocked: the current page is a %s: URL, which Gatehouse never reads or acts on. Navigate to an http(s) page with browser_navigate.", sc)
	}
	var cause *reason.Error
	if PageURLBlocked(pageURL, func(u string) bool {
		cause = g.JudgeStatic(u, active)
		return cause != nil
	}) {
		msg := "Blocked: the current page URL is refused by the gates"
		if cause != nil {
			msg += " (" + string(cause.Code) + ")"
		}
		return reason.Wrap(reason.PageBlocked, reason.GateSSRF,
			msg+"; a script on the page may have navigated it there. Content is withheld and input refused; use browser_navigate to go elsewhere.", cause)
	}
	return nil
}

// RedirectRefusal is the post-redirect check of spec §B8.1 step 6: when final
// differs from requested (and is not empty), a metadata target is
// redirect_metadata on every backend and a private target is redirect_private
// when active; website policy on the final URL is policy_blocked. nil when the
// check passes or is skipped.
func (g *Gates) RedirectRefusal(requested, final string, active bool) *reason.Error {
	if final == "" || final == requested {
		return nil
	}
	sc, _, _ := splitScheme(final)
	if sc != "http" && sc != "https" {
		return nil
	}
	rerr := g.JudgeStatic(final, active)
	if rerr == nil {
		return nil
	}
	switch rerr.Code {
	case reason.SSRFMetadata:
		return reason.Wrap(reason.RedirectMetadata, reason.GateSSRF,
			"Blocked: the redirect landed on a cloud metadata endpoint; the tab was reset to about:blank.", rerr)
	case reason.SSRFPrivate:
		return reason.Wrap(reason.RedirectPrivate, reason.GateSSRF,
			"Blocked: the redirect landed on a private/internal address; the tab was reset to about:blank. Set security.allow_private_urls: true if this is intended.", rerr)
	}
	return rerr
}

// ErrorKind maps a reason code to the error kind names of spec §B14
// (secret_in_url, cloud_metadata, private_internal, website_policy,
// redirect_private, redirect_cloud_metadata, page_private, invalid_direction,
// command_timeout, chromium_missing); other codes map to themselves.
func ErrorKind(c reason.Code) string {
	switch c {
	case reason.SecretInURL, reason.CredentialsInURL:
		return "secret_in_url"
	case reason.SSRFMetadata:
		return "cloud_metadata"
	case reason.SSRFPrivate:
		return "private_internal"
	case reason.PolicyBlocked:
		return "website_policy"
	case reason.RedirectMetadata:
		return "redirect_cloud_metadata"
	case reason.RedirectPrivate:
		return "redirect_private"
	case reason.PageBlocked:
		return "page_private"
	}
	return string(c)
}
