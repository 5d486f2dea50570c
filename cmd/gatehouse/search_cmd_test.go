package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

func writeHome(t *testing.T, config, dotenv string) string {
	t.Helper()
	home := t.TempDir()
	if config != "" {
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if dotenv != "" {
		if err := os.WriteFile(filepath.Join(home, ".env"), []byte(dotenv), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// Keys the doctor tests put in .env; none may appear in any output.
const (
	testXAIKey   = "xai-DOCTORSECRET0123456789abcdef"
	testBraveKey = "BSA-DOCTORSECRET0123456789abcd"
)

func TestDoctorSearchOnlyTrap(t *testing.T) {
	home := writeHome(t, "web:\n  backend: xai\n", "XAI_API_KEY="+testXAIKey+"\n")
	code, out, errs := cli(t, home, "doctor")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a configured selection cannot work)\n%s%s", code, out, errs)
	}
	for _, want := range []string{"search_only_trap", "gatehouse config set web.extract_backend", "search   → xai (keyed)", "XAI_API_KEY=set"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errs, testXAIKey) {
		t.Fatal("doctor printed a key value")
	}
	// Fixing it as advised makes doctor pass.
	if code, out, errs := cli(t, home, "config", "set", "web.extract_backend", "direct"); code != 0 {
		t.Fatalf("config set: %d %s %s", code, out, errs)
	}
	if code, out, _ := cli(t, home, "doctor"); code != 0 || !strings.Contains(out, "extract  → direct") {
		t.Fatalf("after the fix: exit %d\n%s", code, out)
	}
}

func TestDoctorMissingKeyJSON(t *testing.T) {
	home := writeHome(t, "web:\n  search_backend: brave\n  extract_backend: tavily\n", "XAI_API_KEY="+testXAIKey+"\nUNRELATED="+testBraveKey+"\n")
	t.Setenv("TAVILY_API_KEY", "")
	t.Setenv("BRAVE_SEARCH_API_KEY", "")
	code, out, errs := cli(t, home, "doctor", "--json")
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var rep struct {
		OK  bool `json:"ok"`
		Web struct {
			Search struct {
				Reason string `json:"reason"`
				Error  string `json:"error"`
			} `json:"search"`
			Extract struct {
				Reason string `json:"reason"`
				Error  string `json:"error"`
			} `json:"extract"`
			Providers []struct {
				Name string `json:"name"`
				Key  *struct {
					Var     string `json:"var"`
					Present bool   `json:"present"`
				} `json:"key"`
			} `json:"providers"`
			Advice []struct {
				Severity, Code, Fix string
			} `json:"advice"`
		} `json:"web"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.OK || rep.Web.Search.Reason != "missing_key" || !strings.Contains(rep.Web.Search.Error, "BRAVE_SEARCH_API_KEY") ||
		rep.Web.Extract.Reason != "missing_key" || !strings.Contains(rep.Web.Extract.Error, "TAVILY_API_KEY") {
		t.Fatalf("%+v", rep.Web)
	}
	for _, p := range rep.Web.Providers {
		if p.Name == "xai" && (p.Key == nil || !p.Key.Present) {
			t.Error("xai key presence not reported")
		}
	}
	if len(rep.Web.Advice) < 2 || rep.Web.Advice[0].Severity != "error" || rep.Web.Advice[0].Fix == "" {
		t.Errorf("advice %+v", rep.Web.Advice)
	}
	if strings.Contains(out+errs, testXAIKey) || strings.Contains(out+errs, testBraveKey) {
		t.Fatal("doctor --json printed a key value")
	}
}

// gatehouse search end to end against a local SearXNG (a self-hosted origin on
// loopback, allowed because SEARXNG_URL names it), and extract --backend.
func TestSearchCommandAndExtractBackend(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(r.Context())
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"results": []any{
			map[string]any{"url": "https://go.dev/", "title": "The Go Programming Language", "content": "Go is open source."},
			map[string]any{"url": "http://169.254.169.254/latest/", "title": "meta", "content": "x"},
			map[string]any{"url": "https://c.example/", "title": "C", "content": "c"},
		}})
	}))
	defer srv.Close()
	home := writeHome(t, "web:\n  search_backend: searxng\n", "SEARXNG_URL="+srv.URL+"\n")
	code, out, errs := cli(t, home, "search", "--limit", "2", "golang", "site:go.dev")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if got == nil || got.URL.Query().Get("q") != "golang site:go.dev" || got.URL.Query().Get("format") != "json" {
		t.Fatalf("request %v", got)
	}
	for _, want := range []string{"1. The Go Programming Language", "https://go.dev/", "UNSAFE [ssrf_metadata]", "(2 results, via searxng)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = cli(t, home, "search", "--json", "golang")
	var resp struct {
		Success bool `json:"success"`
		Data    struct {
			Web []struct {
				Position int `json:"position"`
			} `json:"web"`
		} `json:"data"`
		Meta struct {
			Provider string `json:"provider"`
		} `json:"meta"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &resp) != nil || !resp.Success || len(resp.Data.Web) != 3 || resp.Meta.Provider != "searxng" {
		t.Fatalf("json: %d %s", code, out)
	}
	// extract --backend xai: the strict search-only error for this call, exit 1.
	code, out, _ = cli(t, home, "extract", "--json", "--backend", "xai", "https://93.184.216.34/")
	if code != 1 || !strings.Contains(out, "search_only_backend") {
		t.Fatalf("extract --backend xai: %d %s", code, out)
	}
	code, _, errs = cli(t, home, "extract", "--backend", "nosuch", "https://93.184.216.34/")
	if code != 1 || !strings.HasPrefix(errs, "FAILED [unknown_backend]: ") {
		t.Fatalf("extract --backend nosuch: %d %s", code, errs)
	}
}

// TestBackendFlagErrorsNameTheFlag: a --backend value that cannot work is
// blamed on the flag, and its fix is another flag value, never a config key
// the user did not set (newcomer review C4).
func TestBackendFlagErrorsNameTheFlag(t *testing.T) {
	home := writeHome(t, "", "")
	for _, k := range []string{"TAVILY_API_KEY", "SEARXNG_URL"} {
		t.Setenv(k, "")
	}
	cases := []struct{ cmd, backend, code string }{
		{"extract", "nosuch", "unknown_backend"},
		{"extract", "xai", "search_only_backend"},
		{"extract", "tavily", "missing_key"},
		{"search", "nosuch", "unknown_backend"},
		{"search", "searxng", "missing_key"},
	}
	for _, c := range cases {
		arg := "https://93.184.216.34/"
		if c.cmd == "search" {
			arg = "golang"
		}
		code, out, errs := cli(t, home, c.cmd, "--json", "--backend", c.backend, arg)
		all := out + errs
		if code != 1 || !strings.Contains(all, c.code) {
			t.Errorf("%s --backend %s: exit %d, want %s:\n%s", c.cmd, c.backend, code, c.code, all)
			continue
		}
		if !strings.Contains(all, "--backend") || strings.Contains(all, "web.extract_backend") || strings.Contains(all, "web.search_backend") {
			t.Errorf("%s --backend %s: the message must blame the flag, not a config key:\n%s", c.cmd, c.backend, all)
		}
	}
}

func TestDoctorListsUnavailableSearchTool(t *testing.T) {
	home := writeHome(t, "web:\n  keyless_fallback: false\n", "")
	for _, k := range []string{"TAVILY_API_KEY", "PERPLEXITY_API_KEY", "EXA_API_KEY", "PARALLEL_API_KEY", "KEENABLE_API_KEY", "FIRECRAWL_API_KEY", "FIRECRAWL_API_URL", "SEARXNG_URL", "BRAVE_SEARCH_API_KEY"} {
		t.Setenv(k, "")
	}
	code, out, _ := cli(t, home, "doctor")
	// Nothing configured: not an error (no stored selection), but said.
	if code != 0 || !strings.Contains(out, "tool web_search is unavailable") || !strings.Contains(out, "search   → CANNOT RESOLVE [no_provider]") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestSearchKeepsTypedSelectionErrors: a search backend that cannot work is
// refused with its own reason code (unknown_backend, missing_key,
// provider_disabled), the one doctor and docs/providers.md name, not a
// generic tool_unavailable.
func TestSearchKeepsTypedSelectionErrors(t *testing.T) {
	t.Setenv("TAVILY_API_KEY", "")
	cases := []struct{ yaml, want string }{
		{"web:\n  search_backend: nonsense\n", "unknown_backend"},
		{"web:\n  search_backend: tavily\n", "missing_key"},
		{"web:\n  search_backend: tavily\n  disabled_providers: [tavily]\n", "provider_disabled"},
	}
	for _, c := range cases {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := cli(t, home, "search", "--json", "harbour tides")
		if code != 1 || !strings.Contains(out, `"reason": "`+c.want+`"`) && !strings.Contains(out, `"reason":"`+c.want+`"`) {
			t.Errorf("%q: exit %d, want reason %s\nout: %s\nerr: %s", c.yaml, code, c.want, out, errs)
		}
	}
}

// TestAutoKeylessSearchDisclosedInCLI: doctor says, before any search, that
// an unconfigured search goes to a keyless third party picked
// automatically; a search result chosen that way prints a note naming the
// vendor; `config set web.auto_keyless_search false` makes search refuse
// with no_provider (issue 16 item 12).
func TestAutoKeylessSearchDisclosedInCLI(t *testing.T) {
	home := writeHome(t, "", "")
	code, out, errs := cli(t, home, "doctor")
	if code != 0 || !strings.Contains(out, "note: No search backend is configured, so every search query goes to a keyless third-party free service picked automatically") {
		t.Errorf("doctor: exit %d\n%s%s", code, out, errs)
	}
	var b bytes.Buffer
	a := &app{stdout: &b}
	a.printSearch(&tools.Result{Value: &tools.SearchOutput{SearchResponse: &web.SearchResponse{Success: true,
		Data: &web.SearchData{Web: []web.SearchRow{{Title: "T", URL: "https://t.example/", Position: 1}}},
		Meta: &web.SearchMeta{Provider: "keyless", ServedBy: "exa", AutoSelected: "keyless", Notice: provider.AutoKeylessNotice("exa")}}}})
	if !strings.Contains(b.String(), "note: No search backend is configured, so this query went to exa's keyless free search service") {
		t.Errorf("search text:\n%s", b.String())
	}
	if code, _, errs := cli(t, home, "config", "set", "web.auto_keyless_search", "false"); code != 0 {
		t.Fatalf("config set: exit %d %s", code, errs)
	}
	code, out, errs = cli(t, home, "search", "golang")
	if code != 1 || out != "" || !strings.HasPrefix(errs, "FAILED [no_provider]: ") || !strings.Contains(errs, "web.auto_keyless_search is false") {
		t.Errorf("search with auto keyless off: exit %d\n%s%s", code, out, errs)
	}
	if _, out, _ := cli(t, home, "doctor"); strings.Contains(out, "note: No search backend") {
		t.Errorf("doctor with auto keyless off still says queries go to a keyless service:\n%s", out)
	}
}

// TestFailedAutoKeylessSearchNotedInCLI: a failed search whose backend was
// picked automatically prints, in text mode, the FAILED line and then the
// same "note:" disclosure a successful one prints (breaker7 D8); a failure
// of a backend chosen by name prints the FAILED line alone.
func TestFailedAutoKeylessSearchNotedInCLI(t *testing.T) {
	failed := func(meta *web.SearchMeta) string {
		err := searchFailure(&tools.Result{Refused: true, Value: &tools.SearchOutput{SearchResponse: &web.SearchResponse{
			Error: "Exa MCP endpoint refused: HTTP 503.", Reason: "http_status", Meta: meta}}}, "gatehouse search")
		var b bytes.Buffer
		printFailure(&b, failureCode(err, isUsage(err)), failureMessage(err))
		return b.String()
	}
	notice := provider.AutoKeylessFailedNotice([]string{"exa"})
	got := failed(&web.SearchMeta{Provider: "keyless", AutoSelected: "keyless", Tried: []string{"exa"}, Notice: notice})
	if want := "FAILED [http_status]: Exa MCP endpoint refused: HTTP 503.\nnote: " + notice + "\n"; got != want {
		t.Errorf("auto keyless failure:\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(notice, "routed to exa's keyless free search service") {
		t.Errorf("notice: %s", notice)
	}
	if got := failed(nil); got != "FAILED [http_status]: Exa MCP endpoint refused: HTTP 503.\n" {
		t.Errorf("chosen backend failure: %q", got)
	}
}
