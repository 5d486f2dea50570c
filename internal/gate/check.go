package gate

import (
	"context"
	"errors"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/safetext"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// CheckResult is the verdict of the gates on one URL, as printed by
// `gatehouse check --json`. Nothing is fetched to produce it (DNS is resolved).
type CheckResult struct {
	URL             string        `json:"url"`
	Allowed         bool          `json:"allowed"`
	Gate            *reason.Gate  `json:"gate"`   // null when allowed
	Reason          *reason.Code  `json:"reason"` // null when allowed
	Host            *string       `json:"host"`   // canonical host; null when the URL cannot be parsed
	Message         string        `json:"message,omitempty"`
	BlockedByPolicy *policy.Block `json:"blocked_by_policy,omitempty"`
}

// CheckMode selects which tool's rules CheckURL applies.
type CheckMode struct {
	// Extract applies web_extract's rules: credential-named query/fragment
	// parameters are refused (sensitive_query_param). Browser rules allow them.
	Extract bool
}

// CheckURL runs, in order, the secret, parse, scheme/SSRF (with DNS) and
// policy gates on raw, through the same decision every request of the
// egress client passes (egress.Guard.Decide with DNS resolution), and
// reports the first refusal. guard carries the SSRF toggles for the mode (a
// local browser backend allows private addresses but never metadata) and,
// normally, the website policy; pol (may be nil) is checked as well. The
// URL and host printed are passed through urlsafe.Redact: a secret, also
// one inside the host name, is never printed back.
func CheckURL(ctx context.Context, guard *egress.Guard, pol *policy.Policy, raw string, mode CheckMode) CheckResult {
	if e := urlsafe.CheckLength(raw); e != nil {
		// Judged before any scan, and echoed abbreviated.
		g, c := reason.GateParse, e.Code
		return CheckResult{URL: safetext.Escape(urlsafe.Redact(urlsafe.Abbrev(WithoutQuery(raw)))), Gate: &g, Reason: &c, Message: e.Message}
	}
	res := CheckResult{URL: safetext.Escape(urlsafe.Redact(raw))}
	if u, err := urlsafe.Parse(raw); err == nil && u.Host != "" {
		host := safetext.Escape(urlsafe.Redact(u.Host))
		res.Host = &host
	}
	deny := func(e *reason.Error) CheckResult {
		g, c := e.Gate, e.Code
		if g == "" {
			g = reason.GateSSRF
		}
		res.Gate, res.Reason, res.Message = &g, &c, safetext.Escape(e.Message)
		var b *policy.Block
		if errors.As(e, &b) {
			res.BlockedByPolicy = b
		}
		return res
	}
	d, e := guard.Decide(ctx, raw, egress.Rules{SensitiveParams: mode.Extract, Resolve: true})
	if e != nil {
		return deny(e)
	}
	if b := pol.Check(d.URL.Href); b != nil {
		return deny(b.Err())
	}
	res.Allowed = true
	return res
}

// WithoutQuery returns raw cut before its first '?' or '#', marked "…" when
// cut (how a URL too long to scan is echoed: its query may hold a secret).
func WithoutQuery(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i] + "…"
	}
	return raw
}

// Origin returns scheme://host[:port] of raw for messages (never its
// path or query, which may carry a secret): the port when raw names one
// other than the scheme's default, an IPv6 host in brackets.
func Origin(raw string) string {
	u, err := urlsafe.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	host := u.Host
	if u.Addr.Is6() {
		host = "[" + host + "]"
	}
	if u.Port != "" {
		host += ":" + u.Port
	}
	return u.Scheme + "://" + host
}
