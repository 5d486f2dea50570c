// Package web implements the web_extract pipeline in the gate order of spec §A3
// (DESIGN.md: secret → ssrf → provider → policy → cache → call (+rescue) →
// truncate), one method of extractCall per step:
//
//	normalizeItems → refuseSecrets (whole call) → checkSSRF (per URL) →
//	selectProvider (strict) → refusePrivateToVendor → refuseByPolicy →
//	serveFromCache → fetchPages under a wall-clock cap (final-URL re-check,
//	storeInCache) → rescueFailed → addLinks → truncateAndStore → finish.
//
// Every control runs before a cache hit can be served; a cache hit only skips the
// provider call. Unlike the described system, results keep their provenance: each
// error row has a reason code, and each success row has meta (provider, cached,
// age_s, truncated, original_chars, final_url), so a cache hit is never invisible.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// extractGrace is how long dispatch waits, after web.extract_timeout fires or the
// call is interrupted, for the provider to report what it has finished.
const extractGrace = 2 * time.Second

// MaxURLs is the number of batch items web_extract processes; later items are
// ignored (spec §A1: the handler slices to the first 5).
const MaxURLs = 5

// Format is the only output format; it is part of the cache key (spec §A9.2).
const Format = "markdown"

// ExtractRequest is one web_extract call.
type ExtractRequest struct {
	// URLs holds up to MaxURLs items: each a string, or an object
	// (map[string]any) with a string "url" (else "href") field.
	URLs []any `json:"urls"`
	// CharLimit is the per-call budget in characters (Unicode code points); nil
	// means web.extract_char_limit. Clamped to [2000, 500000]; non-numeric → 15000
	// (spec §A10.1).
	CharLimit any `json:"char_limit,omitempty"`
	// Backend, when set, selects the extract backend for this call only
	// (`gatehouse extract --backend NAME`), resolved as strictly as
	// web.extract_backend.
	Backend string `json:"-"`
	// ReadTool selects the truncation footer's paging hint (truncate.Store.ReadTool):
	// "" names read_file and the agent-visible path; truncate.ReadToolWeb names
	// web_read and the store file name (MCP); truncate.ReadToolCLI names the
	// `gatehouse read PATH --offset N` command (CLI). Presentation only.
	ReadTool string `json:"-"`
	// ResourcePrefix is the resource URI prefix the footer shows with ReadTool
	// web_read (truncate.Store.ResourcePrefix).
	ResourcePrefix string `json:"-"`
	// Render is the render mode for this call (provider.RenderAuto,
	// RenderAlways, RenderNever); "" means web.extract_render. Only the
	// direct backend renders.
	Render string `json:"render,omitempty"`
	// IncludeLinks asks for each success row's Links.
	IncludeLinks bool `json:"include_links,omitempty"`
	// MaxAgeS, when set, is the oldest cached page this call accepts, in
	// seconds; 0 bypasses the cache for this call (the page is fetched, and
	// the fresh page is still cached). nil means any age within
	// web.cache_ttl_minutes.
	MaxAgeS *int `json:"max_age_s,omitempty"`
	// Progress, if set, is called with (finished, total) items as rows finish:
	// once after the gates and cache (rows refused or served from cache), then
	// once per page the provider delivers. Calls may come from several
	// goroutines but never concurrently.
	Progress func(done, total int) `json:"-"`
}

