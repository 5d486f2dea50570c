package egress

import (
	"context"
	"net/netip"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Rules are the per-tool parts of an egress decision. The zero value is the
// rule set every request Gatehouse sends must pass.
type Rules struct {
	// SensitiveParams refuses a credential-named query or fragment parameter
	// (spec §A6.7, sensitive_query_param): web_extract's rule for URLs handed
	// to third-party readers. Browser traffic and redirect hops leave it off
	// (magic links and OAuth callbacks carry ?token=, ?code=).
	SensitiveParams bool
	// RefuseUserinfo refuses any userinfo, not only a password
	// (credentials_in_url): a redirect target must not make the client send
	// credentials the caller never gave.
	RefuseUserinfo bool
	// Resolve also resolves a host name and judges every answer (as Check)
	// before the website policy runs, for callers that want a DNS refusal
	// reported now (gatehouse check). Without it the answers are judged when
	// the connection is dialed (DialContext), which is the boundary anyway.
	Resolve bool
}

// Decision is an allowed request: the canonical URL that was judged (send
// URL.Href, never the raw text) and, with Rules.Resolve, the vetted answers.
// Addrs are not pinned: the connection is judged again at dial time.
type Decision struct {
	URL   *urlsafe.URL
	Addrs []netip.Addr
}

// Decide is Gatehouse's one egress decision: may a request to raw be sent?
// Every request a Guard's Client sends passes it before a connection is
// opened: the first request (in the transport) and every redirect hop (in
// CheckRedirect). A loopback forward proxy for a browser calls the same
// function per proxied request (for CONNECT, with "https://host:port/"),
// then dials through DialContext, so browser traffic obeys the same gates.
//
// Checks, in spec §A3 gate order, the first refusal deciding:
//
//  1. secret: a credential-shaped token or JWT in any form of raw
//     (urlsafe.FindSecret) → secret_in_url; a userinfo password →
//     credentials_in_url; with Rules.SensitiveParams a credential-named
//     parameter → sensitive_query_param; with Rules.RefuseUserinfo any
//     userinfo → credentials_in_url;
//  2. parse: not a URL a browser would parse → invalid_url;
//  3. scheme and SSRF without DNS (CheckStatic): unsupported_scheme,
//     ssrf_metadata, ssrf_private for an IP literal or localhost name (test
//     allowances honoured); with Rules.Resolve, DNS and every answer:
//     dns_unresolvable, ssrf_private, ssrf_metadata;
//  4. website policy (Options.Policy, security.website_blocklist) →
//     policy_blocked wrapping the *policy.Block (errors.As recovers it).
//
// The *reason.Error never echoes raw. Decide does no I/O beyond the optional
// DNS lookup and is safe for concurrent use.
func (g *Guard) Decide(ctx context.Context, raw string, r Rules) (*Decision, *reason.Error) {
	if e := urlsafe.CheckLength(raw); e != nil {
		return nil, e
	}
	if e := urlsafe.FindSecret(raw); e != nil {
		return nil, e
	}
	u, perr := urlsafe.Parse(raw)
	if perr != nil {
		return nil, perr
	}
	if e := urlsafe.CheckSecrets(raw, u, r.SensitiveParams); e != nil {
		return nil, e
	}
	if r.RefuseUserinfo && (u.Username != "" || u.HasPassword) {
		return nil, reason.New(reason.CredentialsInURL, reason.GateSecret,
			"Blocked: a redirect target carries credentials (user info before @); Gatehouse never sends credentials taken from a redirect. Open the final URL without them instead.")
	}
	d := &Decision{URL: u}
	if r.Resolve {
		addrs, e := g.Check(ctx, u)
		if e != nil {
			return nil, e
		}
		d.Addrs = addrs
	} else if e := g.CheckStatic(u); e != nil {
		return nil, e
	}
	if b := g.opts.Policy.CheckURL(u); b != nil {
		return nil, b.Err()
	}
	return d, nil
}
