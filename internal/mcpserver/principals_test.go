package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
	"github.com/gatehouse-dev/gatehouse/internal/metrics"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

// recordRT records the JSON-RPC methods and Mcp-Session-Id headers a client
// sends, and adds its bearer token.
type recordRT struct {
	token string
	mu    sync.Mutex
	calls []string // method of each POST (first message)
	sids  []string // Mcp-Session-Id of each request
}

func (rt *recordRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if rt.token != "" {
		r.Header.Set("Authorization", "Bearer "+rt.token)
	}
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(b, &m)
		rt.mu.Lock()
		rt.calls = append(rt.calls, m.Method)
		rt.sids = append(rt.sids, r.Header.Get("Mcp-Session-Id"))
		rt.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

func connectRecorded(t *testing.T, url, version string, rt *recordRT) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true,
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestProtocolVersionsSideBySide: a 2026-07-28 client (server/discover, no
// initialize, no Mcp-Session-Id, _meta per request) and 2025-06-18 and
// 2025-11-25 clients (initialize, a session) list the same tools, byte for
// byte, and get the same web_extract result from one HTTP server.
func TestProtocolVersionsSideBySide(t *testing.T) {
	f := newFixture(t, mcpserver.Options{DisableContentBoundaries: true})
	hs := f.listen(t, mcpserver.HTTPOptions{})
	var lists, results []string
	for _, v := range []string{"2026-07-28", "2025-06-18", "2025-11-25"} {
		rt := &recordRT{}
		cs := connectRecorded(t, hs.URL, v, rt)
		if got := cs.InitializeResult().ProtocolVersion; got != v {
			t.Fatalf("%s client negotiated %s", v, got)
		}
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("%s tools/list: %v", v, err)
		}
		b, _ := json.Marshal(lt.Tools)
		lists = append(lists, string(b))
		_, res := callTool(t, cs, "web_extract", map[string]any{"urls": []string{f.site.URL("/a")}})
		row := res["results"].([]any)[0].(map[string]any)
		if !strings.Contains(row["content"].(string), "Alpha content") {
			t.Fatalf("%s web_extract: %v", v, res)
		}
		delete(row, "meta") // cached / age_s differ between the first call and the next
		b, _ = json.Marshal(res)
		results = append(results, string(b))

		rt.mu.Lock()
		calls, sids := slices.Clone(rt.calls), slices.Clone(rt.sids)
		rt.mu.Unlock()
		if v == "2026-07-28" {
			if calls[0] != "server/discover" || slices.Contains(calls, "initialize") {
				t.Errorf("2026-07-28 client sent %v, want server/discover first and no initialize", calls)
			}
			if slices.ContainsFunc(sids, func(s string) bool { return s != "" }) {
				t.Errorf("2026-07-28 client sent an Mcp-Session-Id: %q", sids)
			}
		} else if calls[0] != "initialize" || sids[len(sids)-1] == "" {
			t.Errorf("%s client: methods %v, session ids %q; want initialize and a session", v, calls, sids)
		}
	}
	for i := 1; i < len(lists); i++ {
		if lists[i] != lists[0] {
			t.Errorf("tools/list differs between protocol versions:\n%s\n%s", lists[0], lists[i])
		}
		if results[i] != results[0] {
			t.Errorf("web_extract result differs between protocol versions:\n%s\n%s", results[0], results[i])
		}
	}
}

// TestStdioSessionless: over stdio, a 2026-07-28 client (server/discover,
// _meta per request) and a 2025-06-18 one are both served.
func TestStdioSessionless(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	for _, v := range []string{"2026-07-28", "2025-06-18"} {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); f.srv.Run(ctx, mcpserver.NewLineTransport(sr, sw)) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil).Connect(context.Background(),
			&mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatal(v, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != v {
			t.Errorf("stdio %s client negotiated %s", v, got)
		}
		_, res := callTool(t, cs, "web_extract", map[string]any{"urls": []string{f.site.URL("/b")}})
		if !strings.Contains(res["results"].([]any)[0].(map[string]any)["content"].(string), "Bravo content") {
			t.Errorf("stdio %s web_extract: %v", v, res)
		}
		cs.Close()
		cancel()
		<-done
	}
}

// TestToolsListDeterministic: tools/list is the same bytes every time and
// sorted by name.
func TestToolsListDeterministic(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	hs := f.listen(t, mcpserver.HTTPOptions{})
	var raw []string
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(sessionlessBody(1, "tools/list", map[string]any{})))
		setSessionless(req, "", "tools/list", "")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		raw = append(raw, string(b))
	}
	if raw[0] != raw[1] || !strings.Contains(raw[0], `"web_extract"`) {
		t.Fatalf("two tools/list answers differ or lack tools:\n%s\n%s", raw[0], raw[1])
	}
	cs := httpClient(t, hs.URL, "", nil)
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !slices.IsSorted(names) || len(names) < 3 {
		t.Errorf("tools/list not sorted by name: %v", names)
	}
}