// Meta is the provenance of one successful row.
type Meta struct {
	Provider      string   `json:"provider"`
	Cached        bool     `json:"cached"`
	AgeS          int64    `json:"age_s"`          // seconds since the page was fetched (0 when fresh)
	Truncated     bool     `json:"truncated"`      // content is a head/tail window; full text stored
	OriginalChars int      `json:"original_chars"` // characters of the full clean text
	FinalURL      string   `json:"final_url"`      // URL after redirects
	StoredPath    string   `json:"stored_path,omitempty"`
	Notes         []string `json:"notes,omitempty"`
	// ServedBy names the keyless vendor that produced the page when it is not
	// Provider (ring failover or rescue).
	ServedBy string `json:"served_by,omitempty"`
	// RescuedFrom and BackendError mark a page served by the one-shot keyless
	// rescue after the configured backend failed (spec §A5.5); such pages are
	// never cached. Unlike the described system, this provenance reaches the
	// caller.
	RescuedFrom  string `json:"rescued_from,omitempty"`
	BackendError string `json:"backend_error,omitempty"`
	// PageMeta is what the page says about itself: description, author,
	// published, language, canonical_url, site_name, and pages for a PDF
	// (fields present when found).
	provider.PageMeta
	// Rendered reports that the content is the page's rendered DOM (the
	// direct backend's render step); RenderMS is how long rendering took in
	// milliseconds (absent on a cache hit).
	Rendered bool  `json:"rendered,omitempty"`
	RenderMS int64 `json:"render_ms,omitempty"`
	// RenderUnavailable is the reason code (chromium_missing, …) why a page
	// that needed rendering was shown as fetched; Notes say more.
	RenderUnavailable string `json:"render_unavailable,omitempty"`
	// RenderDiscarded says why a rendered page is shown as fetched:
	// no_content (the rendered DOM has no readable main content) or
	// less_text (its main content has under half the fetched page's text);
	// Notes give the figures, RenderMS the rendering time.
	RenderDiscarded string `json:"render_discarded,omitempty"`
	// LinksTotal is the number of distinct links on the page when Links
	// was capped (content.MaxLinks).
	LinksTotal int `json:"links_total,omitempty"`
}

// Result is one row, at the index of its input item.
type Result struct {
	URL             string        `json:"url"`
	Title           string        `json:"title"`
	Content         string        `json:"content"`
	Error           *string       `json:"error"`
	Reason          reason.Code   `json:"reason,omitempty"`
	BlockedByPolicy *policy.Block `json:"blocked_by_policy,omitempty"`
	Meta            *Meta         `json:"meta,omitempty"`
	// Links is set on success rows when include_links was asked for (an
	// empty list when the page has none); see Link.
	Links []Link `json:"links,omitzero"`
}

// OK reports whether the row is a success.
func (r Result) OK() bool { return r.Error == nil }

// ExtractResponse is the tool result. On success Results holds one row per
// processed item in input order and Success is nil (the JSON has only
// "results", as in the seeds). A whole-call refusal has Success=false, Error and
// Reason, and no results.
type ExtractResponse struct {
	Success *bool       `json:"success,omitempty"`
	Error   string      `json:"error,omitempty"`
	Reason  reason.Code `json:"reason,omitempty"`
	// Index is the 0-based batch item that caused a whole-call refusal.
	Index   *int     `json:"index,omitempty"`
	Results []Result `json:"results,omitempty"`
}

// Deps are the parts a Service is built from. Open builds them from config.
type Deps struct {
	Config   *config.Config
	Guard    *egress.Guard
	Policy   *policy.Policy     // nil: no website policy
	Cache    *cache.Cache       // nil: no cache
	Store    *truncate.Store    // nil: truncated pages are not stored
	Registry *provider.Registry // the backends; resolution and the keyless ring
	Memo     *cache.Memo        // nil: no search memo
	Logger   *slog.Logger       // nil: slog.Default()
	Now      func() time.Time   // nil: time.Now
	// DebugDir, when set, receives one web_tools_debug_<id>.json per call (GATEHOUSE_DEBUG=1).
	DebugDir string
}

// Service runs web_extract. Safe for concurrent use.
type Service struct {
	d Deps
}

// New returns a Service over d.
func New(d Deps) *Service {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	d.Logger = newRedactLogger(d.Logger)
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{d: d}
}

// Guard returns the egress guard the service dials through.
func (s *Service) Guard() *egress.Guard { return s.d.Guard }

// Policy returns the website policy (may be nil).
func (s *Service) Policy() *policy.Policy { return s.d.Policy }

func errRow(url string, e *reason.Error) Result {
	msg := e.Message
	return Result{URL: url, Error: &msg, Reason: e.Code}
}

// itemRefusal is a whole-call refusal caused by batch item i (secret gate).
func itemRefusal(i int, e *reason.Error) *ExtractResponse {
	r := refusal(e)
	r.Index = &i
	r.Error = urlsafe.Redact(fmt.Sprintf("%s (item %d; no URL in this call was fetched.)", e.Message, i))
	return r
}

func refusal(e *reason.Error) *ExtractResponse {
	f := false
	return &ExtractResponse{Success: &f, Error: urlsafe.Redact(e.Message), Reason: e.Code}
}

