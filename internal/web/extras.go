package web

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// Per-call extras of web_extract: page metadata, links judged by the gates,
// the render step's provenance and per-call freshness (max_age_s).

// FormatRendered is the cache format of a page whose rendered DOM was
// converted: the cache key includes whether the page was rendered, so a
// rendering is never served to a call that asked for none (render: never)
// and a fetched page never to one that asked for rendering (render: always).
const FormatRendered = Format + ";rendered"

// Link is one entry of a row's links (include_links): a distinct absolute
// http(s) link of the page with its anchor text, main-content links first,
// judged by web_extract's own URL gates (secret, scheme, SSRF with DNS,
// website policy) as `gatehouse check` would: Allowed, else the refusing
// Reason code and Gate.
type Link struct {
	URL     string      `json:"url"`
	Text    string      `json:"text"`
	Main    bool        `json:"main,omitempty"`
	Allowed bool        `json:"allowed"`
	Reason  reason.Code `json:"reason,omitempty"`
	Gate    reason.Gate `json:"gate,omitempty"`
}

// extra is what the cache keeps with a page besides its text (the sidecar of
// cache.Entry.Extra).
type extra struct {
	Meta       provider.PageMeta `json:"meta"`
	Links      []provider.Link   `json:"links,omitempty"`
	LinksTotal int               `json:"links_total,omitempty"`
	Rendered   bool              `json:"rendered,omitempty"`
}

func encodeExtra(p provider.Page) []byte {
	b, err := json.Marshal(extra{Meta: p.Meta, Links: p.Links, LinksTotal: p.LinksTotal, Rendered: p.Rendered})
	if err != nil {
		return nil
	}
	return b
}

func decodeExtra(b []byte) (extra, bool) {
	var x extra
	if len(b) == 0 || json.Unmarshal(b, &x) != nil {
		return extra{}, false
	}
	return x, true
}

// cacheFormats returns the cache formats a call in render mode may be served
// from: never → fetched pages only; always → rendered pages only; auto →
// either (an auto call renders exactly when the page needs it).
func cacheFormats(mode string) []string {
	switch mode {
	case provider.RenderNever:
		return []string{Format}
	case provider.RenderAlways:
		return []string{FormatRendered}
	}
	return []string{Format, FormatRendered}
}

// cacheURL is the URL a page is cached under: href without its fragment
// for a fetched page (a fragment is never sent to the server, RFC 9110
// §7.1, so "page#a" and "page#b" are one response), as is for a rendered
// one (a script may route on the fragment: "app/#/about" renders another
// view than "app/").
func cacheURL(href, format string) string {
	if format == FormatRendered {
		return href
	}
	if i := strings.IndexByte(href, '#'); i >= 0 {
		return href[:i]
	}
	return href
}

// cacheLookup returns the newest cached page for href in one of formats
// whose age is under maxAge (nil: any age the TTL allows; 0: none). The
// error is the shared state's (cache.Cache.Lookup: state_unavailable with
// GATEHOUSE_REDIS_URL set and Redis down); the disk cache never fails.
func (s *Service) cacheLookup(ctx context.Context, href, name string, formats []string, maxAge *int) (cache.Entry, bool, error) {
	if maxAge != nil && *maxAge <= 0 {
		return cache.Entry{}, false, nil
	}
	var best cache.Entry
	found := false
	for _, f := range formats {
		e, ok, err := s.d.Cache.Lookup(ctx, cacheURL(href, f), f, name)
		if err != nil {
			return cache.Entry{}, false, err
		}
		if !ok {
			continue
		}
		if maxAge != nil && s.d.Now().Sub(e.FetchedAt) > time.Duration(*maxAge)*time.Second {
			continue
		}
		if !found || e.FetchedAt.After(best.FetchedAt) {
			best, found = e, true
		}
	}
	return best, found, nil
}

// Bounds of link judging (include_links). A page chooses its links, so it
// chooses the hosts Gatehouse resolves: an attacker's name server that never
// answers must cost the call a bounded time, not a lookup timeout per link.
const (
	// linkHostParallel bounds the DNS lookups in flight for one call.
	linkHostParallel = 32
	// linkLookupTimeout bounds one host's lookup.
	linkLookupTimeout = 2 * time.Second
	// linkJudgeFloor is the least time link judging gets after the pages
	// arrived, when the call's web.extract_timeout deadline is nearer.
	linkJudgeFloor = 2 * time.Second
)

