package vendors

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// Keenable's API (spec §A5.1, §A11): keyed POST /v1/search and GET
// /v1/fetch?url= with "Authorization: Bearer <key>"; the keyless public tier
// at /v1/search/public and /v1/fetch/public. Every request carries
// X-Keenable-Title naming the client; 30 s timeout.
const (
	KeenableCloud   = "https://api.keenable.ai"
	KeenableTimeout = 30 * time.Second
)

// Keenable is a Keenable client; keyless selects the public endpoints.
type Keenable struct {
	a       api
	keyless bool
}

// NewKeenable returns a Keenable client (keyless: the public endpoints, no key sent).
func NewKeenable(o Options, keyless bool) *Keenable {
	k := o.Key
	if keyless {
		k = ""
	}
	return &Keenable{keyless: keyless, a: api{vendor: "keenable", label: "Keenable", base: strings.TrimRight(orStr(o.Base, KeenableCloud), "/"),
		key: k, keyEnv: "KEENABLE_API_KEY", client: o.Client, auth: bearer,
		header: func(h http.Header) { h.Set("X-Keenable-Title", "gatehouse") }}}
}

// Name returns "keenable".
func (k *Keenable) Name() string { return "keenable" }

func (k *Keenable) path(p string) string {
	if k.keyless {
		return p + "/public"
	}
	return p
}

// Search posts {query, max_results ∈ [1, 20]}; rows come from results[]
// {title, url, description|snippet|content}.
func (k *Keenable) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, KeenableTimeout)
	defer cancel()
	var out struct {
		Results *[]struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
			Snippet     string `json:"snippet"`
			Content     string `json:"content"`
		} `json:"results"`
	}
	if err := k.a.json(ctx, request{method: http.MethodPost, path: k.path("/v1/search"),
		body: map[string]any{"query": query, "max_results": clampLimit(limit)}}, &out); err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, reason.New(reason.VendorBadResponse, "", "Keenable API answer has no results list.")
	}
	var rows []provider.Row
	for _, r := range *out.Results {
		rows = append(rows, provider.Row{URL: r.URL, Title: r.Title, Description: orStr(r.Description, orStr(r.Snippet, r.Content))})
	}
	return numbered(rows), nil
}

// Extract fetches each URL with GET /v1/fetch?url=… (content, markdown or text field).
func (k *Keenable) Extract(ctx context.Context, urls []string, emit func(int, provider.Page)) {
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := withTimeout(ctx, KeenableTimeout)
			defer cancel()
			var out struct {
				URL      string `json:"url"`
				Title    string `json:"title"`
				Content  string `json:"content"`
				Markdown string `json:"markdown"`
				Text     string `json:"text"`
			}
			if err := k.a.json(cctx, request{method: http.MethodGet, path: k.path("/v1/fetch") + "?url=" + url.QueryEscape(u)}, &out); err != nil {
				emit(i, provider.Page{URL: u, Err: err})
				return
			}
			c := orStr(out.Content, orStr(out.Markdown, out.Text))
			if strings.TrimSpace(c) == "" {
				emit(i, provider.Page{URL: u, Err: reason.New(reason.EmptyContent, "", "Keenable returned no content for this URL.")})
				return
			}
			emit(i, asMarkdown("Keenable", orStr(out.URL, u), provider.Page{URL: u, FinalURL: out.URL, Title: out.Title, Content: c}))
		}()
	}
	wg.Wait()
}