// NormalizeItem implements spec §A3 step 1 for one batch item: a string, or an
// object with a string "url" (else "href") field; the value is trimmed. A
// blank "url" counts as absent, so {"url":"","href":"https://…"} (a link
// row whose url was emptied) is its href. ok is false for anything else,
// including blank strings.
func NormalizeItem(it any) (url string, ok bool) {
	var s string
	switch v := it.(type) {
	case string:
		s = v
	case map[string]any:
		u, uok := v["url"].(string)
		h, hok := v["href"].(string)
		switch {
		case uok && strings.TrimSpace(u) != "":
			s = u
		case hok:
			s = h
		case uok:
			s = u
		default:
			return "", false
		}
	default:
		return "", false
	}
	s = strings.TrimSpace(s)
	return s, s != ""
}

// itemShape describes a batch item that is not a URL, for its error row:
// "a number", "an object with keys title, x", "a blank string".
func itemShape(it any) string {
	switch v := it.(type) {
	case string:
		return "a blank string"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, strconv.Quote(k))
		}
		sort.Strings(keys)
		if len(keys) > 8 {
			keys = append(keys[:8], "…")
		}
		if _, ok := v["url"]; ok {
			return "an object whose url and href are blank or not strings (keys " + strings.Join(keys, ", ") + ")"
		}
		if len(keys) == 0 {
			return "an empty object"
		}
		return "an object without url or href (keys " + strings.Join(keys, ", ") + ")"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64, int, int64, json.Number:
		return "a number"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", it)
}

type job struct {
	idx         int
	u           *urlsafe.URL
	privateSeen bool // some vetted address is not public (allowed by toggle/allowance): never cache
}

// Extract runs one web_extract call. It never returns a Go error: every failure is
// a row (per-entry) or a whole-call refusal in the response. ctx cancellation is
// the interrupt: URLs not yet done get an "interrupted" row.
//
// The call reads as the gate order of spec §A3 (DESIGN.md: secret → ssrf →
// provider → policy → cache → call (+rescue) → truncate), one method per step.
func (s *Service) Extract(ctx context.Context, req ExtractRequest) *ExtractResponse {
	c, refused := s.newExtractCall(req)
	if refused != nil {
		return refused
	}
	c.normalizeItems()
	if refused := c.refuseSecrets(); refused != nil {
		return refused
	}
	c.checkSSRF(ctx)
	if len(c.jobs) == 0 {
		return c.finish(nil)
	}
	if refused := c.selectProvider(); refused != nil {
		return refused
	}
	for _, j := range c.jobs {
		if c.refusePrivateToVendor(j) || c.refuseByPolicy(j) || c.serveFromCache(ctx, j) {
			continue
		}
		c.fetch = append(c.fetch, j)
	}
	progress := c.reportGated()
	if len(c.fetch) > 0 {
		c.fetchPages(ctx, progress)
		c.rescueFailed(ctx)
	}
	c.addLinks(ctx)
	return c.finish(c.truncateAndStore(ctx))
}

// extractCall is one web_extract call on its way through the gates: a row
// per processed item in input order (done[i] once row i is final), the
// items' URLs (raws) and parsed forms, the jobs that passed the SSRF gate,
// the resolved backend, the jobs still to fetch and each success row's links.
type extractCall struct {
	s      *Service
	req    ExtractRequest
	start  time.Time // s.d.Now() when the call began (the debug record)
	began  time.Time // wall clock for deadlines (s.d.Now may be a test clock)
	items  []any
	rows   []Result
	done   []bool
	raws   []string
	parsed []*urlsafe.URL
	jobs   []*job
	res    provider.Resolution
	ext    provider.Extractor
	name   string // ext.Name()
	fetch  []*job
	extras [][]provider.Link
}

// newExtractCall takes the first MaxURLs items of req (spec §A1); an empty
// batch is refused whole (content_inaccessible).
func (s *Service) newExtractCall(req ExtractRequest) (*extractCall, *ExtractResponse) {
	c := &extractCall{s: s, req: req, start: s.d.Now(), began: time.Now(), items: req.URLs}
	if len(c.items) > MaxURLs {
		c.items = c.items[:MaxURLs]
	}
	if len(c.items) == 0 {
		return nil, refusal(reason.New(reason.ContentInaccessible, "",
			"No URLs given; web_extract needs 1 to 5 URL strings (content inaccessible or not found)."))
	}
	n := len(c.items)
	c.rows, c.done, c.raws, c.parsed = make([]Result, n), make([]bool, n), make([]string, n), make([]*urlsafe.URL, n)
	c.extras = make([][]provider.Link, n)
	return c, nil
}

