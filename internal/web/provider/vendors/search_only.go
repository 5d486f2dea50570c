package vendors

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// Search-only vendor endpoints.
const (
	PerplexityCloud = "https://api.perplexity.ai"
	BraveCloud      = "https://api.search.brave.com"
	searchTimeout   = 30 * time.Second
)

// Perplexity is a client of Perplexity's Search API: POST /search {query,
// max_results} with "Authorization: Bearer <key>"; rows from results[]
// {title, url, snippet}.
type Perplexity struct{ a api }

// NewPerplexity returns a Perplexity Search client.
func NewPerplexity(o Options) *Perplexity {
	return &Perplexity{a: api{vendor: "perplexity", label: "Perplexity", base: strings.TrimRight(orStr(o.Base, PerplexityCloud), "/"),
		key: o.Key, keyEnv: "PERPLEXITY_API_KEY", client: o.Client, auth: bearer}}
}

// Name returns "perplexity".
func (p *Perplexity) Name() string { return "perplexity" }

// Search runs one query.
func (p *Perplexity) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, searchTimeout)
	defer cancel()
	var out struct {
		Results *[]struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Snippet string `json:"snippet"`
		} `json:"results"`
	}
	if err := p.a.json(ctx, request{method: http.MethodPost, path: "/search", body: map[string]any{"query": query, "max_results": clampLimit(limit)}}, &out); err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, reason.New(reason.VendorBadResponse, "", "Perplexity API answer has no results list.")
	}
	var rows []provider.Row
	for _, r := range *out.Results {
		rows = append(rows, provider.Row{Title: r.Title, URL: r.URL, Description: r.Snippet})
	}
	return numbered(rows), nil
}

// SearXNG is a client of a self-hosted SearXNG instance's JSON API: GET
// /search?q=…&format=json (the instance must enable the json format); rows
// from results[] {url, title, content}.
type SearXNG struct{ a api }

// NewSearXNG returns a SearXNG client for o.Base (SEARXNG_URL, required).
func NewSearXNG(o Options) *SearXNG {
	return &SearXNG{a: api{vendor: "searxng", label: "SearXNG", base: strings.TrimRight(o.Base, "/"), keyEnv: "SEARXNG_URL", client: o.Client}}
}

// Name returns "searxng".
func (s *SearXNG) Name() string { return "searxng" }

// Search runs one query; SearXNG has no result-count parameter, so the limit
// is applied here.
func (s *SearXNG) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, searchTimeout)
	defer cancel()
	var out struct {
		Results *[]struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	q := url.Values{"q": {query}, "format": {"json"}}
	if err := s.a.json(ctx, request{method: http.MethodGet, path: "/search?" + q.Encode()}, &out); err != nil {
		if reason.Of(err) == reason.VendorAuth {
			return nil, reason.Wrap(reason.VendorAuth, "", err.Error()+" (a 403 from SearXNG usually means the json format is not enabled: add json to search.formats in its settings.yml)", err)
		}
		return nil, err
	}
	if out.Results == nil {
		return nil, reason.New(reason.VendorBadResponse, "", "SearXNG answer has no results list (is format=json enabled?).")
	}
	var rows []provider.Row
	for _, r := range *out.Results {
		rows = append(rows, provider.Row{Title: r.Title, URL: r.URL, Description: r.Content})
	}
	rows = numbered(rows)
	if n := clampLimit(limit); len(rows) > n {
		rows = rows[:n]
	}
	return rows, nil
}

// Brave is a client of the Brave Search API: GET /res/v1/web/search?q=…&count=…
// with the key in X-Subscription-Token; rows from web.results[] {title, url,
// description}.
type Brave struct{ a api }

// NewBrave returns a Brave Search client.
func NewBrave(o Options) *Brave {
	return &Brave{a: api{vendor: "brave-free", label: "Brave Search", base: strings.TrimRight(orStr(o.Base, BraveCloud), "/"),
		key: o.Key, keyEnv: "BRAVE_SEARCH_API_KEY", client: o.Client,
		auth: func(h http.Header, k string) { h.Set("X-Subscription-Token", k) }}}
}

// Name returns "brave-free".
func (b *Brave) Name() string { return "brave-free" }

// Search runs one query (count ≤ 20).
func (b *Brave) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, searchTimeout)
	defer cancel()
	var out struct {
		Web *struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
		Type string `json:"type"`
	}
	q := url.Values{"q": {query}, "count": {itoa(clampLimit(limit))}}
	if err := b.a.json(ctx, request{method: http.MethodGet, path: "/res/v1/web/search?" + q.Encode()}, &out); err != nil {
		return nil, err
	}
	var rows []provider.Row
	if out.Web != nil {
		for _, r := range out.Web.Results {
			rows = append(rows, provider.Row{Title: r.Title, URL: r.URL, Description: stripTags(r.Description)})
		}
	} else if out.Type != "search" {
		return nil, reason.New(reason.VendorBadResponse, "", "Brave Search answer has no web results object.")
	}
	return numbered(rows), nil
}

// stripTags removes the <strong> highlighting Brave puts in descriptions.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
