package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// gatehouseBinary builds the CLI once per test binary.
func gatehouseBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gatehouse-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "gatehouse")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildFailure{string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("building gatehouse: %v", buildErr)
	}
	return binPath
}

type buildFailure struct{ out string }

func (b *buildFailure) Error() string { return b.out }

func TestMain(m *testing.M) {
	runAsCLIIfAsked() // browse_test.go: the test binary doubles as the CLI
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// mcpHome returns a GATEHOUSE_HOME whose config lets the gates reach
// loopback test pages (DESIGN §5: tests enable security.allow_private_urls in
// a temp home; the production default stays closed).
func mcpHome(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  allow_private_urls: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

func testPage(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html><head><title>Gatehouse MCP test page</title></head><body><article><h1>Gatehouse MCP test page</h1><p>The quick brown fox reads pages through the gates, one sentence at a time.</p></article></body></html>`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// startHTTP runs `gatehouse mcp --http 127.0.0.1:0` and returns its endpoint.
func startHTTP(t *testing.T, bin, home string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"mcp", "--http", "127.0.0.1:0"}, extra...)...)
	cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+home)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	re := regexp.MustCompile(`MCP streamable HTTP on (\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(20 * time.Second):
		t.Fatal("gatehouse mcp --http did not report its address")
	}
	return ""
}

// TestMCPBinaryWithGoClient runs the real binary: stdio through the Go SDK's
// CommandTransport, and HTTP.
func TestMCPBinaryWithGoClient(t *testing.T) {
	bin := gatehouseBinary(t)
	home := mcpHome(t)
	page := testPage(t)
	check := func(t *testing.T, cs *mcp.ClientSession) {
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(lt.Tools) < 3 {
			t.Fatalf("tools/list: %v %v", err, lt)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "web_extract", Arguments: map[string]any{"urls": []string{page.URL + "/x"}}})
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Results []struct {
				Title   string  `json:"title"`
				Content string  `json:"content"`
				Error   *string `json:"error"`
			} `json:"results"`
		}
		json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &v)
		if len(v.Results) != 1 || v.Results[0].Error != nil || !strings.Contains(v.Results[0].Content, "quick brown fox") {
			t.Fatalf("web_extract: %s", res.Content[0].(*mcp.TextContent).Text)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		cs := mcpStdio(t, bin, home, nil)
		defer cs.Close()
		check(t, cs)
	})
	t.Run("http", func(t *testing.T) {
		u := startHTTP(t, bin, home)
		c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: u, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		check(t, cs)
	})
}

func TestMCPNonLoopbackWithoutTokenRefusesToStart(t *testing.T) {
	t.Setenv("GATEHOUSE_MCP_TOKEN", "")
	code, _, errs := cli(t, t.TempDir(), "mcp", "--http", "0.0.0.0:0")
	if code != 1 || !strings.Contains(errs, "without a bearer token") || !strings.Contains(errs, "--token") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// A bearer token of white space only (no client can send it: every request
// would get 401) is refused at start like a usage error (breaker5 D24).
func TestMCPBlankTokenRefusesToStart(t *testing.T) {
	t.Setenv("GATEHOUSE_MCP_TOKEN", " ")
	code, _, errs := cli(t, t.TempDir(), "mcp", "--http", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errs, "white space") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestNPMClient runs a published MCP client from npm (the TypeScript SDK's
// Client, test/mcpclient) against `gatehouse mcp` over stdio and HTTP. CI
// installs it (scripts/test: npm ci); under CI=true a missing node or
// package fails the test instead of skipping it.
func TestNPMClient(t *testing.T) {
	dir, _ := filepath.Abs(filepath.Join("..", "..", "test", "mcpclient"))
	unavailable := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm MCP client cannot run in CI: %s (scripts/test runs npm ci in test/mcpclient)", why)
		}
		t.Skipf("npm MCP client not installed: %s (run: npm ci --prefix test/mcpclient)", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node not found")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		unavailable("test/mcpclient/node_modules missing")
	}
	bin := gatehouseBinary(t)
	home := mcpHome(t)
	page := testPage(t)
	run := func(t *testing.T, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "client.mjs")}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+home)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node client %v: %v\n%s\n%s", args[0], err, out, stderr.String())
		}
		var sum struct {
			OK      bool     `json:"ok"`
			Tools   []string `json:"tools"`
			Title   string   `json:"title"`
			Refused string   `json:"refused"`
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		err = json.Unmarshal([]byte(lines[len(lines)-1]), &sum)
		// Over MCP the page's title is inside the untrusted-content boundary.
		title, _, wrapped := tools.Unwrap(sum.Title)
		if err != nil || !sum.OK || !wrapped || title != "Gatehouse MCP test page" || sum.Refused != "read_outside_store" {
			t.Fatalf("node client summary: %v\n%s", err, out)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		run(t, "stdio", bin, page.URL+"/npm", "quick brown fox")
	})
	t.Run("http", func(t *testing.T) {
		u := startHTTP(t, bin, home, "--token", "npm-test-token")
		run(t, "http", u, page.URL+"/npm-http", "quick brown fox", "npm-test-token")
	})
}

