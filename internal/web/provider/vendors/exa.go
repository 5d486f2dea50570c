package vendors

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// Exa endpoints: the keyed REST API (docs.exa.ai) and the keyless hosted MCP
// server (spec §A5.1).
const (
	ExaCloud      = "https://api.exa.ai"
	ExaKeylessMCP = "https://mcp.exa.ai/mcp"
	ExaTimeout    = 60 * time.Second
)

// Exa is a client of Exa's REST API: POST /search and POST /contents with the
// key in the x-api-key header.
type Exa struct{ a api }

// NewExa returns a keyed Exa client.
func NewExa(o Options) *Exa {
	return &Exa{a: api{vendor: "exa", label: "Exa", base: strings.TrimRight(orStr(o.Base, ExaCloud), "/"),
		key: o.Key, keyEnv: "EXA_API_KEY", client: o.Client,
		auth:   func(h http.Header, k string) { h.Set("x-api-key", k) },
		header: func(h http.Header) { h.Set("x-exa-integration", "gatehouse") }}}
}

// Name returns "exa".
func (e *Exa) Name() string { return "exa" }

// Search calls POST /search {query, numResults, contents: {highlights}};
// the description is the highlights joined by a space (else the text).
func (e *Exa) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, ExaTimeout)
	defer cancel()
	var out struct {
		Results *[]struct {
			Title      string   `json:"title"`
			URL        string   `json:"url"`
			Highlights []string `json:"highlights"`
			Summary    string   `json:"summary"`
			Text       string   `json:"text"`
		} `json:"results"`
	}
	if err := e.a.json(ctx, request{method: http.MethodPost, path: "/search", body: map[string]any{
		"query": query, "numResults": clampLimit(limit), "contents": map[string]any{"highlights": true},
	}}, &out); err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, reason.New(reason.VendorBadResponse, "", "Exa API answer has no results list.")
	}
	var rows []provider.Row
	for _, r := range *out.Results {
		d := strings.Join(r.Highlights, " ")
		if d == "" {
			d = orStr(r.Summary, clip(r.Text, 300))
		}
		rows = append(rows, provider.Row{URL: r.URL, Title: r.Title, Description: d})
	}
	return numbered(rows), nil
}

