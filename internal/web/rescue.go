package web

import (
	"context"
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

func servedBy(p provider.Page, name string) string {
	if p.ServedBy != "" && p.ServedBy != name {
		return p.ServedBy
	}
	return ""
}

// checkFinal re-checks a provider-reported final URL that differs from the
// requested one (spec §A11, post-redirect hardening): the SSRF gate (a vendor
// that followed a redirect to a private or metadata address must not hand
// that content back) and the website policy. ok is false with the refusal row,
// which keeps the caller's URL and names the final one.
func (s *Service) checkFinal(ctx context.Context, j *job, final string) (Result, bool) {
	if final == j.u.Href {
		return Result{}, true
	}
	fu, perr := urlsafe.Parse(final)
	if perr != nil {
		return errRow(j.u.Href, reason.Newf(reason.InvalidURL, reason.GateParse,
			"Blocked: the backend reported a final URL that cannot be parsed, so it cannot be checked (%s).", perr.Message)), false
	}
	// The policy first: it needs no DNS, so a blocklisted host is not
	// even looked up, and it is the more telling refusal.
	if b := s.d.Policy.CheckURL(fu); b != nil {
		return redirectPolicyRow(j.u.Href, fu.Href, b), false
	}
	if fu.Host != j.u.Host {
		if _, e := s.d.Guard.Check(ctx, fu); e != nil {
			e2 := *e
			e2.Message = "Blocked: the page redirected to a refused target, " + fu.Href + ": " + strings.TrimPrefix(e.Message, "Blocked: ")
			return errRow(j.u.Href, &e2), false
		}
	}
	return Result{}, true
}

// isPolicyRow reports a website-policy refusal, which is never rescued (spec §A5.5).
func isPolicyRow(r Result) bool {
	return r.BlockedByPolicy != nil || r.Reason == reason.PolicyBlocked ||
		(r.Error != nil && strings.Contains(strings.ToLower(*r.Error), "blocked by website policy"))
}

// rescue is the one-shot keyless rescue of an extract batch (spec §A5.5): when
// every dispatched row failed and the resolved backend is rescue-eligible, the
// genuinely failed rows — never policy refusals, never SSRF refusals of a
// final URL, never interrupted rows — are re-fetched once through the keyless
// ring. Rescued rows carry meta.rescued_from and meta.backend_error, are never
// cached, and the rescue is logged once; if the ring fails everywhere the
// original rows stay. The next call tries the configured backend again.
func (s *Service) rescue(ctx context.Context, res provider.Resolution, jobs []*job, rows []Result) {
	if ctx.Err() != nil || !s.d.Registry.RescueEligible(res) {
		return
	}
	for _, j := range jobs {
		if rows[j.idx].OK() {
			return
		}
	}
	var again []*job
	for _, j := range jobs {
		r := rows[j.idx]
		if isPolicyRow(r) || r.Reason == reason.Interrupted || r.Reason == reason.SSRFPrivate || r.Reason == reason.SSRFMetadata {
			continue
		}
		if j.privateSeen {
			continue // a private URL is never handed to a third-party reader
		}
		again = append(again, j)
	}
	if len(again) == 0 {
		return
	}
	urls := make([]string, len(again))
	for k, j := range again {
		urls[k] = j.u.Href
	}
	pages := s.d.Registry.RescueExtract(ctx, res, urls)
	if pages == nil {
		return
	}
	for k, j := range again {
		p := pages[k]
		if p.Err != nil {
			continue
		}
		final := orURL(p.FinalURL, j.u.Href)
		if bad, ok := s.checkFinal(ctx, j, final); !ok {
			rows[j.idx] = bad
			continue
		}
		orig := ""
		if e := rows[j.idx].Error; e != nil {
			orig = *e
		}
		if r := []rune(orig); len(r) > 300 {
			orig = string(r[:300]) + "…"
		}
		rows[j.idx] = Result{URL: j.u.Href, Title: p.Title, Content: p.Content, Meta: &Meta{
			Provider: res.Name, FinalURL: final, Notes: p.Notes, ServedBy: p.ServedBy,
			RescuedFrom: res.Name, BackendError: orig + " (the next call uses the configured backend again)",
		}}
	}
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
