package vendors

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// TavilyCloud is Tavily's API (docs.tavily.com).
const TavilyCloud = "https://api.tavily.com"

// TavilyTimeout bounds one Tavily call (spec §A11: 60 s).
const TavilyTimeout = 60 * time.Second

// Tavily is a client of Tavily's API: POST /search and POST /extract with
// "Authorization: Bearer <key>" (TAVILY_BASE_URL overrides the base).
type Tavily struct{ a api }

// NewTavily returns a Tavily client.
func NewTavily(o Options) *Tavily {
	return &Tavily{a: api{vendor: "tavily", label: "Tavily", base: strings.TrimRight(orStr(o.Base, TavilyCloud), "/"),
		key: o.Key, keyEnv: "TAVILY_API_KEY", client: o.Client, auth: bearer}}
}

// Name returns "tavily".
func (t *Tavily) Name() string { return "tavily" }

// Search calls POST /search {query, max_results ≤ 20, include_raw_content:
// false, include_images: false}; rows come from results[] {title, url, content}.
func (t *Tavily) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, TavilyTimeout)
	defer cancel()
	var out struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
		Detail *struct {
			Error string `json:"error"`
		} `json:"detail"`
	}
	err := t.a.json(ctx, request{method: http.MethodPost, path: "/search", body: map[string]any{
		"query": query, "max_results": clampLimit(limit), "include_raw_content": false, "include_images": false,
	}}, &out)
	if err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, reason.New(reason.VendorBadResponse, "", "Tavily API answer has no results list.")
	}
	rows := make([]provider.Row, 0, len(out.Results))
	for _, r := range out.Results {
		rows = append(rows, provider.Row{Title: r.Title, URL: r.URL, Description: r.Content})
	}
	return numbered(rows), nil
}

// Extract calls POST /extract {urls, include_images: false} once for the
// batch; results[] {url, raw_content} become pages, failed_results[] {url,
// error} become error rows ("extraction failed" when no error is given).
func (t *Tavily) Extract(ctx context.Context, urls []string, emit func(int, provider.Page)) {
	ctx, cancel := withTimeout(ctx, TavilyTimeout)
	defer cancel()
	var out struct {
		Results []struct {
			URL        string `json:"url"`
			RawContent string `json:"raw_content"`
			Title      string `json:"title"`
		} `json:"results"`
		Failed []struct {
			URL   string `json:"url"`
			Error string `json:"error"`
		} `json:"failed_results"`
	}
	err := t.a.json(ctx, request{method: http.MethodPost, path: "/extract", body: map[string]any{"urls": urls, "include_images": false}}, &out)
	done := make([]bool, len(urls))
	put := func(u string, p provider.Page) {
		for i, x := range urls {
			if !done[i] && sameURL(x, u) {
				p.URL = x
				emit(i, p)
				done[i] = true
				return
			}
		}
	}
	if err == nil {
		for _, r := range out.Results {
			if strings.TrimSpace(r.RawContent) == "" {
				put(r.URL, provider.Page{Err: reason.New(reason.EmptyContent, "", "Tavily returned no content for this URL.")})
				continue
			}
			put(r.URL, asMarkdown("Tavily", r.URL, provider.Page{Title: r.Title, Content: r.RawContent}))
		}
		for _, f := range out.Failed {
			put(f.URL, provider.Page{Err: reason.New(reason.ProviderError, "", "Tavily: "+orStr(scrub(f.Error, t.a.key), "extraction failed"))})
		}
	}
	for i, u := range urls {
		if done[i] {
			continue
		}
		if err != nil {
			emit(i, provider.Page{URL: u, Err: err})
		} else {
			emit(i, provider.Page{URL: u, Err: reason.New(reason.NoResultForURL, "", "Tavily returned nothing for this URL.")})
		}
	}
}

// sameURL compares URLs loosely (a vendor may echo a URL with or without a
// trailing slash).
func sameURL(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}
