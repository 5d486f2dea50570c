package web

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
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

// CheckURL runs, in order, the parse, secret, scheme/SSRF (with DNS) and policy
// gates on raw and reports the first refusal. guard carries the SSRF toggles
// for the mode (a local browser backend allows private addresses but never
// metadata); pol may be nil.
func CheckURL(ctx context.Context, guard *egress.Guard, pol *policy.Policy, raw string, mode CheckMode) CheckResult {
	res := CheckResult{URL: raw}
	var u *urlsafe.URL
	deny := func(e *reason.Error) CheckResult {
		g, c := e.Gate, e.Code
		if g == "" {
			g = reason.GateSSRF
		}
		res.Gate, res.Reason, res.Message = &g, &c, e.Message
		if g == reason.GateSecret {
			// Never print the secret back: keep scheme and host only.
			res.URL = "(redacted: the URL carries a credential)"
			if u != nil {
				res.URL = u.Scheme + "://" + u.Host + "/…(redacted)"
			}
		}
		return res
	}
	if e := urlsafe.FindSecret(raw); e != nil {
		u, _ = urlsafe.Parse(raw)
		return deny(e)
	}
	u, perr := urlsafe.Parse(raw)
	if perr != nil {
		return deny(perr)
	}
	if u.Host != "" {
		host := u.Host
		res.Host = &host
	}
	if e := urlsafe.CheckSecrets(raw, u, mode.Extract); e != nil {
		return deny(e)
	}
	if _, e := guard.Check(ctx, u); e != nil {
		return deny(e)
	}
	if b := pol.Check(u.Href); b != nil {
		res.BlockedByPolicy = b
		return deny(reason.New(reason.PolicyBlocked, reason.GatePolicy, b.Message()))
	}
	res.Allowed = true
	return res
}
