package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/gatehouse-dev/gatehouse/internal/safetext"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// Search limits (spec §A1, §A2).
const (
	DefaultSearchLimit = 5
	MaxSearchLimit     = 100
)

// SearchRequest is one web_search call (spec §A1).
type SearchRequest struct {
	// Query is passed to the backend untouched (site:, filetype:, quotes, -term).
	Query string `json:"query" jsonschema:"the search query; backend operators such as site:, filetype:, intitle:, -term and quoted phrases are passed through"`
	// Limit is the number of results wanted: int() then clamped to [1, 100];
	// anything non-numeric means 5 (spec §A2 step 1). Vendors are asked for at
	// most 20.
	Limit any `json:"limit,omitempty" jsonschema:"number of results, 1-100 (default 5)"`
	// Backend, when set, selects the search backend for this call only
	// (resolved as strictly as web.search_backend).
	Backend string `json:"-"`
}

// UnsafeURL flags a result URL Gatehouse would refuse to fetch: it carries a
// credential (secret_in_url, sensitive_query_param, credentials_in_url; the
// row's url then has its query and fragment cut, and like every row URL is
// passed through urlsafe.Redact, so a key in the host or path is removed too) or points at a private or
// metadata address (ssrf_private, ssrf_metadata; judged without DNS), or is
// not an http(s) URL (unsupported_scheme, invalid_url).
type UnsafeURL struct {
	Reason  reason.Code `json:"reason"`
	Message string      `json:"message"`
}

// SearchRow is one result: the spec's {title, url, description, position}
// (position 1-based) plus unsafe_url when the URL is flagged.
type SearchRow struct {
	Title       string     `json:"title"`
	URL         string     `json:"url"`
	Description string     `json:"description"`
	Position    int        `json:"position"`
	UnsafeURL   *UnsafeURL `json:"unsafe_url,omitempty"`
}

// SearchData is the spec's data object.
type SearchData struct {
	Web []SearchRow `json:"web"`
}

// SearchMeta is the provenance of a search result.
type SearchMeta struct {
	// Provider is the backend the call resolved to ("keyless" = the keyless ring).
	Provider string `json:"provider"`
	// Cached reports a hit in the in-process search memo (spec §A9.1).
	Cached bool `json:"cached"`
	// ServedBy names the keyless vendor that answered when it is not Provider.
	ServedBy string `json:"served_by,omitempty"`
	// RescuedFrom and BackendError are set when Provider failed and the
	// keyless ring answered instead (spec §A5.5); such results are never memoised.
	RescuedFrom  string `json:"rescued_from,omitempty"`
	BackendError string `json:"backend_error,omitempty"`
	// AutoSelected is "keyless" when nobody chose the backend: no search
	// backend is configured and no vendor key is set, so autodetection
	// (spec §A4.2) sent the query to the keyless free-tier ring, and
	// ServedBy names the third party that got it. Notice then says so in
	// a sentence, with the two ways to change it (a configured backend,
	// or web.auto_keyless_search: false). Both are omitted otherwise.
	//
	// A failed search that was auto-selected the same way says so too: its
	// response carries meta with Provider, AutoSelected, Notice and Tried
	// (the third parties the query was routed to, in ring order), beside
	// error and reason.
	AutoSelected string   `json:"auto_selected,omitempty"`
	Notice       string   `json:"notice,omitempty"`
	Tried        []string `json:"tried,omitempty"`
}

// SearchResponse is the web_search tool result: {"success": true, "data":
// {"web": [...]}, "meta": {...}} or {"success": false, "error", "reason"}.
type SearchResponse struct {
	Success bool        `json:"success"`
	Data    *SearchData `json:"data,omitempty"`
	Meta    *SearchMeta `json:"meta,omitempty"`
	Error   string      `json:"error,omitempty"`
	Reason  reason.Code `json:"reason,omitempty"`
}