// TestMCPBinaryOptions: mcp.content_boundaries: false in config.yaml turns
// the boundaries off; GATEHOUSE_MCP_TOKEN makes HTTP demand the token.
func TestMCPBinaryOptions(t *testing.T) {
	bin := gatehouseBinary(t)
	page := testPage(t)
	home := mcpHome(t)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  allow_private_urls: true\nmcp:\n  content_boundaries: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := mcpStdio(t, bin, home, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "web_extract", Arguments: map[string]any{"urls": []string{page.URL + "/raw"}}})
	cs.Close()
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "UNTRUSTED WEB CONTENT") || !strings.Contains(text, "quick brown fox") {
		t.Fatalf("boundaries should be off: %s", text)
	}

	t.Setenv("GATEHOUSE_MCP_TOKEN", "env-token-123")
	u := startHTTP(t, bin, home)
	req, _ := http.NewRequest("POST", u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token with GATEHOUSE_MCP_TOKEN set: status %d", resp.StatusCode)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err = c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: u, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearerRT("env-token-123")}}, nil)
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	cs.Close()
}

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPListsWebSearchOnlyWhenABackendResolves (issue 11): over MCP,
// web_search is in tools/list only when a search backend resolves; with a
// loopback SearXNG configured it is listed and a call returns its rows.
func TestMCPListsWebSearchOnlyWhenABackendResolves(t *testing.T) {
	bin := gatehouseBinary(t)
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"results":[{"title":"Tide tables","url":"https://tides.example/","content":"High and low water."}]}`))
	}))
	t.Cleanup(searx.Close)
	session := func(t *testing.T, yaml, dotenv string) *mcp.ClientSession {
		home := t.TempDir()
		os.WriteFile(filepath.Join(home, "config.yaml"), []byte(yaml), 0o600)
		os.WriteFile(filepath.Join(home, ".env"), []byte(dotenv), 0o600)
		cs := mcpStdio(t, bin, home, []string{"SEARXNG_URL=", "TAVILY_API_KEY="})
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	listed := func(t *testing.T, cs *mcp.ClientSession) bool {
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lt.Tools {
			if tl.Name == "web_search" {
				return true
			}
		}
		return false
	}
	t.Run("missing key", func(t *testing.T) {
		if listed(t, session(t, "web:\n  search_backend: tavily\n", "")) {
			t.Error("web_search listed although tavily has no key")
		}
	})
	t.Run("searxng", func(t *testing.T) {
		cs := session(t, "web:\n  search_backend: searxng\n", "SEARXNG_URL="+searx.URL+"\n")
		if !listed(t, cs) {
			t.Fatal("web_search not listed with a resolving backend")
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "web_search", Arguments: map[string]any{"query": "tides"}})
		if err != nil || res.IsError {
			t.Fatalf("web_search: %v %+v", err, res)
		}
		if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "https://tides.example/") {
			t.Fatalf("web_search result lacks the row: %s", txt)
		}
	})
}

// TestMCPServesWithBrokenConfig: with a config.yaml that does not parse,
// `gatehouse mcp` (the built binary over stdio) still answers initialize and
// tools/list, and refuses every tool call with config_invalid naming the
// file, line:column and the fix, as the CLI commands do (newcomer review
// C5).
func TestMCPServesWithBrokenConfig(t *testing.T) {
	bin := gatehouseBinary(t)
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.yaml")
	os.WriteFile(cfgPath, []byte("web:\n  extract_backend: [direct\nsecurity:\n  x: 1\n"), 0o600)
	cs := mcpStdio(t, bin, home, nil)
	defer cs.Close()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range lt.Tools {
		names[tl.Name] = true
	}
	if !names["web_extract"] || !names["web_check"] {
		t.Fatalf("tools/list: %v", names)
	}
	for _, call := range []mcp.CallToolParams{
		{Name: "web_extract", Arguments: map[string]any{"urls": []string{"https://example.com/"}}},
		{Name: "web_check", Arguments: map[string]any{"urls": []string{"https://example.com/"}}},
	} {
		res, err := cs.CallTool(context.Background(), &call)
		if err != nil {
			t.Fatalf("%s: %v", call.Name, err)
		}
		txt := res.Content[0].(*mcp.TextContent).Text
		// Over MCP the file is named under $GATEHOUSE_HOME, never by the
		// server's own path (issue 16 item 4).
		if !res.IsError || !strings.Contains(txt, "config_invalid") || !strings.Contains(txt, "$GATEHOUSE_HOME/config.yaml:3:1") || strings.Contains(txt, home) || !strings.Contains(txt, "Fix the file") {
			t.Errorf("%s: want a config_invalid refusal naming $GATEHOUSE_HOME/config.yaml:3:1 and the fix, got isError=%v %s", call.Name, res.IsError, txt)
		}
	}
}

// TestMCPReloadsChangedConfig: a running `gatehouse mcp` re-reads a changed
// config.yaml (spec §A8's 30 s policy cache; --config-reload makes the
// interval short here): a blocklist entry added mid-session is enforced by
// the next call, a config broken mid-session refuses calls with
// config_invalid (fail closed, as at start-up), and fixing it serves again
// (breaker5 D23: the server read the config once, at start).
func TestMCPReloadsChangedConfig(t *testing.T) {
	bin := gatehouseBinary(t)
	home := mcpHome(t)
	cfgPath := filepath.Join(home, "config.yaml")
	page := testPage(t)
	cs := mcpStdio(t, bin, home, nil, "--config-reload", "200ms")
	defer cs.Close()
	n := 0
	extract := func() (bool, string) {
		n++
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "web_extract", Arguments: map[string]any{
			"urls": []string{page.URL + "/p" + strings.Repeat("x", n)}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.IsError, res.Content[0].(*mcp.TextContent).Text
	}
	// change writes the config, then calls web_extract until the call's
	// result passes ok (the reload has happened) or 10 s have gone by.
	change := func(what, yaml string, ok func(isErr bool, txt string) bool) {
		t.Helper()
		if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			isErr, txt := extract()
			if ok(isErr, txt) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: isError=%v %s", what, isErr, txt)
			}
		}
	}
	if isErr, txt := extract(); isErr || !strings.Contains(txt, "quick brown fox") {
		t.Fatalf("before the change: %s", txt)
	}
	change("after adding a blocklist entry", "security:\n  allow_private_urls: true\n  website_blocklist:\n    enabled: true\n    domains: [\"127.0.0.1\"]\n", func(_ bool, txt string) bool {
		return strings.Contains(txt, "policy_blocked") && !strings.Contains(txt, "quick brown fox")
	})
	change("after breaking the config", "security:\n  allow_private_urls: true\n  website_blocklist: [oops\n", func(isErr bool, txt string) bool {
		return isErr && strings.Contains(txt, "config_invalid")
	})
	if isErr, txt := extract(); !isErr || !strings.Contains(txt, "config_invalid") || !strings.Contains(txt, "$GATEHOUSE_HOME/config.yaml") || strings.Contains(txt, home) {
		t.Fatalf("after breaking the config: isError=%v %s", isErr, txt)
	}
	change("after fixing the config", "security:\n  allow_private_urls: true\n", func(isErr bool, txt string) bool {
		return !isErr && strings.Contains(txt, "quick brown fox")
	})
}

// mcpStdio starts `gatehouse mcp args…` (bin) with GATEHOUSE_HOME=home and
// the extra environment env, and connects the Go SDK's client to it over
// stdio (initialize done); the caller closes the session.
func mcpStdio(tb testing.TB, bin, home string, env []string, args ...string) *mcp.ClientSession {
	tb.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(append(os.Environ(), "GATEHOUSE_HOME="+home), env...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		tb.Fatalf("initialize gatehouse mcp: %v", err)
	}
	return cs
}

// TestMCPBinaryProtocolVersionsWithTokens runs `gatehouse mcp --http
// --tokens FILE`: a 2026-07-28 client (no initialize, no session) and a
// 2025-06-18 client of one principal list the same tools and call
// web_extract on a loopback page; a token not in the file is refused.
func TestMCPBinaryProtocolVersionsWithTokens(t *testing.T) {
	bin := gatehouseBinary(t)
	home := mcpHome(t)
	page := testPage(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	// printf %s tok-alice | sha256sum
	sum := sha256.Sum256([]byte("tok-alice"))
	if err := os.WriteFile(tokens, []byte("# principals\nalice:"+hex.EncodeToString(sum[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u := startHTTP(t, bin, home, "--tokens", tokens)
	var lists []string
	for _, v := range []string{"2026-07-28", "2025-06-18"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: u, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: bearerRT("tok-alice")}}, &mcp.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != v {
			t.Errorf("%s client negotiated %s", v, got)
		}
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("%s tools/list: %v", v, err)
		}
		b, _ := json.Marshal(lt.Tools)
		lists = append(lists, string(b))
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "web_extract", Arguments: map[string]any{"urls": []string{page.URL + "/x"}}})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "quick brown fox") {
			t.Fatalf("%s web_extract: %v %+v", v, err, res)
		}
		cs.Close()
	}
	if lists[0] != lists[1] {
		t.Errorf("tools/list differs between 2026-07-28 and 2025-06-18")
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	if cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: u, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearerRT("tok-mallory")}}, nil); err == nil {
		cs.Close()
		t.Error("a token not in the file was accepted")
	}
}
