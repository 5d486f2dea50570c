package vendors

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// Parallel endpoints: the keyed Search/Extract API (docs.parallel.ai) and the
// keyless Search MCP server (spec §A5.1).
const (
	ParallelCloud      = "https://api.parallel.ai"
	ParallelKeylessMCP = "https://search.parallel.ai/mcp"
	ParallelTimeout    = 60 * time.Second
)

// Parallel is a client of Parallel's Search and Extract API (v1): POST
// /v1/search and POST /v1/extract with the key in x-api-key.
type Parallel struct {
	a    api
	mode string
}

// NewParallel returns a keyed Parallel client. mode is PARALLEL_SEARCH_MODE:
// turbo, fast, basic or advanced (the default); the legacy one-shot means
// basic and agentic advanced (spec §A11).
func NewParallel(o Options, mode string) *Parallel {
	switch m := strings.ToLower(strings.TrimSpace(mode)); m {
	case "turbo", "fast", "basic":
		mode = m
	case "one-shot":
		mode = "basic"
	default:
		mode = "advanced"
	}
	return &Parallel{mode: mode, a: api{vendor: "parallel", label: "Parallel", base: strings.TrimRight(orStr(o.Base, ParallelCloud), "/"),
		key: o.Key, keyEnv: "PARALLEL_API_KEY", client: o.Client,
		auth: func(h http.Header, k string) { h.Set("x-api-key", k) }}}
}

// Name returns "parallel".
func (p *Parallel) Name() string { return "parallel" }

type parallelResult struct {
	URL         string   `json:"url"`
	Title       string   `json:"title"`
	Excerpts    []string `json:"excerpts"`
	FullContent string   `json:"full_content"`
	Content     string   `json:"content"`
}

type parallelError struct {
	URL        string `json:"url"`
	ErrorType  string `json:"error_type"`
	HTTPStatus int    `json:"http_status_code"`
	Content    string `json:"content"`
}

// Search calls POST /v1/search {objective, search_queries: [query], mode,
// advanced_settings: {max_results}}; the description is the excerpts joined
// by a space.
func (p *Parallel) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, ParallelTimeout)
	defer cancel()
	var out struct {
		Results *[]parallelResult `json:"results"`
	}
	if err := p.a.json(ctx, request{method: http.MethodPost, path: "/v1/search", body: map[string]any{
		"objective": query, "search_queries": []string{query}, "mode": p.mode,
		"advanced_settings": map[string]any{"max_results": clampLimit(limit)},
	}}, &out); err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, reason.New(reason.VendorBadResponse, "", "Parallel API answer has no results list.")
	}
	return parallelRows(*out.Results, limit), nil
}

func parallelRows(rs []parallelResult, limit int) []provider.Row {
	var rows []provider.Row
	for _, r := range rs {
		rows = append(rows, provider.Row{URL: r.URL, Title: r.Title, Description: strings.Join(r.Excerpts, " ")})
	}
	rows = numbered(rows)
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	return rows
}

// Extract calls POST /v1/extract {urls, objective, excerpts: false,
// full_content: true}; errors[] become error rows, and a URL missing from
// both lists gets a "no content returned" row.
func (p *Parallel) Extract(ctx context.Context, urls []string, emit func(int, provider.Page)) {
	ctx, cancel := withTimeout(ctx, ParallelTimeout)
	defer cancel()
	var out parallelExtract
	err := p.a.json(ctx, request{method: http.MethodPost, path: "/v1/extract", body: map[string]any{
		"urls": urls, "objective": "Full page content", "excerpts": false, "full_content": true,
	}}, &out)
	emitParallel(urls, out, err, "Parallel", emit)
}

type parallelExtract struct {
	Results []parallelResult `json:"results"`
	Errors  []parallelError  `json:"errors"`
}