// Extract calls POST /contents {urls, text: true} once for the batch;
// results[] {url, title, text} become pages and statuses[] {id, status:
// "error", error: {tag, httpStatusCode}} become that URL's error row.
func (e *Exa) Extract(ctx context.Context, urls []string, emit func(int, provider.Page)) {
	ctx, cancel := withTimeout(ctx, ExaTimeout)
	defer cancel()
	var out struct {
		Results []struct {
			URL   string `json:"url"`
			ID    string `json:"id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		} `json:"results"`
		Statuses []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Error  *struct {
				Tag            string `json:"tag"`
				HTTPStatusCode int    `json:"httpStatusCode"`
			} `json:"error"`
		} `json:"statuses"`
	}
	err := e.a.json(ctx, request{method: http.MethodPost, path: "/contents", body: map[string]any{"urls": urls, "text": true}}, &out)
	done := make([]bool, len(urls))
	put := func(u string, p provider.Page) {
		for i, x := range urls {
			if !done[i] && sameURL(x, u) {
				p.URL, done[i] = x, true
				emit(i, p)
				return
			}
		}
	}
	if err == nil {
		for _, s := range out.Statuses {
			if s.Status == "error" && s.Error != nil {
				msg := "Exa could not fetch this URL (" + s.Error.Tag + ")"
				code := reason.ProviderError
				if s.Error.HTTPStatusCode >= 400 {
					code = reason.HTTPStatus
					msg = "Exa fetched this URL but the site answered an error status (" + s.Error.Tag + ")"
				}
				put(s.ID, provider.Page{Err: reason.New(code, "", msg+".")})
			}
		}
		for _, r := range out.Results {
			if strings.TrimSpace(r.Text) == "" {
				put(orStr(r.URL, r.ID), provider.Page{Err: reason.New(reason.EmptyContent, "", "Exa returned no text for this URL.")})
				continue
			}
			put(orStr(r.URL, r.ID), asMarkdown("Exa", r.URL, provider.Page{Title: r.Title, Content: r.Text}))
		}
	}
	for i, u := range urls {
		if !done[i] {
			if err == nil {
				err2 := reason.New(reason.NoResultForURL, "", "Exa returned nothing for this URL.")
				emit(i, provider.Page{URL: u, Err: err2})
				continue
			}
			emit(i, provider.Page{URL: u, Err: err})
		}
	}
}

// ExaKeyless is Exa's keyless free tier: the hosted MCP server's
// web_search_exa and web_fetch_exa tools (spec §A5.1).
type ExaKeyless struct{ m mcpTool }

// NewExaKeyless returns the keyless Exa client; o.Base overrides the MCP endpoint.
func NewExaKeyless(o Options) *ExaKeyless {
	return &ExaKeyless{m: mcpTool{label: "Exa", keyEnv: "EXA_API_KEY", endpoint: orStr(o.Base, ExaKeylessMCP), client: o.Client}}
}

// Name returns "exa".
func (e *ExaKeyless) Name() string { return "exa" }

// Search calls web_search_exa {query, numResults}. The reply is text blocks
// separated by "---" lines with Title:, URL:, Published:, Author: and
// Highlights: fields; the description is the highlight lines joined.
func (e *ExaKeyless) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	text, _, err := e.m.call(ctx, "web_search_exa", map[string]any{"query": query, "numResults": max(1, clampLimit(limit))})
	if err != nil {
		return nil, err
	}
	rows := parseExaBlocks(text)
	if len(rows) == 0 && strings.TrimSpace(text) != "" && !strings.Contains(text, "URL:") {
		return nil, reason.Newf(reason.VendorBadResponse, "", "Keyless Exa answered without any result block: %s", clip(text, 200))
	}
	return numbered(rows), nil
}

func parseExaBlocks(text string) []provider.Row {
	var rows []provider.Row
	for _, block := range splitBlocks(text) {
		var r provider.Row
		var hl []string
		inHL := false
		for _, line := range strings.Split(block, "\n") {
			t := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(t, "Title:"):
				r.Title, inHL = strings.TrimSpace(t[6:]), false
			case strings.HasPrefix(t, "URL:"):
				r.URL, inHL = strings.TrimSpace(t[4:]), false
			case strings.HasPrefix(t, "Published:"), strings.HasPrefix(t, "Author:"):
				inHL = false
			case strings.HasPrefix(t, "Highlights:"):
				inHL = true
				if rest := strings.TrimSpace(t[11:]); rest != "" {
					hl = append(hl, rest)
				}
			case inHL && t != "":
				hl = append(hl, t)
			}
		}
		r.Description = strings.Join(hl, " ")
		if r.URL != "" {
			rows = append(rows, r)
		}
	}
	return rows
}

func splitBlocks(text string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "---" {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(out, strings.Join(cur, "\n"))
}

// Extract calls web_fetch_exa {urls: [url]} once per URL; the title is the
// first "# " heading or "Title:" line.
func (e *ExaKeyless) Extract(ctx context.Context, urls []string, emit func(int, provider.Page)) {
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, _, err := e.m.call(ctx, "web_fetch_exa", map[string]any{"urls": []string{u}})
			if err != nil {
				emit(i, provider.Page{URL: u, Err: err})
				return
			}
			if strings.TrimSpace(text) == "" {
				emit(i, provider.Page{URL: u, Err: reason.New(reason.EmptyContent, "", "Keyless Exa returned no content for this URL.")})
				return
			}
			emit(i, asMarkdown("Keyless Exa", u, provider.Page{URL: u, Title: titleOf(text), Content: text}))
		}()
	}
	wg.Wait()
}

func titleOf(text string) string {
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "# ") {
			return strings.TrimSpace(t[2:])
		}
		if strings.HasPrefix(t, "Title:") {
			return strings.TrimSpace(t[6:])
		}
	}
	return ""
}
