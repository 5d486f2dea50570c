package vendors

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// recorded is one request a fake vendor received.
type recorded struct {
	method, path string
	query        url.Values
	header       http.Header
	body         map[string]any
	form         url.Values
}

// fake is a local vendor API: it records every request and answers with
// success or a failure mode.
type fake struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []recorded
	mode    string // "", "401", "402", "403", "429", "500", "503", "timeout", "truncated", "malformed"
	success http.HandlerFunc
	key     string
}

func newFake(t *testing.T, key string, success http.HandlerFunc) *fake {
	f := &fake{t: t, success: success, key: key}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := recorded{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone()}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(raw, &rec.body)
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		rec.form, _ = url.ParseQuery(string(raw))
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, rec)
	mode := f.mode
	f.mu.Unlock()
	if mode == "" {
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
		f.success(w, r)
		return
	}
	// Vendors sometimes echo the credential they were sent; it must be scrubbed.
	serveFault(w, r, mode, `{"results": [{"url": "https://a.example/", "ti`, `{"results": [{"url": "https://a.example/" "title": }`,
		func(st int) string {
			return fmt.Sprintf(`{"error": "status %d for key %s (auth %q)"}`, st, f.key, r.Header.Get("Authorization"))
		})
}

// serveFault answers a fake vendor request in a failure mode: "timeout"
// (hold the request 3 s or until the client gives up), "truncated" (a 200
// whose body stops after partial, well short of its Content-Length),
// "malformed" (a complete 200 with the JSON body malformed), or an HTTP
// status code such as "402", whose body errBody returns.
func serveFault(w http.ResponseWriter, r *http.Request, mode, partial, malformed string, errBody func(status int) string) {
	switch mode {
	case "timeout":
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	case "truncated":
		hj, _ := w.(http.Hijacker)
		conn, buf, err := hj.Hijack()
		if err != nil {
			return
		}
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(partial)+1000, partial)
		buf.Flush()
		conn.Close()
	case "malformed":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, malformed)
	default:
		var st int
		fmt.Sscan(mode, &st)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		io.WriteString(w, errBody(st))
	}
}

func (f *fake) last() recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		f.t.Fatal("the fake received no request")
	}
	return f.reqs[len(f.reqs)-1]
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *fake) setMode(m string) {
	f.mu.Lock()
	f.mode = m
	f.reqs = nil
	f.mu.Unlock()
}

// client returns an egress client that may reach the fake on loopback.
func (f *fake) client() *http.Client {
	ap := netip.MustParseAddrPort(f.srv.Listener.Addr().String())
	return egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap}}).Client(egress.ClientOptions{})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// op runs the client under test once; for extract ops err is the first page's error.
type op func(ctx context.Context, base string, c *http.Client) (any, error)

func searchOp(mk func(o Options) provider.Searcher, key string) op {
	return func(ctx context.Context, base string, c *http.Client) (any, error) {
		return mk(Options{Client: c, Key: key, Base: base}).Search(ctx, "golang generics", 7)
	}
}

func extractOp(mk func(o Options) provider.Extractor, key string, urls ...string) op {
	return func(ctx context.Context, base string, c *http.Client) (any, error) {
		pages := make([]provider.Page, len(urls))
		mk(Options{Client: c, Key: key, Base: base}).Extract(ctx, urls, func(i int, p provider.Page) { pages[i] = p })
		for _, p := range pages {
			if p.Err != nil {
				return pages, p.Err
			}
		}
		return pages, nil
	}
}

type vendorCase struct {
	name    string
	key     string
	success http.HandlerFunc
	run     op
	// verify asserts on the request the fake received and on the output.
	verify func(t *testing.T, req recorded, out any)
	// skip lists failure modes that do not apply (ddgs reads HTML, not JSON).
	skip map[string]bool
}

var failureModes = map[string]reason.Code{
	"401": reason.VendorAuth, "402": reason.VendorQuota, "403": reason.VendorAuth, "429": reason.VendorRateLimited,
	"500": reason.VendorUnavailable, "503": reason.VendorUnavailable,
	"timeout": reason.VendorTimeout, "truncated": reason.VendorBadResponse, "malformed": reason.VendorBadResponse,
}