// linkRows judges the links of every success row (include_links) in one pass,
// so a host linked from several rows is resolved once, and writes each row's
// Links. The judging ends at deadline (the call's web.extract_timeout
// deadline; zero: none), or linkJudgeFloor from now when that is later.
func (s *Service) linkRows(ctx context.Context, deadline time.Time, rows []Result, done []bool, extras [][]provider.Link) {
	var all []provider.Link
	var owner []int
	for i := range rows {
		if done[i] && rows[i].OK() && rows[i].Meta != nil {
			all = append(all, extras[i]...)
			for range extras[i] {
				owner = append(owner, i)
			}
			rows[i].Links = []Link{}
		}
	}
	if len(all) == 0 {
		return
	}
	jctx, cancel := ctx, context.CancelFunc(func() {})
	if !deadline.IsZero() {
		jctx, cancel = context.WithDeadline(ctx, later(deadline, time.Now().Add(linkJudgeFloor)))
	}
	defer cancel()
	for k, l := range s.judgeLinks(jctx, all) {
		rows[owner[k]].Links = append(rows[owner[k]].Links, l)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// judgeLinks runs web_extract's URL gates on each link: the secret gate
// (raw and parsed), parse and scheme, the SSRF gate with DNS (once per
// distinct host, at most linkHostParallel lookups at a time, each bounded by
// linkLookupTimeout) and the website policy. A link whose host was not
// resolved when its lookup timed out or ctx's deadline passed is refused with
// dns_timeout (interrupted when ctx was cancelled): not judged, so not
// allowed. judgeLinks returns by ctx's deadline even when the resolver
// ignores ctx.
func (s *Service) judgeLinks(ctx context.Context, links []provider.Link) []Link {
	out := make([]Link, len(links))
	type hostVerdict struct {
		u    *urlsafe.URL
		done bool
		err  *reason.Error
	}
	var mu sync.Mutex // guards every hostVerdict's done and err
	hosts := map[string]*hostVerdict{}
	var order []*hostVerdict // first appearance: main-content links first
	parsed := make([]*urlsafe.URL, len(links))
	for i, l := range links {
		out[i] = Link{URL: l.URL, Text: l.Text, Main: l.Main}
		deny := func(e *reason.Error) {
			out[i].Reason, out[i].Gate = e.Code, e.Gate
			if out[i].Gate == "" {
				out[i].Gate = reason.GateSSRF
			}
		}
		if e := urlsafe.FindSecret(l.URL); e != nil {
			deny(e)
			continue
		}
		u, err := urlsafe.Parse(l.URL)
		if err != nil {
			deny(reason.As(err))
			continue
		}
		if e := urlsafe.CheckSecrets(l.URL, u, true); e != nil {
			deny(e)
			continue
		}
		parsed[i] = u
		if _, ok := hosts[u.Host]; !ok {
			hv := &hostVerdict{u: u}
			hosts[u.Host] = hv
			order = append(order, hv)
		}
	}
	sem := make(chan struct{}, linkHostParallel)
	var wg sync.WaitGroup
	for _, hv := range order {
		// A statically refused host or a literal address needs no lookup.
		if e := s.d.Guard.CheckStatic(hv.u); e != nil || hv.u.Addr.IsValid() {
			hv.err, hv.done = e, true
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break // the rest stay unjudged
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			lctx, cancel := context.WithTimeout(ctx, linkLookupTimeout)
			defer cancel()
			_, e := s.d.Guard.Check(lctx, hv.u)
			mu.Lock()
			defer mu.Unlock()
			if e != nil && e.Code == reason.Interrupted {
				return // the lookup timed out or the call ended: unjudged
			}
			hv.err, hv.done = e, true
		}()
	}
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	for i, u := range parsed {
		if u == nil {
			continue
		}
		hv := hosts[u.Host]
		e := hv.err
		if !hv.done {
			e = reason.New(reason.DNSTimeout, reason.GateSSRF, "")
			if ctx.Err() == context.Canceled {
				e = reason.New(reason.Interrupted, reason.GateSSRF, "")
			}
		}
		if e != nil {
			out[i].Reason, out[i].Gate = e.Code, e.Gate
			if out[i].Gate == "" {
				out[i].Gate = reason.GateSSRF
			}
			continue
		}
		if b := s.d.Policy.CheckURL(u); b != nil {
			out[i].Reason, out[i].Gate = reason.PolicyBlocked, reason.GatePolicy
			continue
		}
		out[i].Allowed = true
	}
	return out
}

// applyExtra fills a success row's meta from what the backend said about the
// page (or what the cache kept).
func applyExtra(m *Meta, x extra) {
	m.PageMeta = x.Meta
	m.Rendered = m.Rendered || x.Rendered
	if x.LinksTotal > len(x.Links) {
		m.LinksTotal = x.LinksTotal
	}
}