// normalizeItems is item normalisation (spec §A3 step 1): each item becomes a
// trimmed URL string (NormalizeItem), else its row is invalid_item naming the
// item's shape; an input over urlsafe.MaxURLBytes is refused before any scan
// (invalid_url, echoed abbreviated without its query).
func (c *extractCall) normalizeItems() {
	for i, it := range c.items {
		raw, ok := NormalizeItem(it)
		if !ok {
			c.rows[i] = errRow("", reason.Newf(reason.InvalidItem, "",
				"item %d is not a URL: it is %s; expected a non-empty URL string or an object carrying a url/href string.", i, itemShape(it)))
			c.done[i] = true
			continue
		}
		c.raws[i] = raw
		if e := urlsafe.CheckLength(raw); e != nil {
			c.rows[i] = errRow(urlsafe.Abbrev(gate.WithoutQuery(raw)), e)
			c.done[i] = true
		}
	}
}

// refuseSecrets is the whole-call secret refusal (spec §A3 step 2, §A7): a
// credential in any item's URL (urlsafe.FindSecret on the raw text before it
// is parsed, then urlsafe.CheckSecrets on the parsed URL) refuses the entire
// call with secret_in_url, credentials_in_url or sensitive_query_param,
// naming the item; nothing is fetched. An unparseable URL gets its own row
// (invalid_url, unsupported_scheme), echoed without its query and fragment.
func (c *extractCall) refuseSecrets() *ExtractResponse {
	for i, raw := range c.raws {
		if c.done[i] || raw == "" {
			continue
		}
		if e := urlsafe.FindSecret(raw); e != nil {
			return itemRefusal(i, e)
		}
		u, err := urlsafe.Parse(raw)
		if err != nil {
			// An unparseable URL is echoed without its query and fragment:
			// they may carry credentials the secret gate could not judge.
			c.rows[i] = errRow(gate.WithoutQuery(raw), reason.As(err))
			c.done[i] = true
			continue
		}
		if e := urlsafe.CheckSecrets(raw, u, true); e != nil {
			return itemRefusal(i, e)
		}
		c.parsed[i] = u
	}
	return nil
}

// checkSSRF is the SSRF filter (spec §A3 step 3, §A6): every parsed URL's
// host is resolved and each answer classified (egress.Guard.Check, lookups
// in parallel); a refused URL gets its row (ssrf_private, ssrf_metadata,
// dns_unresolvable, dns_bad_answer, dns_timeout; interrupted when ctx ended)
// and the rest become jobs in input order, marked when an address is not
// public (such pages are never cached nor handed to a vendor).
func (c *extractCall) checkSSRF(ctx context.Context) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, u := range c.parsed {
		if u == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			addrs, e := c.s.d.Guard.Check(ctx, u)
			mu.Lock()
			defer mu.Unlock()
			if e != nil {
				if e.Code == reason.Interrupted || ctx.Err() != nil {
					e = interrupted(u.Href)
				}
				c.rows[i] = errRow(u.Href, e)
				c.done[i] = true
				return
			}
			c.jobs = append(c.jobs, &job{idx: i, u: u, privateSeen: c.s.anyNonPublic(addrs, egress.PortOf(u))})
		}()
	}
	wg.Wait()
	slices.SortFunc(c.jobs, func(a, b *job) int { return a.idx - b.idx })
}

// selectProvider is provider resolution (spec §A3 step 4, §A4.4), strict:
// req.Backend (--backend) or web.extract_backend names the backend; a
// resolution error (unknown_backend, search_only_backend, missing_key,
// no_provider, …; provider.Resolve) refuses the whole call.
func (c *extractCall) selectProvider() *ExtractResponse {
	res, perr := c.s.resolve(provider.CapExtract, c.req.Backend)
	if perr != nil {
		return refusal(perr)
	}
	ext, perr := c.s.d.Registry.Extractor(res)
	if perr != nil {
		return refusal(perr)
	}
	c.res, c.ext, c.name = res, ext, ext.Name()
	return nil
}

// refusePrivateToVendor reports (and writes the ssrf_private row) when j's
// host has a non-public address and the backend is a third-party reader: a
// Gatehouse rule before the website policy (privateToVendor); the described
// system hands every URL to the provider.
func (c *extractCall) refusePrivateToVendor(j *job) bool {
	if !j.privateSeen || c.name == provider.Direct {
		return false
	}
	c.rows[j.idx], c.done[j.idx] = errRow(j.u.Href, privateToVendor(c.name)), true
	return true
}

