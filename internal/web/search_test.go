package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/vectors"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func TestVectorsSearchLimitClamp(t *testing.T) {
	for _, v := range vectors.Area(t, "search.limit_clamp", 11) {
		var in map[string]any
		var exp struct {
			Effective int `json:"effective"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &exp)
		if got := web.ClampSearchLimit(in["limit"]); got != exp.Effective {
			t.Errorf("limit %#v: got %d, want %d", in["limit"], got, exp.Effective)
		}
	}
}

// braveFake serves the Brave Search API's documented shape and records requests.
type braveFake struct {
	mu     sync.Mutex
	reqs   []*http.Request
	calls  atomic.Int32
	delay  time.Duration
	status int
	rows   []map[string]string
}

func (b *braveFake) handler(w http.ResponseWriter, r *http.Request) {
	b.calls.Add(1)
	b.mu.Lock()
	b.reqs = append(b.reqs, r.Clone(context.Background()))
	b.mu.Unlock()
	time.Sleep(b.delay)
	if b.status != 0 {
		w.WriteHeader(b.status)
		io.WriteString(w, `{"type":"ErrorResponse","error":{"code":"RATE_LIMITED","status":429}}`)
		return
	}
	rows := b.rows
	if rows == nil {
		rows = []map[string]string{}
		for i := range 12 {
			rows = append(rows, map[string]string{"title": "T" + itoa(i), "url": "https://r" + itoa(i) + ".example/", "description": "<strong>d</strong>" + itoa(i)})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"type": "search", "web": map[string]any{"results": rows}})
}

func braveHarness(t *testing.T, f *braveFake) *harness {
	h := newHarness(t)
	h.dotenv = map[string]string{"BRAVE_SEARCH_API_KEY": "BSAtestkey0123456789"}
	h.cfg.Web.SearchBackend = "brave"
	h.vendor("brave-free", f.handler)
	h.open()
	return h
}

func TestSearchShapeAndRequest(t *testing.T) {
	f := &braveFake{}
	h := braveHarness(t, f)
	resp := h.svc.Search(context.Background(), web.SearchRequest{Query: `site:go.dev "generics" -blog`, Limit: "3"})
	if !resp.Success || len(resp.Data.Web) != 3 {
		t.Fatalf("%+v", resp)
	}
	for i, r := range resp.Data.Web {
		if r.Position != i+1 || r.URL == "" || strings.Contains(r.Description, "<strong>") {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	if resp.Meta.Provider != "brave-free" || resp.Meta.Cached {
		t.Errorf("meta %+v", resp.Meta)
	}
	req := f.reqs[0]
	if req.URL.Path != "/res/v1/web/search" || req.URL.Query().Get("q") != `site:go.dev "generics" -blog` ||
		req.URL.Query().Get("count") != "10" || req.Header.Get("X-Subscription-Token") != "BSAtestkey0123456789" {
		t.Fatalf("request %s %v", req.URL, req.Header)
	}
	// A second call with a near-identical query and a limit in the same bucket is a memo hit.
	again := h.svc.Search(context.Background(), web.SearchRequest{Query: "  SITE:go.dev   \"generics\" -BLOG", Limit: 8})
	if !again.Meta.Cached || len(again.Data.Web) != 8 || f.calls.Load() != 1 {
		t.Fatalf("memo: cached=%v rows=%d calls=%d", again.Meta.Cached, len(again.Data.Web), f.calls.Load())
	}
}

func TestSearchSingleFlight(t *testing.T) {
	f := &braveFake{delay: 150 * time.Millisecond}
	h := braveHarness(t, f)
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := h.svc.Search(context.Background(), web.SearchRequest{Query: "same query", Limit: 5}); r.Success {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if f.calls.Load() != 1 || ok.Load() != 20 {
		t.Fatalf("upstream calls %d (want 1), successes %d", f.calls.Load(), ok.Load())
	}
}

func TestSearchFailureNotMemoised(t *testing.T) {
	f := &braveFake{status: 429}
	h := braveHarness(t, f)
	h.cfg.Web.KeylessRescue = false
	h.open()
	for range 2 {
		r := h.svc.Search(context.Background(), web.SearchRequest{Query: "q"})
		if r.Success || r.Reason != reason.VendorRateLimited {
			t.Fatalf("%+v", r)
		}
	}
	if f.calls.Load() != 2 {
		t.Fatalf("failures were memoised: %d calls", f.calls.Load())
	}
}

func TestSearchFlagsUnsafeURLs(t *testing.T) {
	f := &braveFake{rows: []map[string]string{
		{"title": "ok", "url": "https://good.example/page"},
		{"title": "key", "url": "https://leak.example/cb?api_key=abc123secretvalue&x=1"},
		{"title": "meta", "url": "http://169.254.169.254/latest/meta-data/"},
		{"title": "lan", "url": "http://10.0.0.5/admin"},
		{"title": "tok", "url": "https://x.example/?q=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"},
		{"title": "local", "url": "http://router.local/setup"},
		{"title": "gcp", "url": "http://metadata.google.internal/computeMetadata/v1/"},
	}}
	h := braveHarness(t, f)
	resp := h.svc.Search(context.Background(), web.SearchRequest{Query: "q", Limit: 10})
	if len(resp.Data.Web) != 7 {
		t.Fatalf("rows %d", len(resp.Data.Web))
	}
	want := []reason.Code{"", reason.SensitiveQueryParam, reason.SSRFMetadata, reason.SSRFPrivate, reason.SecretInURL, reason.SSRFPrivate, reason.SSRFMetadata}
	for i, r := range resp.Data.Web {
		got := reason.Code("")
		if r.UnsafeURL != nil {
			got = r.UnsafeURL.Reason
		}
		if got != want[i] {
			t.Errorf("row %d (%s): flag %q, want %q", i, r.URL, got, want[i])
		}
	}
	if strings.Contains(resp.Data.Web[1].URL, "abc123secretvalue") || strings.Contains(resp.Data.Web[4].URL, "sk-proj") {
		t.Error("secret-bearing URL handed over with its query")
	}
}

// TestSearchRowsNeverCarryASecret: a result URL with a key in its host,
// path or userinfo is flagged and printed redacted (cutting the query alone
// left "https://sk-proj-….example/" in the row); a title or description
// quoting a key is redacted while security.redact_secrets is on.
func TestSearchRowsNeverCarryASecret(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	f := &braveFake{rows: []map[string]string{
		{"title": "host", "url": "https://" + key + ".example/"},
		{"title": "path", "url": "https://x.example/keys/" + key + "/view"},
		{"title": "userinfo", "url": "https://bob:" + key + "@x.example/"},
		{"title": "encoded", "url": "https://x.example/k/sk-proj-abcdefghij%6Blmnopqrstuvwxyz0123456789"},
		{"title": "quoted " + key, "url": "https://ok.example/", "description": "the key is " + key},
	}}
	h := braveHarness(t, f)
	resp := h.svc.Search(context.Background(), web.SearchRequest{Query: "q", Limit: 10})
	if !resp.Success || len(resp.Data.Web) != 5 {
		t.Fatalf("%+v", resp)
	}
	for i, r := range resp.Data.Web {
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), "abcdefghij") || strings.Contains(string(b), "lmnopqrstuvwxyz") {
			t.Errorf("row %d carries the key: %s", i, b)
		}
		if i < 4 && (r.UnsafeURL == nil || r.UnsafeURL.Reason != reason.SecretInURL) {
			t.Errorf("row %d (%s) not flagged secret_in_url: %+v", i, r.URL, r.UnsafeURL)
		}
	}
	if got := resp.Data.Web[4]; got.UnsafeURL != nil || got.URL != "https://ok.example/" {
		t.Errorf("clean URL changed or flagged: %+v", got)
	}
}

func TestSearchInterruptedAndEmpty(t *testing.T) {
	h := braveHarness(t, &braveFake{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := h.svc.Search(ctx, web.SearchRequest{Query: "q"}); r.Reason != reason.Interrupted {
		t.Fatalf("%+v", r)
	}
	if r := h.svc.Search(context.Background(), web.SearchRequest{Query: "   "}); r.Reason != reason.EmptyQuery {
		t.Fatalf("%+v", r)
	}
}

// firecrawlKeylessFake is Firecrawl's keyless cloud tier (spec §A5.1): POST
// /v2/search and /v2/scrape with no Authorization header.
type firecrawlKeylessFake struct {
	mu      sync.Mutex
	scraped []string
	authSet atomic.Bool
	search  atomic.Int32
}

func (f *firecrawlKeylessFake) handler(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		f.authSet.Store(true)
	}
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v2/search":
		f.search.Add(1)
		io.WriteString(w, `{"success":true,"data":{"web":[{"url":"https://rescued.example/","title":"Rescued","description":"from the ring","position":1}]}}`)
	case "/v2/scrape":
		u, _ := body["url"].(string)
		f.mu.Lock()
		f.scraped = append(f.scraped, u)
		f.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"success": true, "data": map[string]any{
			"markdown": "# Rescued copy\n\nThe ring fetched " + u + " after the configured backend failed.",
			"metadata": map[string]any{"title": "Rescued copy", "sourceURL": u, "statusCode": 200},
		}})
	default:
		w.WriteHeader(404)
	}
}

// rescueHarness: the configured backend is keyed Tavily, which fails; the
// ring is reduced to Firecrawl's keyless tier (exa, parallel and keenable
// pinned paid) served by a local fake.
func rescueHarness(t *testing.T, tavilyStatus *atomic.Int32) (*harness, *atomic.Int32, *firecrawlKeylessFake, *bytes.Buffer) {
	h := newHarness(t)
	var tavilyCalls atomic.Int32
	h.dotenv = map[string]string{"TAVILY_API_KEY": "tvly-testkey0123456789abcdef"}
	h.cfg.Web.Backend = "tavily"
	h.cfg.Web.ProviderTier = map[string]string{"exa": "paid", "parallel": "paid", "keenable": "paid"}
	h.vendor("tavily", func(w http.ResponseWriter, r *http.Request) {
		tavilyCalls.Add(1)
		if st := tavilyStatus.Load(); st != 0 {
			w.WriteHeader(int(st))
			io.WriteString(w, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if r.URL.Path == "/search" {
			io.WriteString(w, `{"results":[{"title":"Keyed","url":"https://keyed.example/","content":"tavily answer"}]}`)
			return
		}
		var res []map[string]any
		for _, u := range body["urls"].([]any) {
			res = append(res, map[string]any{"url": u, "raw_content": "# Keyed\n\nTavily content for " + u.(string)})
		}
		json.NewEncoder(w).Encode(map[string]any{"results": res, "failed_results": []any{}})
	})
	fc := &firecrawlKeylessFake{}
	h.vendor("firecrawl/keyless", fc.handler)
	var logs bytes.Buffer
	h.logger = slog.New(slog.NewTextHandler(&logs, nil))
	return h, &tavilyCalls, fc, &logs
}

func TestSearchRescueOnceThenConfiguredAgain(t *testing.T) {
	var status atomic.Int32
	status.Store(401)
	h, tavilyCalls, fc, logs := rescueHarness(t, &status)
	h.open()
	r := h.svc.Search(context.Background(), web.SearchRequest{Query: "q"})
	if !r.Success || r.Meta.RescuedFrom != "tavily" || r.Meta.ServedBy != "firecrawl" || !strings.Contains(r.Meta.BackendError, "HTTP 401") {
		t.Fatalf("rescue: %+v %+v", r, r.Meta)
	}
	if fc.authSet.Load() {
		t.Error("keyless firecrawl sent an Authorization header")
	}
	if strings.Contains(r.Meta.BackendError, "tvly-testkey") || !strings.Contains(logs.String(), "one-shot keyless rescue") {
		t.Errorf("backend_error %q / logs %q", r.Meta.BackendError, logs.String())
	}
	// Not memoised: the next identical call goes to Tavily again, which now works.
	status.Store(0)
	r = h.svc.Search(context.Background(), web.SearchRequest{Query: "q"})
	if !r.Success || r.Meta.RescuedFrom != "" || r.Meta.Cached || tavilyCalls.Load() != 2 || r.Data.Web[0].URL != "https://keyed.example/" {
		t.Fatalf("next call: %+v calls %d", r.Meta, tavilyCalls.Load())
	}
}

func TestExtractRescueProvenancePolicyAndNoCache(t *testing.T) {
	var status atomic.Int32
	status.Store(503)
	h, tavilyCalls, fc, logs := rescueHarness(t, &status)
	h.cfg.Security.WebsiteBlocklist.Enabled = true
	h.cfg.Security.WebsiteBlocklist.Domains = []string{"blocked.example"}
	h.res.set("a.example", "93.184.216.34")
	h.res.set("b.example", "93.184.216.35")
	h.res.set("blocked.example", "93.184.216.36")
	h.open()
	urls := []any{"https://a.example/one", "https://blocked.example/x", "https://b.example/two"}
	resp := h.extract(urls...)
	if len(resp.Results) != 3 {
		t.Fatalf("%+v", resp)
	}
	for _, i := range []int{0, 2} {
		r := resp.Results[i]
		if !r.OK() || r.Meta.RescuedFrom != "tavily" || r.Meta.ServedBy != "firecrawl" || !strings.Contains(r.Meta.BackendError, "HTTP 503") || !strings.Contains(r.Content, "Rescued copy") {
			t.Fatalf("row %d: %+v meta %+v", i, r, r.Meta)
		}
	}
	if b := resp.Results[1]; b.OK() || b.BlockedByPolicy == nil || b.Reason != reason.PolicyBlocked {
		t.Fatalf("policy row changed: %+v", b)
	}
	fc.mu.Lock()
	scraped := strings.Join(fc.scraped, " ")
	fc.mu.Unlock()
	if strings.Contains(scraped, "blocked.example") || !strings.Contains(scraped, "a.example") {
		t.Fatalf("ring fetched %s", scraped)
	}
	if !strings.Contains(logs.String(), "one-shot keyless rescue") || !strings.Contains(logs.String(), "tool=web_extract") {
		t.Errorf("no rescue log line: %s", logs.String())
	}
	// Rescued rows were not cached: the next call asks Tavily again (now healthy).
	status.Store(0)
	resp = h.extract(urls...)
	if r := resp.Results[0]; !r.OK() || r.Meta.Cached || r.Meta.RescuedFrom != "" || r.Meta.Provider != "tavily" || !strings.Contains(r.Content, "Tavily content") {
		t.Fatalf("next call: %+v %+v", r, r.Meta)
	}
	if tavilyCalls.Load() != 2 {
		t.Fatalf("tavily calls %d", tavilyCalls.Load())
	}
}

func TestSearchRefusesSecretInQuery(t *testing.T) {
	f := &braveFake{}
	h := braveHarness(t, f)
	r := h.svc.Search(context.Background(), web.SearchRequest{Query: "why does sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 fail"})
	if r.Success || r.Reason != reason.SecretInQuery || f.calls.Load() != 0 || strings.Contains(r.Error, "sk-proj") {
		t.Fatalf("%+v calls %d", r, f.calls.Load())
	}
}

// TestFailedSearchSaysKeylessWasAutoSelected: a search the keyless ring
// failed (its one member, Firecrawl's keyless tier, answering 503) was
// still handed to a third party nobody chose, and the refusal says so:
// meta.auto_selected "keyless", meta.tried naming the vendor, and a notice
// with the two ways to change it, beside error and reason (breaker7 D8).
// A backend chosen by name that fails carries no meta.
func TestFailedSearchSaysKeylessWasAutoSelected(t *testing.T) {
	h := newHarness(t)
	h.cfg.Web.ProviderTier = map[string]string{"exa": "paid", "parallel": "paid", "keenable": "paid"}
	var calls atomic.Int32
	h.vendor("firecrawl/keyless", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	h.open()
	r := h.svc.Search(context.Background(), web.SearchRequest{Query: "q"})
	if r.Success || r.Reason == "" || calls.Load() == 0 {
		t.Fatalf("want a failed search that reached the fake: %+v calls %d", r, calls.Load())
	}
	if r.Meta == nil || r.Meta.AutoSelected != "keyless" || r.Meta.Provider != "keyless" ||
		len(r.Meta.Tried) != 1 || r.Meta.Tried[0] != "firecrawl" ||
		!strings.Contains(r.Meta.Notice, "routed to firecrawl's keyless free search service (a third party), picked automatically") ||
		!strings.Contains(r.Meta.Notice, "web.auto_keyless_search false") {
		t.Fatalf("failed automatic keyless search does not disclose it: %+v meta %+v", r, r.Meta)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"auto_selected":"keyless"`) || !strings.Contains(string(b), `"tried":["firecrawl"]`) {
		t.Errorf("JSON lacks the disclosure: %s", b)
	}

	h = newHarness(t)
	h.cfg.Web.SearchBackend = "firecrawl"
	h.vendor("firecrawl/keyless", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	h.open()
	if r := h.svc.Search(context.Background(), web.SearchRequest{Query: "q"}); r.Success || r.Meta != nil {
		t.Errorf("firecrawl chosen by name failed: %+v meta %+v; want no automatic-choice meta", r, r.Meta)
	}
}

// TestSearchSaysKeylessWasAutoSelected: with no search backend configured
// and no vendor key, the query goes to the keyless ring (reduced here to
// Firecrawl's keyless tier), and the result says so: meta.auto_selected
// "keyless", meta.served_by the vendor, and a notice naming it and how to
// change it, on fresh and memoised answers alike. A backend chosen by name
// carries neither. With web.auto_keyless_search: false the same search is
// refused with no_provider and nothing is sent (issue 16 item 12).
func TestSearchSaysKeylessWasAutoSelected(t *testing.T) {
	h := newHarness(t)
	h.cfg.Web.ProviderTier = map[string]string{"exa": "paid", "parallel": "paid", "keenable": "paid"}
	fc := &firecrawlKeylessFake{}
	h.vendor("firecrawl/keyless", fc.handler)
	h.open()
	for i := range 2 {
		r := h.svc.Search(context.Background(), web.SearchRequest{Query: "q"})
		if !r.Success || r.Meta.Provider != "keyless" || r.Meta.ServedBy != "firecrawl" || r.Meta.AutoSelected != "keyless" ||
			!strings.Contains(r.Meta.Notice, "firecrawl's keyless free search service") || !strings.Contains(r.Meta.Notice, "web.auto_keyless_search false") {
			t.Fatalf("call %d: %+v %+v", i, r, r.Meta)
		}
	}

	h = newHarness(t)
	h.cfg.Web.SearchBackend = "firecrawl"
	fc = &firecrawlKeylessFake{}
	h.vendor("firecrawl/keyless", fc.handler)
	h.open()
	if r := h.svc.Search(context.Background(), web.SearchRequest{Query: "q"}); !r.Success || r.Meta.AutoSelected != "" || r.Meta.Notice != "" {
		t.Errorf("firecrawl chosen by name: %+v %+v; no automatic-choice notice", r, r.Meta)
	}

	h = newHarness(t)
	h.cfg.Web.AutoKeylessSearch = false
	fc = &firecrawlKeylessFake{}
	h.vendor("firecrawl/keyless", fc.handler)
	h.open()
	if r := h.svc.Search(context.Background(), web.SearchRequest{Query: "q"}); r.Success || r.Reason != reason.NoProvider || fc.search.Load() != 0 {
		t.Errorf("auto keyless off: %+v, %d searches sent; want no_provider and none", r, fc.search.Load())
	}
}
