package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// testKeys is a test .env: one key per vendor. The grep test below proves
// none of these values reaches a log line, an error, a debug file or a cache
// file, even when a vendor echoes the credential back in its error body.
var testKeys = map[string]string{
	"TAVILY_API_KEY":       "tvly-LEAKCHECK00000000000000001",
	"EXA_API_KEY":          "exa-LEAKCHECK0000000000000000002",
	"PARALLEL_API_KEY":     "par-LEAKCHECK0000000000000000003",
	"KEENABLE_API_KEY":     "kee-LEAKCHECK0000000000000000004",
	"PERPLEXITY_API_KEY":   "pplx-LEAKCHECK000000000000000005",
	"BRAVE_SEARCH_API_KEY": "BSA-LEAKCHECK0000000000000000006",
	"XAI_API_KEY":          "xai-LEAKCHECK0000000000000000007",
	"FIRECRAWL_API_KEY":    "fc-LEAKCHECK00000000000000000008",
}

// echoFail answers 401 with every request header and the body echoed back.
func echoFail(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var hs []string
	for k, v := range r.Header {
		hs = append(hs, k+"="+strings.Join(v, ","))
	}
	sort.Strings(hs)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(401)
	fmt.Fprintf(w, `{"error":"invalid credentials: %s; request was %s"}`, strings.Join(hs, " "), strings.ReplaceAll(string(b), `"`, `'`))
}

func firecrawlOK(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	if r.URL.Path == "/v2/search" {
		io.WriteString(w, `{"success":true,"data":{"web":[{"url":"https://go.dev/","title":"Go","description":"d"}]}}`)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"success": true, "data": map[string]any{
		"markdown": "# Page\n\nContent fetched by Firecrawl for " + fmt.Sprint(body["url"]) + ".",
		"metadata": map[string]any{"title": "Page", "sourceURL": body["url"], "statusCode": 200}}})
}

func TestNoKeyValueLeaks(t *testing.T) {
	h := newHarness(t)
	h.debug = true
	var envFile strings.Builder
	for k, v := range testKeys {
		envFile.WriteString(k + "=" + v + "\n")
	}
	if err := os.WriteFile(filepath.Join(h.home, ".env"), []byte(envFile.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	dotenv, _, err := config.LoadEnv(h.home)
	if err != nil || len(dotenv) != len(testKeys) {
		t.Fatalf("LoadEnv: %v %v", dotenv, err)
	}
	h.dotenv = dotenv
	var logs bytes.Buffer
	h.logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, v := range []string{"tavily", "exa", "parallel", "keenable", "perplexity", "brave-free", "xai",
		"exa/keyless", "parallel/keyless", "keenable/keyless", "firecrawl/keyless"} {
		h.vendor(v, echoFail)
	}
	h.vendor("firecrawl", firecrawlOK)
	h.open()
	ctx := context.Background()
	var outputs []string
	record := func(v any) {
		b, _ := json.Marshal(v)
		outputs = append(outputs, string(b))
	}
	for _, b := range []string{"tavily", "exa", "parallel", "keenable", "perplexity", "brave-free", "xai", "firecrawl"} {
		r := h.svc.Search(ctx, web.SearchRequest{Query: "leak check " + b, Backend: b})
		if b == "firecrawl" != r.Success {
			t.Errorf("%s: success=%v %s", b, r.Success, r.Error)
		}
		record(r)
	}
	for _, b := range []string{"tavily", "exa", "parallel", "keenable", "firecrawl"} {
		r := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{"https://93.184.216.34/" + b}, Backend: b})
		record(r)
	}
	// Something was written: debug files and a cache entry.
	var files []string
	_ = filepath.WalkDir(h.home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != ".env" {
			files = append(files, p)
		}
		return nil
	})
	var sawDebug, sawCache bool
	haystack := logs.String() + strings.Join(outputs, "\n")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sawDebug = sawDebug || strings.Contains(f, "web_tools_debug_")
		sawCache = sawCache || strings.HasSuffix(f, ".cache.md")
		haystack += "\n" + string(b)
	}
	if !sawDebug || !sawCache {
		t.Fatalf("debug %v cache %v: files %v", sawDebug, sawCache, files)
	}
	if !strings.Contains(haystack, "HTTP 401") || !strings.Contains(logs.String(), "web_search") {
		t.Fatal("the failures did not happen as planned")
	}
	for name, v := range testKeys {
		if strings.Contains(haystack, v) {
			i := strings.Index(haystack, v)
			t.Errorf("%s value leaked: …%s…", name, haystack[max(0, i-120):min(len(haystack), i+40)])
		}
	}
	if strings.Contains(haystack, "leak check tavily") && strings.Contains(logs.String(), "leak check") {
		t.Error("a raw query reached the logs")
	}
}

// Debug files and logs redact spec §A6.7's broader log list: the OAuth code,
// a signed link's sig and key, session and auth values the fetch gate lets
// through (and the result keeps) never reach disk (breaker5 D22).
func TestDebugFilesAndLogsRedactLogOnlyParams(t *testing.T) {
	h := newHarness(t)
	h.debug = true
	var logs bytes.Buffer
	h.logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := h.serve("keys.test", pageHandler(html("Keys", article(5, "tide"))))
	h.open()
	secrets := []string{"secretcode123", "sigvalue456", "keyvalue789", "sessvalue012", "authvalue345"}
	u := s.URL("/p/keys.html?code=secretcode123&sig=sigvalue456&key=keyvalue789&session=sessvalue012&auth=authvalue345")
	for range 2 { // fetched, then from the cache (its log line too)
		r := h.extract(u).Results[0]
		if !r.OK() || r.URL != u {
			t.Fatalf("row %+v: want the page, its URL as given", r)
		}
	}
	files, _ := filepath.Glob(filepath.Join(h.home, "logs", "web_tools_debug_*.json"))
	if len(files) != 2 {
		t.Fatalf("debug files: %v", files)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, sec := range secrets {
			if strings.Contains(string(b), sec) {
				t.Errorf("%s keeps %s:\n%s", f, sec, b)
			}
		}
		if !strings.Contains(string(b), "code=[REDACTED]") {
			t.Errorf("%s: the URL is not in it, redacted:\n%s", f, b)
		}
	}
	for _, sec := range secrets {
		if strings.Contains(logs.String(), sec) {
			t.Errorf("the log keeps %s:\n%s", sec, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "code=[REDACTED]") {
		t.Errorf("no log line names the URL, redacted:\n%s", logs.String())
	}
}