// refuseByPolicy is the website policy (spec §A3 step 5a, §A8; the hardened
// variant): a URL on the blocklist becomes a content-free policy_blocked row
// (gate policy) with blocked_by_policy naming the host, rule and source,
// before any cache lookup or fetch.
func (c *extractCall) refuseByPolicy(j *job) bool {
	b := c.s.d.Policy.CheckURL(j.u)
	if b == nil {
		return false
	}
	r := errRow(j.u.Href, reason.New(reason.PolicyBlocked, reason.GatePolicy, b.Message()))
	r.BlockedByPolicy = b
	c.rows[j.idx], c.done[j.idx] = r, true
	return true
}

// serveFromCache is the extract cache lookup (spec §A3 step 5b, §A9.2),
// keyed on (url, format, provider) and skipped for a URL with a non-public
// address: a hit within web.cache_ttl_minutes (and req.MaxAgeS) becomes a row
// with meta.cached and its age. The hit's final URL meets the website policy
// again, since the blocklist may have gained it since (policy_blocked). With
// shared state (GATEHOUSE_REDIS_URL) unreachable the row is refused with
// state_unavailable, never looked up in a per-replica view.
func (c *extractCall) serveFromCache(ctx context.Context, j *job) bool {
	if c.s.d.Cache == nil || j.privateSeen {
		return false
	}
	e, ok, err := c.s.cacheLookup(ctx, j.u.Href, c.name, cacheFormats(c.s.renderMode(c.req, c.name)), c.req.MaxAgeS)
	if re := reason.As(err); re != nil {
		// The shared state is down (state_unavailable): refuse, never
		// serve from a per-replica view of it.
		c.rows[j.idx], c.done[j.idx] = errRow(j.u.Href, re), true
		return true
	}
	if !ok {
		return false
	}
	// The cached page came from e.FinalURL: the blocklist may have
	// gained that host since, and a hit must not skip the check.
	if e.FinalURL != "" && e.FinalURL != j.u.Href {
		if b := c.s.d.Policy.Check(e.FinalURL); b != nil {
			c.rows[j.idx], c.done[j.idx] = redirectPolicyRow(j.u.Href, e.FinalURL, b), true
			return true
		}
	}
	age := int64(c.s.d.Now().Sub(e.FetchedAt).Round(time.Second).Seconds())
	c.s.d.Logger.Info("web_extract cache hit", "url", j.u.Href, "provider", c.name, "age_s", age)
	c.rows[j.idx] = Result{URL: j.u.Href, Title: e.Title, Content: e.Content, Meta: &Meta{
		Provider: c.name, Cached: true, AgeS: age, FinalURL: orURL(e.FinalURL, j.u.Href),
	}}
	if x, ok := decodeExtra(e.Extra); ok {
		applyExtra(c.rows[j.idx].Meta, x)
		c.extras[j.idx] = x.Links
	}
	c.done[j.idx] = true
	return true
}

// reportGated reports the rows the gates and the cache finished to
// req.Progress and returns the reporter of pages the provider delivers
// (finished rows plus n).
func (c *extractCall) reportGated() func(delivered int) {
	if c.req.Progress == nil {
		return func(int) {}
	}
	finished := 0
	for _, d := range c.done {
		if d {
			finished++
		}
	}
	c.req.Progress(finished, len(c.items))
	return func(n int) { c.req.Progress(finished+n, len(c.items)) }
}

// fetchPages is the provider call (spec §A3 step 6) under web.extract_timeout
// (extract_timeout, interrupted, no_result_for_url, provider_error rows), with
// the final-URL re-check (§A11: ssrf_*, policy_blocked) and the cache write
// of step 7 (storeInCache) per delivered page; see dispatch.
func (c *extractCall) fetchPages(ctx context.Context, progress func(int)) {
	c.s.dispatch(ctx, c.ext, provider.ExtractOptions{Render: c.s.renderMode(c.req, c.name)}, c.fetch, c.rows, c.done, c.extras, progress)
}

// rescueFailed is the one-shot keyless rescue (spec §A5.5): when every
// fetched row failed and the backend is rescue-eligible, the rows that were
// not refused by the policy are tried once on the keyless ring (never
// cached); see Service.rescue.
func (c *extractCall) rescueFailed(ctx context.Context) {
	c.s.rescue(ctx, c.res, c.fetch, c.rows)
}