// sessionlessBody is a 2026-07-28 request: version and capabilities in _meta.
func sessionlessBody(id int, method string, params map[string]any) string {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// setSessionless sets the headers of a 2026-07-28 request: the version,
// Mcp-Method and, for tools/call, Mcp-Name (the SDK checks them against the
// body).
func setSessionless(req *http.Request, token, method, name string) {
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
}

func tokensOf(t *testing.T, nameTok ...string) *principal.Tokens {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(nameTok); i += 2 {
		sum := sha256.Sum256([]byte(nameTok[i+1]))
		b.WriteString(nameTok[i] + ":" + hex.EncodeToString(sum[:]) + "\n")
	}
	toks, err := principal.ParseTokens([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

// whoami is a test tool that answers the principal its context carries.
func whoami() *tools.Registry {
	type in struct{}
	type out struct {
		Principal string `json:"principal"`
		Task      string `json:"task"`
	}
	r := tools.NewRegistry()
	r.Add(tools.New(tools.Spec{Name: "whoami", Description: "test"}, func(ctx context.Context, c *tools.Call, _ in) (out, error) {
		return out{Principal: principal.From(ctx), Task: c.Task}, nil
	}))
	return r
}

// TestPrincipalsScoped: with a tokens file, each call runs as the principal
// of its bearer token (in both protocol flows; stdio is principal.Default);
// principal Y reads neither principal X's stored page (read_not_found, as a
// missing page) nor its resource, and X's Mcp-Session-Id is unknown to Y.
func TestPrincipalsScoped(t *testing.T) {
	f := newFixture(t, mcpserver.Options{Registry: whoami()})
	hs := f.listen(t, mcpserver.HTTPOptions{Tokens: tokensOf(t, "xavier", "token-x", "yvonne", "token-y")})
	for _, v := range []string{"2026-07-28", "2025-06-18"} {
		x := httpClientVersion(t, hs.URL, "token-x", v, nil)
		y := httpClientVersion(t, hs.URL, "token-y", v, nil)
		_, rx := callTool(t, x, "whoami", map[string]any{})
		if rx["principal"] != "xavier" {
			t.Errorf("%s: X's call runs as %v", v, rx["principal"])
		}
		_, ry := callTool(t, y, "whoami", map[string]any{})
		if ry["principal"] != "yvonne" {
			t.Errorf("%s: Y's call runs as %v", v, ry["principal"])
		}
		if rx["task"] == ry["task"] {
			t.Errorf("%s: X and Y share the task %v", v, rx["task"])
		}
		// Sessionless: one task per principal, whichever connection.
		_, rx2 := callTool(t, httpClientVersion(t, hs.URL, "token-x", v, nil), "whoami", map[string]any{})
		if same := rx2["task"] == rx["task"]; same != (v == "2026-07-28") {
			t.Errorf("%s: X's tasks on two connections: %v and %v", v, rx["task"], rx2["task"])
		}
		_, r := callTool(t, x, "web_extract", map[string]any{"urls": []string{f.site.URL("/long")}, "char_limit": 2000})
		m := footerRe.FindStringSubmatch(r["results"].([]any)[0].(map[string]any)["content"].(string))
		if m == nil {
			t.Fatalf("%s: no web_read footer: %v", v, r)
		}
		if res, r := callTool(t, x, "web_read", map[string]any{"path": m[1]}); res.IsError {
			t.Fatalf("%s: X cannot read its own page: %v", v, r)
		}
		res, ry := callTool(t, y, "web_read", map[string]any{"path": m[1]})
		_, missing := callTool(t, y, "web_read", map[string]any{"path": "site.test-0123456789.md"})
		if !res.IsError || ry["reason"] != "read_not_found" || missing["reason"] != "read_not_found" {
			t.Errorf("%s: Y reading X's page: isError=%v %v (a missing page: %v); want read_not_found", v, res.IsError, ry, missing)
		}
		if _, err := y.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tools.StoreURIPrefix + m[1]}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: Y's resources/read of X's page: %v, want not found", v, err)
		}
		if v == "2026-07-28" {
			continue
		}
		// X's session id, sent with Y's token, is answered as an unknown id.
		post := func(sid string) (int, string) {
			req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer token-y")
			req.Header.Set("Mcp-Session-Id", sid)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		st, body := post(x.ID())
		st2, body2 := post("NOSUCHSESSION0000000000000000000")
		if st != http.StatusNotFound || st != st2 || body != body2 {
			t.Errorf("Y with X's session id: %d %s; with an unknown id: %d %s", st, body, st2, body2)
		}
	}
	// A wrong token is 401.
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(sessionlessBody(1, "tools/list", map[string]any{})))
	setSessionless(req, "token-z", "tools/list", "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", resp.StatusCode)
	}
	// stdio is principal.Default.
	if _, r := callTool(t, f.stdio(t, nil), "whoami", map[string]any{}); r["principal"] != principal.Default {
		t.Errorf("stdio call runs as %v", r["principal"])
	}
}

// callRaw posts a sessionless tools/call with token and returns the status,
// the Retry-After header and the body.
func callRaw(t *testing.T, url, token string, args map[string]any) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(sessionlessBody(1, "tools/call", map[string]any{"name": "web_extract", "arguments": args})))
	setSessionless(req, token, "tools/call", "web_extract")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// TestPrincipalLimits: a principal over its concurrency cap gets 429