func runVendorCases(t *testing.T, cases []vendorCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.key, c.success)
			out, err := c.run(context.Background(), f.srv.URL, f.client())
			if err != nil {
				t.Fatalf("success case: %v", err)
			}
			c.verify(t, f.last(), out)
			for mode, want := range failureModes {
				if c.skip[mode] {
					continue
				}
				f.setMode(mode)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				if mode == "timeout" {
					cancel()
					ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
				}
				_, err := c.run(ctx, f.srv.URL, f.client())
				cancel()
				if reason.Of(err) != want {
					t.Errorf("%s: got %v (%s), want %s", mode, err, reason.Of(err), want)
					continue
				}
				if c.key != "" && strings.Contains(err.Error(), c.key) {
					t.Errorf("%s: key value leaked into the error: %s", mode, err)
				}
				if f.count() == 0 {
					t.Errorf("%s: fake received no request", mode)
				}
			}
		})
	}
}

func rowsOf(t *testing.T, out any) []provider.Row {
	rows, ok := out.([]provider.Row)
	if !ok || len(rows) == 0 {
		t.Fatalf("no rows: %#v", out)
	}
	for i, r := range rows {
		if r.Position != i+1 || r.URL == "" {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
	return rows
}

func pagesOf(t *testing.T, out any) []provider.Page {
	pages, ok := out.([]provider.Page)
	if !ok || len(pages) == 0 {
		t.Fatalf("no pages: %#v", out)
	}
	for i, p := range pages {
		if p.Err != nil || strings.TrimSpace(p.Content) == "" {
			t.Fatalf("page %d: %+v", i, p)
		}
	}
	return pages
}

func wantHeader(t *testing.T, req recorded, k, v string) {
	t.Helper()
	if got := req.header.Get(k); got != v {
		t.Errorf("header %s = %q, want %q", k, got, v)
	}
}

func wantReq(t *testing.T, req recorded, method, path string) {
	t.Helper()
	if req.method != method || req.path != path {
		t.Errorf("request %s %s, want %s %s", req.method, req.path, method, path)
	}
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

const (
	fcKey  = "fc-0123456789abcdef0123456789abcdef"
	tvKey  = "tvly-TESTkey0123456789abcdefghij"
	exaKey = "exa-test-key-0a1b2c3d4e5f60718293"
	parKey = "par-test-key-9z8y7x6w5v4u3t2s1r0q"
	keeKey = "keen-test-key-aaaabbbbccccdddd1111"
	pplKey = "pplx-TESTkey0123456789abcdefghijkl"
	brvKey = "BSA-test-key-1234567890abcdefghijk"
	xaiKey = "xai-TESTkey0123456789abcdefghijklmn"
)

func TestVendorsAgainstDocumentedFakes(t *testing.T) {
	runVendorCases(t, []vendorCase{
		{
			name: "firecrawl search", key: fcKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"success": true, "data": map[string]any{"web": []any{
					map[string]any{"url": "https://go.dev/", "title": "Go", "description": "The Go language", "position": 1},
					map[string]any{"url": "https://pkg.go.dev/", "title": "Pkg", "description": "Packages", "position": 2},
				}}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewFirecrawl(o, -1) }, fcKey),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/v2/search")
				wantHeader(t, req, "Authorization", "Bearer "+fcKey)
				if req.body["query"] != "golang generics" || num(req.body["limit"]) != 7 {
					t.Errorf("body %v", req.body)
				}
				if rows := rowsOf(t, out); rows[0].Description != "The Go language" || len(rows) != 2 {
					t.Errorf("rows %+v", rows)
				}
			},
		},
		{
			name: "firecrawl scrape", key: fcKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"success": true, "data": map[string]any{"markdown": "# Title\n\nBody.",
					"metadata": map[string]any{"title": "Title", "sourceURL": "https://a.example/", "url": "https://a.example/final", "statusCode": 200}}})
			},
			run: extractOp(func(o Options) provider.Extractor { return NewFirecrawl(o, -1) }, fcKey, "https://a.example/"),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/v2/scrape")
				wantHeader(t, req, "Authorization", "Bearer "+fcKey)
				if req.body["url"] != "https://a.example/" || fmt.Sprint(req.body["formats"]) != "[markdown]" || num(req.body["waitFor"]) != 3000 {
					t.Errorf("body %v", req.body)
				}
				if p := pagesOf(t, out)[0]; p.Title != "Title" || p.FinalURL != "https://a.example/final" {
					t.Errorf("page %+v", p)
				}
			},
		},
		{
			name: "firecrawl keyless (no Authorization)",
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"success": true, "data": []any{map[string]any{"url": "https://go.dev/", "title": "Go"}}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewFirecrawl(o, -1) }, ""),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/v2/search")
				wantHeader(t, req, "Authorization", "")
				rowsOf(t, out)
			},
		},
		{
			name: "tavily search", key: tvKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"query": "q", "results": []any{map[string]any{"title": "Go", "url": "https://go.dev/", "content": "snippet", "score": 0.9}}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewTavily(o) }, tvKey),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/search")
				wantHeader(t, req, "Authorization", "Bearer "+tvKey)
				if num(req.body["max_results"]) != 7 || req.body["include_raw_content"] != false || req.body["include_images"] != false {
					t.Errorf("body %v", req.body)
				}
				if rowsOf(t, out)[0].Description != "snippet" {
					t.Error("description")
				}
			},
		},
		{
			name: "tavily extract", key: tvKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"results": []any{map[string]any{"url": "https://a.example/", "raw_content": "Alpha content"}},
					"failed_results": []any{}})
			},
			run: extractOp(func(o Options) provider.Extractor { return NewTavily(o) }, tvKey, "https://a.example/"),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/extract")
				if fmt.Sprint(req.body["urls"]) != "[https://a.example/]" {
					t.Errorf("body %v", req.body)
				}
				pagesOf(t, out)
			},
		},
		{
			name: "exa search", key: exaKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"requestId": "x", "results": []any{map[string]any{"title": "Go", "url": "https://go.dev/", "highlights": []string{"one", "two"}}}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewExa(o) }, exaKey),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/search")
				wantHeader(t, req, "x-api-key", exaKey)
				wantHeader(t, req, "Authorization", "")
				if num(req.body["numResults"]) != 7 {
					t.Errorf("body %v", req.body)
				}
				if rowsOf(t, out)[0].Description != "one two" {
					t.Error("highlights not joined")
				}
			},
		},
		{
			name: "exa contents", key: exaKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"results": []any{map[string]any{"id": "https://a.example/", "url": "https://a.example/", "title": "A", "text": "Alpha"}},
					"statuses": []any{map[string]any{"id": "https://a.example/", "status": "success"}}})
			},
			run: extractOp(func(o Options) provider.Extractor { return NewExa(o) }, exaKey, "https://a.example/"),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/contents")
				if req.body["text"] != true {
					t.Errorf("body %v", req.body)
				}
				pagesOf(t, out)
			},
		},
		{
			name: "parallel search", key: parKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"search_id": "s", "results": []any{map[string]any{"url": "https://go.dev/", "title": "Go", "excerpts": []string{"a", "b"}}}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewParallel(o, "") }, parKey),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/v1/search")
				wantHeader(t, req, "x-api-key", parKey)
				adv, _ := req.body["advanced_settings"].(map[string]any)
				if req.body["objective"] != "golang generics" || fmt.Sprint(req.body["search_queries"]) != "[golang generics]" || req.body["mode"] != "advanced" || num(adv["max_results"]) != 7 {
					t.Errorf("body %v", req.body)
				}
				if rowsOf(t, out)[0].Description != "a b" {
					t.Error("excerpts")
				}
			},
		},
		{
			name: "parallel extract", key: parKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"extract_id": "e", "results": []any{map[string]any{"url": "https://a.example/", "title": "A", "full_content": "Alpha"}}, "errors": []any{}})
			},
			run: extractOp(func(o Options) provider.Extractor { return NewParallel(o, "basic") }, parKey, "https://a.example/"),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/v1/extract")
				if req.body["full_content"] != true {
					t.Errorf("body %v", req.body)
				}
				pagesOf(t, out)
			},
		},
		{
			name: "keenable search", key: keeKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"results": []any{map[string]any{"title": "Go", "url": "https://go.dev/", "description": "d"}}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewKeenable(o, false) }, keeKey),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/v1/search")
				wantHeader(t, req, "Authorization", "Bearer "+keeKey)
				wantHeader(t, req, "X-Keenable-Title", "gatehouse")
				if num(req.body["max_results"]) != 7 {
					t.Errorf("body %v", req.body)
				}
				rowsOf(t, out)
			},
		},
		{
			name: "keenable keyless fetch",
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"url": r.URL.Query().Get("url"), "title": "A", "content": "Alpha"})
			},
			run: extractOp(func(o Options) provider.Extractor { return NewKeenable(o, true) }, "", "https://a.example/?x=1"),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "GET", "/v1/fetch/public")
				wantHeader(t, req, "Authorization", "")
				if req.query.Get("url") != "https://a.example/?x=1" {
					t.Errorf("query %v", req.query)
				}
				pagesOf(t, out)
			},
		},
		{
			name: "perplexity search", key: pplKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"id": "x", "results": []any{map[string]any{"title": "Go", "url": "https://go.dev/", "snippet": "s", "date": "2026-01-01"}}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewPerplexity(o) }, pplKey),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/search")
				wantHeader(t, req, "Authorization", "Bearer "+pplKey)
				if num(req.body["max_results"]) != 7 || req.body["query"] != "golang generics" {
					t.Errorf("body %v", req.body)
				}
				rowsOf(t, out)
			},
		},
		{
			name: "searxng search",
			success: func(w http.ResponseWriter, r *http.Request) {
				var rs []any
				for i := range 9 {
					rs = append(rs, map[string]any{"url": fmt.Sprintf("https://r%d.example/", i), "title": "R", "content": "c", "engine": "ddg"})
				}
				writeJSON(w, map[string]any{"query": "q", "results": rs})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewSearXNG(o) }, ""),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "GET", "/search")
				if req.query.Get("format") != "json" || req.query.Get("q") != "golang generics" {
					t.Errorf("query %v", req.query)
				}
				if len(rowsOf(t, out)) != 7 {
					t.Error("limit not applied")
				}
			},
		},
		{
			name: "brave search", key: brvKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"type": "search", "web": map[string]any{"results": []any{map[string]any{"title": "Go", "url": "https://go.dev/", "description": "<strong>Go</strong> is"}}}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewBrave(o) }, brvKey),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "GET", "/res/v1/web/search")
				wantHeader(t, req, "X-Subscription-Token", brvKey)
				if req.query.Get("count") != "7" {
					t.Errorf("query %v", req.query)
				}
				if rowsOf(t, out)[0].Description != "Go is" {
					t.Error("tags kept")
				}
			},
		},
		{
			name: "xai responses", key: xaiKey,
			success: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"id": "resp", "output": []any{
					map[string]any{"type": "web_search_call", "status": "completed"},
					map[string]any{"type": "message", "content": []any{map[string]any{"type": "output_text",
						"text":        "```json\n{\"results\": [{\"title\": \"Go\", \"url\": \"https://go.dev/\", \"description\": \"lang\"}]}\n```",
						"annotations": []any{map[string]any{"type": "url_citation", "url": "https://go.dev/", "title": "Go"}}}}},
				}})
			},
			run: searchOp(func(o Options) provider.Searcher { return NewXAI(o, XAIOptions{AllowedDomains: []string{"go.dev"}}) }, xaiKey),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/responses")
				wantHeader(t, req, "Authorization", "Bearer "+xaiKey)
				tools, _ := req.body["tools"].([]any)
				if req.body["model"] != "grok-build-0.1" || len(tools) != 1 || !strings.Contains(fmt.Sprint(tools[0]), "allowed_domains:[go.dev]") {
					t.Errorf("body %v", req.body)
				}
				if rowsOf(t, out)[0].Description != "lang" {
					t.Error("JSON output not parsed")
				}
			},
		},
		{
			name: "ddgs html", skip: map[string]bool{"malformed": true},
			success: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, `<html><body><div class="results">
<div class="result results_links result--ad"><a class="result__a" href="https://ads.example/">Ad</a></div>
<div class="result results_links web-result"><h2><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2Fdoc%2F&amp;rut=x">The <b>Go</b> docs</a></h2>
<a class="result__snippet" href="#">Documentation for <b>Go</b>.</a></div>
<div class="result results_links web-result"><a class="result__a" href="https://pkg.go.dev/">Pkg</a></div>
</div></body></html>`)
			},
			run: searchOp(func(o Options) provider.Searcher { return NewDDGS(o) }, ""),
			verify: func(t *testing.T, req recorded, out any) {
				wantReq(t, req, "POST", "/html/")
				if req.form.Get("q") != "golang generics" {
					t.Errorf("form %v", req.form)
				}
				rows := rowsOf(t, out)
				if len(rows) != 2 || rows[0].URL != "https://go.dev/doc/" || rows[0].Title != "The Go docs" || rows[0].Description != "Documentation for Go." {
					t.Errorf("rows %+v", rows)
				}
			},
		},
	})
}

