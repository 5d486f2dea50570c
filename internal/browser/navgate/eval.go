package navgate

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/browser/evalpolicy"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// EvalSettings are the eval-policy switches of spec §B8.3 / §B13.
type EvalSettings struct {
	// Restrict is browser.restrict_evaluate: the denylist is on (default off).
	Restrict bool
	// AllowUnsafe is browser.allow_unsafe_evaluate: it overrides the denylist
	// entirely (default off). It never lifts the URL-literal pre-screen.
	AllowUnsafe bool
}

// CheckEval is the eval policy run before browser_console evaluates an
// expression (spec §B8.3 steps 1–2), and the one function `gatehouse check
// --eval` calls, so the two cannot disagree:
//
//  1. the opt-in denylist (evalpolicy.Denied): eval_denylist naming the primitive and
//     the setting that turns it off;
//  2. the pre-screen of every http(s):// literal (evalpolicy.URLLiterals) through the same
//     navigation gate as browser_navigate (CheckURL, DNS resolved): a
//     metadata endpoint is refused on every backend, any other refusal only
//     when the session's SSRF guard is active → eval_private_literal.
//
// nil means the expression may run. The denylist is a tripwire, not a
// boundary: an expression that assembles a name at run time gets past it.
// The egress proxy, which judges every request the page makes on the dialed
// IP, is the security boundary (docs/browser-lifecycle.md).
func (g *Gates) CheckEval(ctx context.Context, expr string, set EvalSettings, active bool) *reason.Error {
	if why := evalpolicy.Denied(expr, set.Restrict, set.AllowUnsafe); why != "" {
		return reason.Newf(reason.EvalDenylist, "",
			"Blocked: the expression uses %s, which browser.restrict_evaluate refuses; it was not run. Set browser.restrict_evaluate: false (or browser.allow_unsafe_evaluate: true) to allow it.", why)
	}
	for _, lit := range evalpolicy.URLLiterals(expr) {
		chk := g.CheckURL(ctx, lit, active)
		if chk.Allowed || chk.Reason == nil {
			continue
		}
		if active || *chk.Reason == reason.SSRFMetadata {
			return reason.Newf(reason.EvalURLLiteral, "",
				"Blocked: the expression contains the URL literal %s, which the gates refuse (%s); it was not run.", gate.Origin(lit), *chk.Reason)
		}
	}
	return nil
}

// EvalVerdict is one expression's outcome in `gatehouse check --json --eval`:
// {"expression","allowed","reason"} (reason null when allowed), plus the
// refusal message.
type EvalVerdict struct {
	Expression string       `json:"expression"`
	Allowed    bool         `json:"allowed"`
	Reason     *reason.Code `json:"reason"`
	Message    string       `json:"message,omitempty"`
}

// CheckEvals runs CheckEval on each expression, results in input order.
func (g *Gates) CheckEvals(ctx context.Context, exprs []string, set EvalSettings, active bool) []EvalVerdict {
	out := make([]EvalVerdict, 0, len(exprs))
	for _, e := range exprs {
		v := EvalVerdict{Expression: e, Allowed: true}
		if rerr := g.CheckEval(ctx, e, set, active); rerr != nil {
			c := rerr.Code
			v.Allowed, v.Reason, v.Message = false, &c, rerr.Message
		}
		out = append(out, v)
	}
	return out
}