// addLinks fills each success row's links when req.IncludeLinks asks for
// them (each link judged by the gates, within the call's
// web.extract_timeout); see Service.linkRows.
func (c *extractCall) addLinks(ctx context.Context) {
	if !c.req.IncludeLinks {
		return
	}
	var deadline time.Time // the call's web.extract_timeout deadline
	if t := c.s.d.Config.Web.ExtractTimeout; t > 0 {
		deadline = c.began.Add(t)
	}
	c.s.linkRows(ctx, deadline, c.rows, c.done, c.extras)
}

// truncateAndStore is the truncate pipeline (spec §A3 step 9, §A10) on every
// success row: tidied, secrets redacted (security.redact_secrets) before the
// store, then cut to char_limit (else web.extract_char_limit, clamped) as a
// head/tail window with the full text stored. A row never finished is
// interrupted. With shared state (GATEHOUSE_REDIS_URL) the full text goes to
// Redis under the caller's principal, and a row whose full text cannot reach
// it is refused (state_unavailable). It returns the per-page figures for the
// debug record.
func (c *extractCall) truncateAndStore(ctx context.Context) []pageMetric {
	limit := c.s.d.Config.Web.ExtractCharLimit
	if c.req.CharLimit != nil {
		limit = config.ClampCharLimit(c.req.CharLimit)
	}
	store := c.s.d.Store
	if store != nil && (c.req.ReadTool != "" || store.Shared != nil) {
		st := *store
		if c.req.ReadTool != "" {
			st.ReadTool, st.ResourcePrefix = c.req.ReadTool, c.req.ResourcePrefix
		}
		st = st.For(ctx) // a shared store keeps the caller's pages under its principal
		store = &st
	}
	var metrics []pageMetric
	for i := range c.rows {
		r := &c.rows[i]
		if !c.done[i] {
			*r = errRow(orURL(c.raws[i], ""), interrupted(c.raws[i]))
			continue
		}
		if !r.OK() || r.Meta == nil {
			continue
		}
		tidyRow(r)
		if c.s.d.Config.Security.RedactSecrets {
			redactContent(r) // before the store: the saved full text is redacted too
		}
		tr := truncate.Apply(r.URL, r.Content, limit, store)
		if re := reason.As(tr.StoreErr); re != nil && re.Code == reason.StateUnavailable {
			// The page's full text could not reach the shared store: a
			// truncated result whose rest no replica can read is refused.
			*r = errRow(r.URL, re)
			continue
		}
		r.Content = tr.Content
		r.Meta.Truncated = tr.Truncated
		r.Meta.OriginalChars = tr.OriginalChars
		r.Meta.StoredPath = tr.StoredPath
		if c.req.ReadTool == truncate.ReadToolWeb && tr.StoredPath != "" {
			// A client that pages with web_read (MCP) cannot see this
			// disk and must not learn its layout: the store name, which
			// web_read takes, as the footer gives it (issue 16 item 4).
			r.Meta.StoredPath = filepath.Base(tr.StoredPath)
		}
		metrics = append(metrics, pageMetric{URL: r.URL, OriginalChars: tr.OriginalChars, SentChars: tr.ShownChars, Truncated: tr.Truncated, Cached: r.Meta.Cached})
	}
	return metrics
}

// finish redacts the rows' URLs and messages (spec §A3 step 10; content was
// redacted by truncateAndStore), writes the debug record (GATEHOUSE_DEBUG)
// and returns the rows in input order.
func (c *extractCall) finish(metrics []pageMetric) *ExtractResponse {
	redactRows(c.rows, false)
	c.s.writeDebug(c.start, c.raws, c.rows, metrics)
	return &ExtractResponse{Results: c.rows}
}

// renderMode returns the render mode of a call to backend name: the
// request's, else web.extract_render, else auto. Backends other than
// direct never render: their pages are cached as fetched.
func (s *Service) renderMode(req ExtractRequest, name string) string {
	if name != provider.Direct {
		return provider.RenderNever
	}
	if req.Render != "" {
		return req.Render
	}
	if m := s.d.Config.Web.ExtractRender; m != "" {
		return m
	}
	return provider.RenderAuto
}