// A 200 answer that carries an error envelope is a failure, not empty results.
func TestEnvelopeErrors(t *testing.T) {
	f := newFake(t, fcKey, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"success": false, "error": "Rate limit exceeded for " + fcKey})
	})
	_, err := NewFirecrawl(Options{Client: f.client(), Key: fcKey, Base: f.srv.URL}, -1).Search(context.Background(), "q", 5)
	if reason.Of(err) != reason.VendorRateLimited || strings.Contains(err.Error(), fcKey) {
		t.Fatalf("%v", err)
	}
	x := newFake(t, xaiKey, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"error": map[string]any{"message": "model not found"}})
	})
	_, err = NewXAI(Options{Client: x.client(), Key: xaiKey, Base: x.srv.URL}, XAIOptions{}).Search(context.Background(), "q", 5)
	if reason.Of(err) != reason.VendorError {
		t.Fatalf("xai envelope: %v", err)
	}
	// A plan cap in a 4xx body is vendor_quota (moves the ring on).
	c := newFake(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		io.WriteString(w, `{"detail":{"error":"daily_cap_reached"}}`)
	})
	_, err = NewTavily(Options{Client: c.client(), Base: c.srv.URL}).Search(context.Background(), "q", 5)
	if reason.Of(err) != reason.VendorQuota || !provider.MovesRing(err) {
		t.Fatalf("daily cap: %v", err)
	}
}

