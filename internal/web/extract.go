// Package web implements the web_extract pipeline in the gate order of spec §A3:
//
//	item normalisation → whole-call secret refusal → per-URL SSRF → provider
//	resolution (strict) → website policy → disk cache → provider call under a
//	wall-clock cap → merge in input order → final-URL policy re-check → cache write
//	→ truncate-and-store.
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
func (s *Service) Extract(ctx context.Context, req ExtractRequest) *ExtractResponse {
	start := s.d.Now()
	began := time.Now() // wall clock for deadlines (s.d.Now may be a test clock)
	items := req.URLs
	if len(items) > MaxURLs {
		items = items[:MaxURLs]
	}
	if len(items) == 0 {
		return refusal(reason.New(reason.ContentInaccessible, "",
			"No URLs given; web_extract needs 1 to 5 URL strings (content inaccessible or not found)."))
	}
	rows := make([]Result, len(items))
	done := make([]bool, len(items))
	raws := make([]string, len(items))
	parsed := make([]*urlsafe.URL, len(items))

	// 1. item normalisation; 2. whole-call secret refusal.
	for i, it := range items {
		raw, ok := NormalizeItem(it)
		if !ok {
			rows[i] = errRow("", reason.Newf(reason.InvalidItem, "",
				"item %d is not a URL: it is %s; expected a non-empty URL string or an object carrying a url/href string.", i, itemShape(it)))
			done[i] = true
			continue
		}
		raws[i] = raw
		if e := urlsafe.CheckLength(raw); e != nil {
			rows[i] = errRow(urlsafe.Abbrev(gate.WithoutQuery(raw)), e)
			done[i] = true
			continue
		}
		if e := urlsafe.FindSecret(raw); e != nil {
			return itemRefusal(i, e)
		}
		u, err := urlsafe.Parse(raw)
		if err != nil {
			// An unparseable URL is echoed without its query and fragment:
			// they may carry credentials the secret gate could not judge.
			rows[i] = errRow(gate.WithoutQuery(raw), reason.As(err))
			done[i] = true
			continue
		}
		if e := urlsafe.CheckSecrets(raw, u, true); e != nil {
			return itemRefusal(i, e)
		}
		parsed[i] = u
	}

	// 3. SSRF per URL (DNS lookups in parallel).
	var jobs []*job
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, u := range parsed {
		if u == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			addrs, e := s.d.Guard.Check(ctx, u)
			mu.Lock()
			defer mu.Unlock()
			if e != nil {
				if e.Code == reason.Interrupted || ctx.Err() != nil {
					e = interrupted(u.Href)
				}
				rows[i] = errRow(u.Href, e)
				done[i] = true
				return
			}
			jobs = append(jobs, &job{idx: i, u: u, privateSeen: s.anyNonPublic(addrs, egress.PortOf(u))})
		}()
	}
	wg.Wait()
	if len(jobs) == 0 {
		redactRows(rows, false)
		s.writeDebug(start, raws, rows, nil)
		return &ExtractResponse{Results: rows}
	}
	slices.SortFunc(jobs, func(a, b *job) int { return a.idx - b.idx })

	// 4. provider resolution (strict).
	res, perr := s.resolve(provider.CapExtract, req.Backend)
	if perr != nil {
		return refusal(perr)
	}
	ext, perr := s.d.Registry.Extractor(res)
	if perr != nil {
		return refusal(perr)
	}
	name := ext.Name()

	// 5. website policy, then cache.
	extras := make([][]provider.Link, len(items)) // each success row's links
	var fetch []*job
	for _, j := range jobs {
		if j.privateSeen && name != provider.Direct {
			rows[j.idx], done[j.idx] = errRow(j.u.Href, privateToVendor(name)), true
			continue
		}
		if b := s.d.Policy.CheckURL(j.u); b != nil {
			r := errRow(j.u.Href, reason.New(reason.PolicyBlocked, reason.GatePolicy, b.Message()))
			r.BlockedByPolicy = b
			rows[j.idx], done[j.idx] = r, true
			continue
		}
		if s.d.Cache != nil && !j.privateSeen {
			e, ok, cerr := s.cacheLookup(ctx, j.u.Href, name, cacheFormats(s.renderMode(req, name)), req.MaxAgeS)
			if re := reason.As(cerr); re != nil {
				// The shared state is down: refuse, never serve from a
				// per-replica view of it.
				rows[j.idx], done[j.idx] = errRow(j.u.Href, re), true
				continue
			}
			if ok {
				// The cached page came from e.FinalURL: the blocklist may have
				// gained that host since, and a hit must not skip the check.
				if e.FinalURL != "" && e.FinalURL != j.u.Href {
					if b := s.d.Policy.Check(e.FinalURL); b != nil {
						rows[j.idx], done[j.idx] = redirectPolicyRow(j.u.Href, e.FinalURL, b), true
						continue
					}
				}
				age := int64(s.d.Now().Sub(e.FetchedAt).Round(time.Second).Seconds())
				s.d.Logger.Info("web_extract cache hit", "url", j.u.Href, "provider", name, "age_s", age)
				rows[j.idx] = Result{URL: j.u.Href, Title: e.Title, Content: e.Content, Meta: &Meta{
					Provider: name, Cached: true, AgeS: age, FinalURL: orURL(e.FinalURL, j.u.Href),
				}}
				if x, ok := decodeExtra(e.Extra); ok {
					applyExtra(rows[j.idx].Meta, x)
					extras[j.idx] = x.Links
				}
				done[j.idx] = true
				continue
			}
		}
		fetch = append(fetch, j)
	}

	// 6. dispatch under web.extract_timeout.
	progress := func(int) {}
	if req.Progress != nil {
		finished := 0
		for _, d := range done {
			if d {
				finished++
			}
		}
		req.Progress(finished, len(items))
		progress = func(n int) { req.Progress(finished+n, len(items)) }
	}
	if len(fetch) > 0 {
		s.dispatch(ctx, ext, provider.ExtractOptions{Render: s.renderMode(req, name)}, fetch, rows, done, extras, progress)
		s.rescue(ctx, res, fetch, rows)
	}

	// 9. truncate-and-store on every success row.
	limit := s.d.Config.Web.ExtractCharLimit
	if req.CharLimit != nil {
		limit = config.ClampCharLimit(req.CharLimit)
	}
	store := s.d.Store
	if store != nil && (req.ReadTool != "" || store.Shared != nil) {
		st := *store
		if req.ReadTool != "" {
			st.ReadTool, st.ResourcePrefix = req.ReadTool, req.ResourcePrefix
		}
		st = st.For(ctx) // a shared store keeps the caller's pages under its principal
		store = &st
	}
	var metrics []pageMetric
	if req.IncludeLinks {
		var deadline time.Time // the call's web.extract_timeout deadline
		if t := s.d.Config.Web.ExtractTimeout; t > 0 {
			deadline = began.Add(t)
		}
		s.linkRows(ctx, deadline, rows, done, extras)
	}
	for i := range rows {
		r := &rows[i]
		if !done[i] {
			*r = errRow(orURL(raws[i], ""), interrupted(raws[i]))
			continue
		}
		if !r.OK() || r.Meta == nil {
			continue
		}
		tidyRow(r)
		if s.d.Config.Security.RedactSecrets {
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
		if req.ReadTool == truncate.ReadToolWeb && tr.StoredPath != "" {
			// A client that pages with web_read (MCP) cannot see this
			// disk and must not learn its layout: the store name, which
			// web_read takes, as the footer gives it (issue 16 item 4).
			r.Meta.StoredPath = filepath.Base(tr.StoredPath)
		}
		metrics = append(metrics, pageMetric{URL: r.URL, OriginalChars: tr.OriginalChars, SentChars: tr.ShownChars, Truncated: tr.Truncated, Cached: r.Meta.Cached})
	}
	redactRows(rows, false) // URLs and messages; content was redacted above
	s.writeDebug(start, raws, rows, metrics)
	return &ExtractResponse{Results: rows}
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
// final URL against the website policy, and writes successes to the cache.
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
			format := Format
			if p.Rendered {
				format = FormatRendered
			}
			if s.d.Cache != nil && !j.privateSeen && !p.NoCache && servedBy(p, ext.Name()) == "" && strings.TrimSpace(p.Content) != "" && s.publicFinal(ctx, j, final) {
				// FetchedAt is when the fetch began: a slow fetch never
				// passes for newer than one that started after it.
				if err := s.d.Cache.Store(ctx, cacheURL(j.u.Href, format), cache.Entry{URL: cacheURL(j.u.Href, format), FinalURL: cacheURL(final, format), Title: p.Title, Content: p.Content, FetchedAt: began, Extra: encodeExtra(p)}, format, ext.Name()); err != nil {
					s.d.Logger.Warn("web_extract cache write failed", "url", j.u.Href, "err", err)
				}
			}
		}
		done[j.idx] = true
	}
}