// resolve resolves capability c, with override (a per-call backend name)
// taking the place of web.<c>_backend.
func (s *Service) resolve(c provider.Capability, override string) (provider.Resolution, *reason.Error) {
	st := s.d.Registry.Settings()
	if o := strings.TrimSpace(override); o != "" {
		if c == provider.CapExtract {
			st.ExtractBackend, st.ExtractFrom = o, "--backend"
		} else {
			st.SearchBackend, st.SearchFrom = o, "--backend"
		}
		r, err := provider.Resolve(c, st)
		if err == nil {
			r.Source, r.Why = "--backend", "--backend "+o+" for this call ("+r.Why+")"
		}
		return r, err
	}
	return provider.Resolve(c, st)
}

// redirectPolicyRow is the row of the caller's URL u whose final URL (after
// redirects) is on the website blocklist: the row keeps u (so that rows
// match the URLs passed) and its message names the final URL.
func redirectPolicyRow(u, final string, b *policy.Block) Result {
	r := errRow(u, reason.New(reason.PolicyBlocked, reason.GatePolicy,
		"Blocked: the page redirected to "+final+", a host on the website blocklist. "+b.Message()))
	r.BlockedByPolicy = b
	return r
}

// publicFinal reports whether the page's final URL (after redirects) resolves
// only to public addresses (or test allowances), so its content may be cached.
// A redirect can land on a host that allow_private_urls let through even though
// the requested host is public; such content is never cached (spec §A9.2). The
// final host is looked up only when it differs from the requested one.
func (s *Service) publicFinal(ctx context.Context, j *job, final string) bool {
	fu, err := urlsafe.Parse(final)
	if err != nil {
		return false
	}
	if fu.Host == j.u.Host {
		return true
	}
	addrs, rerr := s.d.Guard.Check(ctx, fu)
	return rerr == nil && !s.anyNonPublic(addrs, egress.PortOf(fu))
}

func interrupted(u string) *reason.Error {
	return reason.Newf(reason.Interrupted, "", "Interrupted: the call was cancelled before %s was done.", u)
}