// Per-URL failures reported inside a 200 answer become that URL's row.
func TestExtractPartialFailures(t *testing.T) {
	f := newFake(t, parKey, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"results": []any{map[string]any{"url": "https://a.example/", "full_content": "A"}},
			"errors": []any{map[string]any{"url": "https://b.example/", "error_type": "fetch_error", "http_status_code": 404}}})
	})
	urls := []string{"https://a.example/", "https://b.example/", "https://c.example/"}
	pages := make([]provider.Page, 3)
	NewParallel(Options{Client: f.client(), Key: parKey, Base: f.srv.URL}, "").Extract(context.Background(), urls, func(i int, p provider.Page) { pages[i] = p })
	if pages[0].Err != nil || reason.Of(pages[1].Err) != reason.HTTPStatus || reason.Of(pages[2].Err) != reason.NoResultForURL {
		t.Fatalf("%+v", pages)
	}
	if provider.ExtractMovesRing(pages[1:]) {
		t.Error("page-level failures must not move the ring")
	}
}

// The self-hosted SearXNG origin is reached on a private address through
// Build's origin allowance; a base guard refuses it.
func TestBuildSelfHostedOrigin(t *testing.T) {
	f := newFake(t, "", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"results": []any{map[string]any{"url": "https://go.dev/", "title": "Go"}}})
	})
	env := map[string]string{"SEARXNG_URL": f.srv.URL}
	bs := Build(BuildOptions{Settings: provider.Settings{Env: func(k string) string { return env[k] }}, Guard: egress.New(egress.Options{})})
	for _, b := range bs {
		if b.Name == "searxng" {
			if _, err := b.Search.Search(context.Background(), "q", 5); err != nil {
				t.Fatalf("configured origin refused: %v", err)
			}
		}
		if b.Name == "firecrawl" {
			// Keyless firecrawl to the same loopback address is not allowed.
			kl := NewFirecrawl(Options{Client: egress.New(egress.Options{}).Client(egress.ClientOptions{}), Base: f.srv.URL}, -1)
			if _, err := kl.Search(context.Background(), "q", 5); reason.Of(err) != reason.SSRFPrivate {
				t.Fatalf("unconfigured private endpoint: %v", err)
			}
		}
	}
}