func emitParallel(urls []string, out parallelExtract, err error, label string, emit func(int, provider.Page)) {
	done := make([]bool, len(urls))
	put := func(u string, pg provider.Page) {
		for i, x := range urls {
			if !done[i] && sameURL(x, u) {
				pg.URL, done[i] = x, true
				emit(i, pg)
				return
			}
		}
	}
	if err == nil {
		for _, e := range out.Errors {
			code := reason.ProviderError
			if e.HTTPStatus >= 400 {
				code = reason.HTTPStatus
			}
			put(e.URL, provider.Page{Err: reason.Newf(code, "", "%s could not fetch this URL (%s%s).", label, orStr(e.ErrorType, "error"), statusSuffix(e.HTTPStatus))})
		}
		for _, r := range out.Results {
			c := orStr(r.FullContent, orStr(r.Content, strings.Join(r.Excerpts, "\n\n")))
			if strings.TrimSpace(c) == "" {
				put(r.URL, provider.Page{Err: reason.Newf(reason.EmptyContent, "", "%s returned no content for this URL.", label)})
				continue
			}
			put(r.URL, asMarkdown(label, r.URL, provider.Page{Title: r.Title, Content: c}))
		}
	}
	for i, u := range urls {
		if done[i] {
			continue
		}
		if err != nil {
			emit(i, provider.Page{URL: u, Err: err})
		} else {
			emit(i, provider.Page{URL: u, Err: reason.Newf(reason.NoResultForURL, "", "%s: no content returned for this URL.", label)})
		}
	}
}

func statusSuffix(s int) string {
	if s <= 0 {
		return ""
	}
	return ", HTTP " + itoa(s)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// ParallelKeyless is Parallel's keyless Search MCP (spec §A5.1): tools
// web_search {objective, search_queries, session_id} and web_fetch {urls,
// objective, session_id}; session_id is one random id per process.
type ParallelKeyless struct {
	m       mcpTool
	session string
}

// NewParallelKeyless returns the keyless Parallel client; o.Base overrides the endpoint.
func NewParallelKeyless(o Options) *ParallelKeyless {
	return &ParallelKeyless{session: newSessionID(), m: mcpTool{label: "Parallel", keyEnv: "PARALLEL_API_KEY",
		endpoint: orStr(o.Base, ParallelKeylessMCP), client: o.Client}}
}

// Name returns "parallel".
func (p *ParallelKeyless) Name() string { return "parallel" }

// decodeTool reads a tool answer: structured content if present, else the
// text content as JSON.
func decodeTool(label, text string, structured json.RawMessage, out any) error {
	src := []byte(structured)
	if len(src) == 0 {
		src = []byte(strings.TrimSpace(text))
	}
	if err := json.Unmarshal(src, out); err != nil {
		return reason.Wrap(reason.VendorBadResponse, "", "Keyless "+label+" answered with content that is not the documented JSON: "+clip(string(src), 200), err)
	}
	return nil
}

// Search calls web_search; the limit is applied client-side (spec §A5.1).
func (p *ParallelKeyless) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	text, st, err := p.m.call(ctx, "web_search", map[string]any{"objective": query, "search_queries": []string{query}, "session_id": p.session})
	if err != nil {
		return nil, err
	}
	var out struct {
		Results *[]parallelResult `json:"results"`
	}
	if err := decodeTool("Parallel", text, st, &out); err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, reason.New(reason.VendorBadResponse, "", "Keyless Parallel answer has no results list.")
	}
	return parallelRows(*out.Results, clampLimit(limit)), nil
}

// Extract calls web_fetch {urls, objective: "Full page content", session_id}.
func (p *ParallelKeyless) Extract(ctx context.Context, urls []string, emit func(int, provider.Page)) {
	text, st, err := p.m.call(ctx, "web_fetch", map[string]any{"urls": urls, "objective": "Full page content", "session_id": p.session})
	var out parallelExtract
	if err == nil {
		err = decodeTool("Parallel", text, st, &out)
	}
	emitParallel(urls, out, err, "Keyless Parallel", emit)
}