func orURL(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// anyNonPublic reports whether some vetted address is not public (reached only
// because allow_private_urls or a fake-IP declaration let it through); such URLs
// are never cached. Test allowances (egress.Options.AllowAddrPorts) count as public.
func (s *Service) anyNonPublic(addrs []netip.Addr, port uint16) bool {
	for _, a := range addrs {
		if urlsafe.ClassifyAddr(a) != urlsafe.ClassPublic && !s.d.Guard.Allowed(netip.AddrPortFrom(a, port)) {
			return true
		}
	}
	return false
}

// privateToVendor is the refusal of a URL on a private address (reachable
// only because security.allow_private_urls or an allowance permits it) for
// a third-party backend: the vendor cannot reach it, and handing it over
// would tell the vendor internal host names and paths. A Gatehouse rule;
// the described system hands every URL to the provider.
func privateToVendor(backend string) *reason.Error {
	return reason.Newf(reason.SSRFPrivate, reason.GateSSRF,
		"Blocked: this URL is on a private address; Gatehouse never hands a private URL to a third-party reader (%s), "+
			"which could not reach it and would learn your internal host names. Use --backend direct (or web.extract_backend: direct) for private pages.", backend)
}

// dispatch calls the provider for the jobs and fills their rows, re-checks the
// final URL against the website policy (checkFinal), and writes successes to
// the cache (storeInCache).
func (s *Service) dispatch(ctx context.Context, ext provider.Extractor, opts provider.ExtractOptions, jobs []*job, rows []Result, done []bool, extras [][]provider.Link, progress func(delivered int)) {
	timeout := s.d.Config.Web.ExtractTimeout
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		pctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	urls := make([]string, len(jobs))
	for k, j := range jobs {
		urls[k] = j.u.Href
	}
	began := s.d.Now()
	var mu sync.Mutex
	pages := make([]provider.Page, len(jobs))
	got := make([]bool, len(jobs))
	delivered := 0
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		// Reports leave outside mu (a slow reporter must not hold up the rows),
		// one at a time and never going backwards.
		var progMu sync.Mutex
		reported := 0
		emit := func(k int, p provider.Page) {
			mu.Lock()
			fresh := k >= 0 && k < len(pages) && !got[k]
			if fresh {
				pages[k], got[k] = p, true
				delivered++
			}
			n := delivered
			mu.Unlock()
			if fresh {
				progMu.Lock()
				if n > reported {
					reported = n
					progress(n)
				}
				progMu.Unlock()
			}
		}
		if oe, ok := ext.(provider.OptionsExtractor); ok {
			oe.ExtractWith(pctx, urls, opts, emit)
		} else {
			ext.Extract(pctx, urls, emit)
		}
	}()
	select {
	case <-finished:
	case <-pctx.Done():
		// A well-behaved provider stops promptly once its ctx ends; wait a
		// moment for it, then report whatever it has not emitted.
		select {
		case <-finished:
		case <-time.After(extractGrace):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for k, j := range jobs {
		p, ok := pages[k], got[k]
		// A page that failed on its own (404, unsupported type, …) keeps its
		// reason; only unfinished pages and failures caused by the cut-off
		// context are reported as interrupted / extract_timeout.
		cutOff := !ok || (p.Err != nil && (errors.Is(p.Err, context.Canceled) || errors.Is(p.Err, context.DeadlineExceeded)))
		switch {
		case ctx.Err() != nil && cutOff:
			rows[j.idx] = errRow(j.u.Href, interrupted(j.u.Href))
		case pctx.Err() != nil && cutOff:
			rows[j.idx] = errRow(j.u.Href, reason.Newf(reason.ExtractTimeout, "",
				"The %s backend did not finish %s within web.extract_timeout (%.0f s; %.1f s elapsed; pages it finished within a %.0f s grace after the timeout are kept). Raise web.extract_timeout or try again.",
				ext.Name(), j.u.Href, timeout.Seconds(), s.d.Now().Sub(began).Seconds(), extractGrace.Seconds()))
		case !ok:
			rows[j.idx] = errRow(j.u.Href, reason.Newf(reason.NoResultForURL, "", "The %s backend returned nothing for this URL.", ext.Name()))
		case p.Err != nil:
			e := reason.As(p.Err)
			if e == nil {
				e = reason.Wrap(reason.ProviderError, "", p.Err.Error(), p.Err)
			}
			rows[j.idx] = errRow(j.u.Href, e)
			// A redirect hop refused by the website policy (egress.Decide)
			// carries its block: the row says which rule stopped it.
			var b *policy.Block
			if errors.As(p.Err, &b) {
				rows[j.idx].BlockedByPolicy = b
			}
		default:
			final := orURL(p.FinalURL, j.u.Href)
			if bad, ok := s.checkFinal(ctx, j, final); !ok {
				rows[j.idx] = bad
				break
			}
			rows[j.idx] = Result{URL: j.u.Href, Title: p.Title, Content: p.Content, Meta: &Meta{
				Provider: ext.Name(), FinalURL: final, Notes: p.Notes, ServedBy: servedBy(p, ext.Name()),
				PageMeta: p.Meta, Rendered: p.Rendered, RenderUnavailable: p.RenderUnavailable, RenderDiscarded: p.RenderDiscarded,
			}}
			if p.Rendered || p.RenderDiscarded != "" {
				rows[j.idx].Meta.RenderMS = max(p.RenderTime.Milliseconds(), 1)
			}
			if p.LinksTotal > len(p.Links) {
				rows[j.idx].Meta.LinksTotal = p.LinksTotal
			}
			extras[j.idx] = p.Links
			s.storeInCache(ctx, j, p, ext.Name(), final, began)
		}
		done[j.idx] = true
	}
}

// storeInCache is the cache write (spec §A3 step 7, §A9.2) of one delivered
// page p of backend name: stored under (url, format, provider) with its
// final URL unless the URL or the final URL has a non-public address, the
// backend said not to cache (p.NoCache), a keyless vendor other than the
// backend served it, or it has no content. A failed write is logged, never
// a row's error. FetchedAt is began, when the fetch began: a slow fetch never
// passes for newer than one that started after it.
func (s *Service) storeInCache(ctx context.Context, j *job, p provider.Page, name, final string, began time.Time) {
	if s.d.Cache == nil || j.privateSeen || p.NoCache || servedBy(p, name) != "" || strings.TrimSpace(p.Content) == "" || !s.publicFinal(ctx, j, final) {
		return
	}
	format := Format
	if p.Rendered {
		format = FormatRendered
	}
	if err := s.d.Cache.Store(ctx, cacheURL(j.u.Href, format), cache.Entry{URL: cacheURL(j.u.Href, format), FinalURL: cacheURL(final, format), Title: p.Title, Content: p.Content, FetchedAt: began, Extra: encodeExtra(p)}, format, name); err != nil {
		s.d.Logger.Warn("web_extract cache write failed", "url", j.u.Href, "err", err)
	}
}