// TestEndpointBaseWithQuery: a configured base URL carrying a query
// (SEARXNG_URL=http://host/searx/?token=t) gets the API path before that
// query and the two queries joined; it used to be glued after it
// ("/searx/?token=t/search?format=json&q=…"), so the instance saw a token of
// "t/search?format=json" and no q.
func TestEndpointBaseWithQuery(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		writeJSON(w, map[string]any{"results": []any{}})
	}))
	defer srv.Close()
	for _, base := range []string{srv.URL + "/searx/?token=t", srv.URL + "/searx?token=t#frag"} {
		got = nil
		if _, err := NewSearXNG(Options{Client: srv.Client(), Base: base}).Search(context.Background(), "golang generics", 5); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if got == nil || got.URL.Path != "/searx/search" || got.URL.Query().Get("token") != "t" ||
			got.URL.Query().Get("q") != "golang generics" || got.URL.Query().Get("format") != "json" {
			t.Errorf("base %s: request %v", base, got.URL)
		}
	}
	for base, want := range map[string]string{
		"https://h.example":                "https://h.example/search?q=1",
		"https://h.example/sub":            "https://h.example/sub/search?q=1",
		"https://h.example/?k=v":           "https://h.example/search?k=v&q=1",
		"https://h.example/a/?k=v&k2=v2#f": "https://h.example/a/search?k=v&k2=v2&q=1",
	} {
		if got := joinEndpoint(base, "/search?q=1"); got != want {
			t.Errorf("joinEndpoint(%q) = %q, want %q", base, got, want)
		}
	}
}
