package urlsafe

import (
	"fmt"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// ParseRef resolves ref against the absolute URL base as a browser resolves
// a link, a redirect's Location or a meta refresh target (WHATWG URL
// Standard, "parse a URL" with a base; github.com/nlnwa/whatwg-url), and
// returns the result canonicalised as Parse does (Parse(u.Href) yields u).
// An absolute ref ignores base. A '%' that starts no percent-encoded octet
// ("/100%", "/a%zz") is kept as the standard keeps it; hand the Href to
// net/http through RequestHref. ref is not trimmed beyond what the standard
// strips (leading and trailing C0 controls and spaces, tabs and newlines
// anywhere).
//
// Errors: a base or ref the standard rejects, or a result beyond Parse's
// limits, give a *reason.Error with Code InvalidURL and Gate GateParse,
// whose Message never echoes the input. Safe for concurrent use.
func ParseRef(base, ref string) (u *URL, rerr *reason.Error) {
	defer func() {
		// Third-party parser: a panic on hostile input is a refusal.
		if r := recover(); r != nil {
			u, rerr = nil, reason.Wrap(reason.InvalidURL, reason.GateParse, msgInvalid, fmt.Errorf("whatwg-url panic: %v", r))
		}
	}()
	if !withinLimits(ref) || !withinLimits(base) {
		return nil, errTooLong()
	}
	w, err := parser.ParseRef(base, ref)
	if err != nil {
		return nil, invalidURL(err)
	}
	return Parse(w.Href(false))
}