// too_many_calls and over its rate 429 rate_limited, each with Retry-After;
// another principal is not affected.
func TestPrincipalLimits(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	toks := tokensOf(t, "xavier", "token-x", "yvonne", "token-y")
	a := map[string]any{"urls": []string{f.site.URL("/a")}}

	hs := f.listen(t, mcpserver.HTTPOptions{Tokens: toks, Limiter: principal.NewLocal(principal.Limits{MaxCalls: 1, Rate: 1000})})
	hung := make(chan struct{})
	go func() {
		defer close(hung)
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(sessionlessBody(1, "tools/call",
			map[string]any{"name": "web_extract", "arguments": map[string]any{"urls": []string{f.site.URL("/hang")}}})))
		setSessionless(req, "token-x", "tools/call", "web_extract")
		if resp, err := http.DefaultClient.Do(req); err == nil { // the server's Close ends it
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	f.waitHung(t)
	st, ra, body := callRaw(t, hs.URL, "token-x", a)
	if st != http.StatusTooManyRequests || ra == "" || !strings.Contains(body, `"reason":"too_many_calls"`) {
		t.Errorf("over the cap: %d Retry-After=%q %s", st, ra, body)
	}
	if st, _, body := callRaw(t, hs.URL, "token-y", a); st != http.StatusOK || !strings.Contains(body, "Alpha content") {
		t.Errorf("another principal under its cap: %d %s", st, body)
	}
	hs.Close() // interrupts the hung call
	<-hung

	hs = f.listen(t, mcpserver.HTTPOptions{Tokens: toks, Limiter: principal.NewLocal(principal.Limits{MaxCalls: 4, Rate: 0.01, Burst: 1})})
	if st, _, body := callRaw(t, hs.URL, "token-x", a); st != http.StatusOK {
		t.Fatalf("first call: %d %s", st, body)
	}
	st, ra, body = callRaw(t, hs.URL, "token-x", a)
	secs, _ := strconv.Atoi(ra)
	if st != http.StatusTooManyRequests || secs < 1 || !strings.Contains(body, `"reason":"rate_limited"`) || !strings.Contains(body, "mcp.principal_rate") {
		t.Errorf("over the rate: %d Retry-After=%q %s", st, ra, body)
	}
	if st, _, _ := callRaw(t, hs.URL, "token-y", a); st != http.StatusOK {
		t.Errorf("another principal within its rate: %d", st)
	}
	// The session flow is limited the same way (the SDK client sees an error).
	x := httpClient(t, hs.URL, "token-x", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := x.CallTool(ctx, &mcp.CallToolParams{Name: "web_extract", Arguments: a}); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Errorf("session call over the rate: %v", err)
	}
}

// TestSnapshotScopedToPrincipal: a browser snapshot stored for principal X
// is read_not_found for principal Y even when Y knows its name (the name is
// a hash of the text: anyone who guesses the text of a page X browsed can
// compute it), exactly like a missing one; X reads it.
func TestSnapshotScopedToPrincipal(t *testing.T) {
	needChromium(t)
	f := newFixture(t, mcpserver.Options{Version: "test"})
	t.Cleanup(func() { f.reg.Close() })
	site := serveBigPage(f)
	hs := f.listen(t, mcpserver.HTTPOptions{Tokens: tokensOf(t, "xavier", "token-x", "yvonne", "token-y")})
	x := httpClientVersion(t, hs.URL, "token-x", "2026-07-28", nil)
	y := httpClientVersion(t, hs.URL, "token-y", "2026-07-28", nil)
	_, nav := callTool(t, x, "browser_navigate", map[string]any{"url": site.URL("/big")})
	m := regexp.MustCompile(`web_read path="(browser-snapshot-[0-9a-f]+\.txt)"`).FindStringSubmatch(fmt.Sprint(nav["snapshot"]))
	if m == nil {
		t.Fatalf("navigate: %v", nav)
	}
	if res, r := callTool(t, x, "web_read", map[string]any{"path": m[1]}); res.IsError {
		t.Fatalf("X reads its snapshot: %v", r)
	}
	res, r := callTool(t, y, "web_read", map[string]any{"path": m[1]})
	if !res.IsError || r["reason"] != "read_not_found" {
		t.Errorf("Y reads X's snapshot: isError=%v %v, want read_not_found", res.IsError, r)
	}
}

// TestSessionlessTaskExpires: a principal's sessionless task ends (its
// per-task state released) after the session idle time without calls.
func TestSessionlessTaskExpires(t *testing.T) {
	f := newFixture(t, mcpserver.Options{Registry: whoami()})
	hs := f.listen(t, mcpserver.HTTPOptions{SessionIdle: 300 * time.Millisecond})
	_, r := callTool(t, httpClientVersion(t, hs.URL, "", "2026-07-28", nil), "whoami", map[string]any{})
	task, _ := r["task"].(string)
	if !strings.HasPrefix(task, "mcp-principal-") {
		t.Fatalf("sessionless task %q", task)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, rec := range f.logs.records("mcp session ended") {
			if rec["task"] == task {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the sessionless task %s did not end after the idle time", task)
}

// TestStoreScopedByPrincipalAcrossReplicas: with a store that scopes pages by
// principal (Options.StoreScopedByPrincipal; here two servers on one home
// stand in for two replicas), a sessionless call on replica B reads the page
// the same principal stored through replica A; without it, B refuses what
// its own results did not link (read_not_found).
func TestStoreScopedByPrincipalAcrossReplicas(t *testing.T) {
	f := newFixture(t, mcpserver.Options{StoreScopedByPrincipal: true})
	a := f.listen(t, mcpserver.HTTPOptions{})
	_, r := callTool(t, httpClientVersion(t, a.URL, "", "2026-07-28", nil), "web_extract", map[string]any{"urls": []string{f.site.URL("/long")}, "char_limit": 2000})
	m := footerRe.FindStringSubmatch(r["results"].([]any)[0].(map[string]any)["content"].(string))
	if m == nil {
		t.Fatalf("no footer: %v", r)
	}
	env := tools.Env{Web: f.w.Env()}
	for _, scoped := range []bool{true, false} {
		b, err := mcpserver.New(mcpserver.Options{Registry: f.reg, Store: env.Store(), StoreScopedByPrincipal: scoped}).Listen(mcpserver.HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		res, rd := callTool(t, httpClientVersion(t, b.URL, "", "2026-07-28", nil), "web_read", map[string]any{"path": m[1]})
		if scoped && res.IsError {
			t.Errorf("scoped store: replica B refuses the principal's page: %v", rd)
		}
		if !scoped && (!res.IsError || rd["reason"] != "read_not_found") {
			t.Errorf("unscoped store: replica B reads a page its results never linked: %v", rd)
		}
	}
}

// failingLimiter stands in for a shared Limiter whose store is down.
type failingLimiter struct{}

func (failingLimiter) Acquire(context.Context, string) (func(), error) {
	return nil, reason.New("state_unavailable", "", "the shared state at redis.internal:6379 does not answer")
}

// TestLimiterPluggable: HTTPOptions.Limiter replaces the in-process one; an
// error of it that is no *principal.Refusal (a shared store down) refuses the
// call with 503, Retry-After and its reason code, and the call does not run.
func TestLimiterPluggable(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	hs := f.listen(t, mcpserver.HTTPOptions{Limiter: failingLimiter{}})
	st, ra, body := callRaw(t, hs.URL, "", map[string]any{"urls": []string{f.site.URL("/a")}})
	if st != http.StatusServiceUnavailable || ra != "1" || !strings.Contains(body, `"reason":"state_unavailable"`) || strings.Contains(body, "Alpha") {
		t.Errorf("limiter down: %d Retry-After=%q %s", st, ra, body)
	}
	if len(f.logs.records(mcpserver.LogToolCall)) != 0 {
		t.Error("a refused call ran")
	}
}

// TestListenTokenOptions: --token with --tokens is refused; a tokens file
// alone lets a non-loopback address serve.
func TestListenTokenOptions(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	toks := tokensOf(t, "xavier", "token-x")
	if _, err := f.srv.Listen(mcpserver.HTTPOptions{Token: "t", Tokens: toks}); err == nil || !strings.Contains(err.Error(), "cannot be used together") {
		t.Errorf("Token with Tokens: %v", err)
	}
	hs, err := f.srv.Listen(mcpserver.HTTPOptions{Addr: "0.0.0.0:0", Tokens: toks})
	if err != nil {
		t.Fatalf("non-loopback with a tokens file: %v", err)
	}
	hs.Close()
}

// TestPrincipalRefusalsCounted: a principal's 429 (rate_limited) counts in
// gatehouse_refusals_total by tool and reason and writes an audit refuse
// line; a tools/call naming no registered tool is labelled "other".
func TestPrincipalRefusalsCounted(t *testing.T) {
	m := metrics.New()
	var buf logBuf
	f := newFixture(t, mcpserver.Options{Metrics: m, Audit: audit.NewWriter(&buf, nil)})
	toks := tokensOf(t, "xavier", "token-x")
	hs := f.listen(t, mcpserver.HTTPOptions{Tokens: toks, Limiter: principal.NewLocal(principal.Limits{MaxCalls: 4, Rate: 0.01, Burst: 1})})
	a := map[string]any{"urls": []string{f.site.URL("/a")}}
	if st, _, body := callRaw(t, hs.URL, "token-x", a); st != http.StatusOK {
		t.Fatalf("first call: %d %s", st, body)
	}
	if st, _, body := callRaw(t, hs.URL, "token-x", a); st != http.StatusTooManyRequests {
		t.Fatalf("over the rate: %d %s", st, body)
	}
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(sessionlessBody(2, "tools/call", map[string]any{"name": "no_such_tool{x=\"y\"}", "arguments": map[string]any{}})))
	setSessionless(req, "token-x", "tools/call", `no_such_tool{x="y"}`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("unknown tool over the rate: %d", resp.StatusCode)
	}
	out := gather(t, m)
	for _, k := range []string{`gatehouse_refusals_total{reason="rate_limited",tool="web_extract"}`, `gatehouse_refusals_total{reason="rate_limited",tool="other"}`} {
		if v := metricValue(out, k); v != "1" {
			t.Errorf("%s = %q", k, v)
		}
	}
	if strings.Contains(out, "no_such_tool") {
		t.Errorf("a client's tool name became a label:\n%s", out)
	}
	for _, tool := range []string{"web_extract", "other"} {
		if !auditHas(buf.String(), tool, "rate_limited") {
			t.Errorf("no audit refuse line for %s:\n%s", tool, buf.String())
		}
	}
	var e audit.Event
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if json.Unmarshal([]byte(l), &e) == nil && e.Reason == "rate_limited" && e.Principal != "xavier" {
			t.Errorf("refuse line without the principal: %s", l)
		}
	}
}