// ClampSearchLimit applies spec §A2 step 1: int(limit) (floats truncate,
// numeric strings parse, booleans count as 1/0), then clamp to [1, 100];
// anything else, including nil and "x", is 5.
func ClampSearchLimit(v any) int {
	n := DefaultSearchLimit
	switch x := v.(type) {
	case int:
		n = x
	case int64:
		n = int(max(min(x, math.MaxInt32), math.MinInt32))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return DefaultSearchLimit
		}
		n = int(max(min(math.Trunc(x), math.MaxInt32), math.MinInt32))
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return ClampSearchLimit(i)
		}
		if f, err := x.Float64(); err == nil {
			return ClampSearchLimit(f)
		}
		return DefaultSearchLimit
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return DefaultSearchLimit
		}
		return ClampSearchLimit(i)
	case bool:
		n = 0
		if x {
			n = 1
		}
	default:
		return DefaultSearchLimit
	}
	return min(max(n, 1), MaxSearchLimit)
}

func searchFail(e *reason.Error) *SearchResponse {
	return &SearchResponse{Error: e.Message, Reason: e.Code}
}

// QueryFingerprint is what logs record instead of a query: the first 12 hex
// of its sha256 (spec §A2 step 9).
func QueryFingerprint(q string) string {
	h := sha256.Sum256([]byte(q))
	return hex.EncodeToString(h[:])[:12]
}

// Search runs one web_search call in spec §A2 order: clamp the limit, refuse
// when interrupted or the query is blank, resolve the backend strictly, then
// the memoised, single-flight call (only successful, non-rescued answers are
// memoised, keyed on provider, normalised query and bucketed limit), slice
// to the caller's limit and flag unsafe URLs. It never returns a Go error.
func (s *Service) Search(ctx context.Context, req SearchRequest) *SearchResponse {
	start := s.d.Now()
	limit := ClampSearchLimit(req.Limit)
	resp := s.search(ctx, req, limit)
	s.writeSearchDebug(start, QueryFingerprint(req.Query), limit, resp)
	return resp
}

func (s *Service) search(ctx context.Context, req SearchRequest, limit int) *SearchResponse {
	if ctx.Err() != nil {
		return searchFail(reason.New(reason.Interrupted, "", "Interrupted: the call was cancelled before the search ran."))
	}
	query := req.Query
	if strings.TrimSpace(query) == "" {
		return searchFail(reason.New(reason.EmptyQuery, "", "The search query is empty; pass a non-empty query."))
	}
	fp := QueryFingerprint(query)
	// A credential-shaped token (spec §A7 prefixes) in a query would be sent
	// to a third-party vendor and kept in its logs: refused, like a secret in
	// a URL, before any backend is involved.
	if tok, ok := urlsafe.MatchPrefix(query); ok && tok != "" {
		s.d.Logger.Info("web_search refused", "query_sha256", fp, "reason", string(reason.SecretInQuery))
		return searchFail(reason.New(reason.SecretInQuery, reason.GateSecret,
			"Blocked: the query contains what appears to be an API key or token. Secrets must not be sent to search vendors; remove it from the query."))
	}
	res, perr := s.resolve(provider.CapSearch, req.Backend)
	if perr != nil {
		return searchFail(perr)
	}
	var out *provider.SearchOutcome
	var hit bool
	var err error
	call := func(ctx context.Context, bucket int) (any, bool, error) {
		o, err := s.d.Registry.Search(ctx, res, query, bucket)
		if err != nil {
			return o, false, err // o names the vendors tried (keyless)
		}
		return o, !o.Rescued(), nil
	}
	var v any
	if s.d.Memo != nil {
		v, hit, err = s.d.Memo.Do(ctx, res.Name, query, limit, call)
	} else {
		v, _, err = call(ctx, limit)
	}
	if err != nil {
		e := reason.As(err)
		if e == nil {
			e = reason.Wrap(reason.ProviderError, "", "Error searching web: "+err.Error(), err)
		}
		if ctx.Err() != nil {
			e = reason.New(reason.Interrupted, "", "Interrupted: the call was cancelled while searching.")
		}
		s.d.Logger.Info("web_search failed", "provider", res.Name, "query_sha256", fp, "reason", string(e.Code))
		resp := searchFail(redactQuery(e, query, fp))
		if res.AutoKeyless() {
			// Nobody chose the third party the query went to: a failure
			// says so as a success does (issue 16 item 12, breaker7 D8).
			var tried []string
			if o, ok := v.(*provider.SearchOutcome); ok && o != nil {
				tried = o.Tried
			}
			resp.Meta = &SearchMeta{Provider: res.Name, AutoSelected: string(provider.ModeKeyless),
				Notice: provider.AutoKeylessFailedNotice(tried), Tried: tried}
		}
		return resp
	}
	out, _ = v.(*provider.SearchOutcome)
	if out == nil {
		return searchFail(reason.New(reason.ProviderError, "", "The search backend returned nothing."))
	}
	n := min(limit, len(out.Rows))
	rows := make([]SearchRow, 0, n)
	for i := range n {
		r := out.Rows[i]
		row := SearchRow{
			Title:       safetext.Cap(safetext.Line(r.Title), MaxTitleChars),
			URL:         r.URL,
			Description: safetext.Cap(safetext.Line(r.Description), MaxMetaChars),
			Position:    i + 1,
		}
		s.flagURL(&row)
		// URLs are redacted always, title and description (page content)
		// while security.redact_secrets is on, as extract content is.
		row.URL = urlsafe.Redact(row.URL)
		if s.d.Config.Security.RedactSecrets {
			row.Title, row.Description = urlsafe.Redact(row.Title), urlsafe.Redact(row.Description)
		}
		rows = append(rows, row)
	}
	s.d.Logger.Debug("web_search", "provider", res.Name, "query_sha256", fp, "rows", len(rows), "cached", hit,
		"served_by", out.ServedBy, "rescued_from", out.RescuedFrom)
	meta := &SearchMeta{
		Provider: res.Name, Cached: hit, ServedBy: out.ServedBy, RescuedFrom: out.RescuedFrom, BackendError: out.BackendError,
	}
	if res.AutoKeyless() {
		meta.AutoSelected, meta.Notice = string(provider.ModeKeyless), provider.AutoKeylessNotice(out.ServedBy)
	}
	return &SearchResponse{Success: true, Data: &SearchData{Web: rows}, Meta: meta}
}

