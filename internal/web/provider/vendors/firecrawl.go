package vendors

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// FirecrawlCloud is Firecrawl's API (docs.firecrawl.dev, v2).
const FirecrawlCloud = "https://api.firecrawl.dev"

// Firecrawl timeouts (spec §A11): 60 s per scraped URL; waitFor 3000 ms.
const (
	FirecrawlScrapeTimeout = 60 * time.Second
	FirecrawlSearchTimeout = 60 * time.Second
	FirecrawlWaitMS        = 3000
)

// Firecrawl is a client of Firecrawl's v2 API: POST /v2/search and POST
// /v2/scrape, with "Authorization: Bearer <key>" when a key is set. Without a
// key it is the keyless cloud tier (no Authorization header, spec §A5.1) or a
// self-hosted instance (FIRECRAWL_API_URL).
type Firecrawl struct {
	a      api
	name   string
	waitMS int
}

// NewFirecrawl returns a Firecrawl client. o.Base "" means the cloud API.
// waitMS < 0 means the default (FIRECRAWL_WAIT_MS, spec §A11).
func NewFirecrawl(o Options, waitMS int) *Firecrawl {
	if waitMS < 0 {
		waitMS = FirecrawlWaitMS
	}
	return &Firecrawl{name: "firecrawl", waitMS: waitMS, a: api{
		vendor: "firecrawl", label: "Firecrawl", base: strings.TrimRight(orStr(o.Base, FirecrawlCloud), "/"),
		key: o.Key, keyEnv: "FIRECRAWL_API_KEY", client: o.Client, auth: bearer,
	}}
}

// Name returns "firecrawl".
func (f *Firecrawl) Name() string { return f.name }

// Search calls POST /v2/search {query, limit}; the rows are read from
// data.web (v2), or data / data.results / web / results (older shapes, spec §A11).
func (f *Firecrawl) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, FirecrawlSearchTimeout)
	defer cancel()
	var raw map[string]json.RawMessage
	if err := f.a.json(ctx, request{method: http.MethodPost, path: "/v2/search",
		body: map[string]any{"query": query, "limit": clampLimit(limit)}}, &raw); err != nil {
		return nil, err
	}
	if err := envelopeError(&f.a, raw); err != nil {
		return nil, err
	}
	var list []fcRow
	for _, path := range [][]string{{"data", "web"}, {"data"}, {"data", "results"}, {"web"}, {"results"}} {
		if l, ok := dig(raw, path); ok {
			list = l
			break
		}
	}
	rows := make([]provider.Row, 0, len(list))
	for _, r := range list {
		rows = append(rows, provider.Row{Title: r.Title, URL: orStr(r.URL, r.Metadata.SourceURL), Description: orStr(r.Description, r.Snippet)})
	}
	return numbered(rows), nil
}

type fcRow struct {
	URL         string `json:"url"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Snippet     string `json:"snippet"`
	Metadata    struct {
		SourceURL string `json:"sourceURL"`
	} `json:"metadata"`
}

// dig follows path through nested objects and decodes a list of rows there.
func dig(raw map[string]json.RawMessage, path []string) ([]fcRow, bool) {
	cur := raw
	for i, k := range path {
		v, ok := cur[k]
		if !ok {
			return nil, false
		}
		if i == len(path)-1 {
			var l []fcRow
			if json.Unmarshal(v, &l) != nil {
				return nil, false
			}
			return l, true
		}
		cur = nil
		if json.Unmarshal(v, &cur) != nil {
			return nil, false
		}
	}
	return nil, false
}

// envelopeError turns a 200 answer with {"success": false, "error": …} into a
// vendor error.
func envelopeError(a *api, raw map[string]json.RawMessage) error {
	var ok *bool
	if v, has := raw["success"]; has {
		_ = json.Unmarshal(v, &ok)
	}
	var msg string
	if v, has := raw["error"]; has {
		if json.Unmarshal(v, &msg) != nil {
			msg = string(v)
		}
	}
	if (ok != nil && !*ok) || msg != "" {
		if msg == "" {
			msg = "success: false"
		}
		code := reason.VendorError
		if provider.RateLimitish(msg) {
			code = reason.VendorRateLimited
		} else if capMarked(msg) {
			code = reason.VendorQuota
		}
		return reason.New(code, "", reason.QuoteRemote(a.label+" API reported an error.", scrub(msg, a.key)))
	}
	return nil
}

// Extract scrapes each URL with POST /v2/scrape {url, formats:["markdown"],
// waitFor} (at most 5 at once, 60 s each). The final URL is metadata.url
// (after redirects), else metadata.sourceURL, else the requested URL; a page
// status ≥ 400 in metadata.statusCode is that page's http_status error.
func (f *Firecrawl) Extract(ctx context.Context, urls []string, emit func(int, provider.Page)) {
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			emit(i, f.scrape(ctx, u))
		}()
	}
	wg.Wait()
}

func (f *Firecrawl) scrape(ctx context.Context, u string) provider.Page {
	ctx, cancel := withTimeout(ctx, FirecrawlScrapeTimeout)
	defer cancel()
	body := map[string]any{"url": u, "formats": []string{"markdown"}}
	if f.waitMS > 0 {
		body["waitFor"] = f.waitMS
	}
	var raw map[string]json.RawMessage
	if err := f.a.json(ctx, request{method: http.MethodPost, path: "/v2/scrape", body: body}, &raw); err != nil {
		return provider.Page{URL: u, Err: err}
	}
	if err := envelopeError(&f.a, raw); err != nil {
		return provider.Page{URL: u, Err: err}
	}
	var d struct {
		Markdown string `json:"markdown"`
		HTML     string `json:"html"`
		Metadata struct {
			Title      string `json:"title"`
			SourceURL  string `json:"sourceURL"`
			URL        string `json:"url"`
			StatusCode int    `json:"statusCode"`
			Error      string `json:"error"`
		} `json:"metadata"`
	}
	if v, ok := raw["data"]; !ok || json.Unmarshal(v, &d) != nil {
		return provider.Page{URL: u, Err: reason.Newf(reason.VendorBadResponse, "", "Firecrawl API answer has no data object for %s.", u)}
	}
	final := orStr(d.Metadata.URL, orStr(d.Metadata.SourceURL, u))
	if d.Metadata.StatusCode >= 400 {
		return provider.Page{URL: u, FinalURL: final, Err: reason.Newf(reason.HTTPStatus, "",
			"Firecrawl fetched %s but the site answered HTTP %d%s.", u, d.Metadata.StatusCode, suffix(d.Metadata.Error))}
	}
	if strings.TrimSpace(d.Markdown) == "" && strings.TrimSpace(d.HTML) != "" {
		// Some Firecrawl versions answer with html only: it goes through
		// the same conversion and hidden-text filter as a fetched page,
		// never to the agent raw (breaker5 D18).
		md, title, err := htmlPage("Firecrawl", d.HTML, final)
		if err != nil {
			return provider.Page{URL: u, FinalURL: final, Err: err}
		}
		return provider.Page{URL: u, FinalURL: final, Title: orStr(d.Metadata.Title, title), Content: md}
	}
	if strings.TrimSpace(d.Markdown) == "" {
		return provider.Page{URL: u, FinalURL: final, Err: reason.Newf(reason.EmptyContent, "", "Firecrawl returned no content for %s.", u)}
	}
	return asMarkdown("Firecrawl", final, provider.Page{URL: u, FinalURL: final, Title: d.Metadata.Title, Content: d.Markdown})
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