// redactQuery replaces the raw query (and its percent-encoded form) in an
// error message by its fingerprint (spec §A2 step 9).
func redactQuery(e *reason.Error, q, fp string) *reason.Error {
	msg := e.Message
	tag := "[query sha256=" + fp + "]"
	for _, form := range []string{q, urlQueryEscape(q), strings.ReplaceAll(urlQueryEscape(q), "+", "%20")} {
		if len(form) >= 3 {
			msg = strings.ReplaceAll(msg, form, tag)
		}
	}
	if msg == e.Message {
		return e
	}
	c := *e
	c.Message = msg
	return &c
}

// flagURL marks a row whose URL Gatehouse would refuse (see UnsafeURL).
func (s *Service) flagURL(row *SearchRow) {
	raw := strings.TrimSpace(row.URL)
	if e := urlsafe.CheckLength(raw); e != nil {
		row.URL = urlsafe.Abbrev(gate.WithoutQuery(raw))
		row.UnsafeURL = &UnsafeURL{Reason: e.Code, Message: e.Message}
		return
	}
	u, perr := urlsafe.Parse(raw)
	if e := urlsafe.CheckSecrets(raw, u, true); e != nil {
		row.URL = gate.WithoutQuery(raw)
		row.UnsafeURL = &UnsafeURL{Reason: e.Code, Message: e.Message}
		return
	}
	if perr != nil {
		row.UnsafeURL = &UnsafeURL{Reason: perr.Code, Message: perr.Message}
		return
	}
	if e := s.d.Guard.CheckStatic(u); e != nil {
		row.UnsafeURL = &UnsafeURL{Reason: e.Code, Message: e.Message}
		return
	}
	// A host name that can only be local (localhost, *.local, a single
	// label) is flagged by name; other names are judged at fetch time, with DNS.
	if u.Addr == (netip.Addr{}) && urlsafe.IsLocalDevHost(u.Host) && !s.d.Config.Security.AllowPrivateURLs {
		row.UnsafeURL = &UnsafeURL{Reason: reason.SSRFPrivate,
			Message: "The result points at a local or intranet host name (" + u.Host + "); web_extract refuses private targets."}
	}
}

// SearchAvailable reports whether a search backend resolves with the current
// configuration (no network): nil, or the resolution error naming the fix.
// web_search is listed over MCP only when it is nil.
func (s *Service) SearchAvailable() *reason.Error {
	_, err := s.resolve(provider.CapSearch, "")
	return err
}

// Registry returns the provider registry (resolution, backends).
func (s *Service) Registry() *provider.Registry { return s.d.Registry }
