package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
	"github.com/gatehouse-dev/gatehouse/internal/metrics"
)

// get fetches url with an optional bearer token and Host header.
func get(t *testing.T, url, token, host string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func base(hs *mcpserver.HTTPServer) string { return strings.TrimSuffix(hs.URL, mcpserver.Path) }

// TestHealthReady: /healthz is 200 while serving; /readyz follows the
// readiness checks (503 with "not ready: name: reason" while one fails,
// 200 again when it passes, with no restart); neither needs the token nor
// a Host naming the server (a load balancer's probe sends neither).
func TestHealthReady(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	var down atomic.Bool
	hs := f.listen(t, mcpserver.HTTPOptions{Token: "tok", ReadyChecks: []mcpserver.ReadyCheck{{
		Name: "fake", Check: func(context.Context) error {
			if down.Load() {
				return errors.New("unreachable at redis://:hunter2@10.0.0.9:6379\nsecond line")
			}
			return nil
		},
	}}})
	u := base(hs)
	if code, _, body := get(t, u+"/healthz", "", "lb.internal"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, h, body := get(t, u+"/readyz", "", ""); code != 200 || body != "ready\n" || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("/readyz ready: %d %q", code, body)
	}
	down.Store(true)
	code, _, body := get(t, u+"/readyz", "", "")
	if code != 503 || !strings.HasPrefix(body, "not ready: fake: unreachable") || strings.Contains(body, "hunter2") || strings.Count(body, "\n") != 1 {
		t.Fatalf("/readyz with a failing check: %d %q (want 503, one line, no password)", code, body)
	}
	if code, _, _ := get(t, u+"/healthz", "", ""); code != 200 {
		t.Fatalf("/healthz while not ready: %d, want 200 (the process still serves)", code)
	}
	down.Store(false)
	if code, _, _ := get(t, u+"/readyz", "", ""); code != 200 {
		t.Fatalf("/readyz after the check recovered: %d", code)
	}
	resp, _ := post(t, u+"/readyz", nil, "{}")
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /readyz: %d, want 405", resp.StatusCode)
	}
	// The MCP endpoint itself still needs the token.
	if resp, _ := post(t, hs.URL, nil, initBody); resp.StatusCode != 401 {
		t.Fatalf("/mcp without token: %d", resp.StatusCode)
	}
}

// metricValue returns the value of the sample line name{labels} in a
// Prometheus text body, or "" when absent.
func metricValue(body, series string) string {
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestMetrics: /metrics is Prometheus text behind the bearer token; calls,
// refusals by reason, latency, cache lookups and open sessions are counted
// with tool and reason labels only (no URL, host or principal); with
// SeparateMetrics it moves to ServeMetrics' own listener, without token.
func TestMetrics(t *testing.T) {
	m := metrics.New()
	f := newFixture(t, mcpserver.Options{Metrics: m})
	hs := f.listen(t, mcpserver.HTTPOptions{Token: "tok"})
	cs := httpClient(t, hs.URL, "tok", nil)
	callTool(t, cs, "web_extract", map[string]any{"urls": []string{f.site.URL("/a")}})
	callTool(t, cs, "web_extract", map[string]any{"urls": []string{f.site.URL("/a")}})
	callTool(t, cs, "web_extract", map[string]any{"urls": []string{f.site.URL("/a?k=sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")}})

	if code, _, _ := get(t, base(hs)+"/metrics", "", ""); code != 401 {
		t.Fatalf("/metrics without token: %d, want 401", code)
	}
	code, h, body := get(t, base(hs)+"/metrics", "tok", "")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", code, h.Get("Content-Type"))
	}
	for series, want := range map[string]string{
		`gatehouse_tool_calls_total{outcome="ok",tool="web_extract"}`:         "2",
		`gatehouse_tool_calls_total{outcome="refused",tool="web_extract"}`:    "1",
		`gatehouse_refusals_total{reason="secret_in_url",tool="web_extract"}`: "1",
		`gatehouse_tool_call_duration_seconds_count{tool="web_extract"}`:      "3",
		`gatehouse_cache_lookups_total{result="miss"}`:                        "1",
		`gatehouse_cache_lookups_total{result="hit"}`:                         "1",
		`gatehouse_open_sessions{kind="mcp"}`:                                 "1",
		`gatehouse_open_sessions{kind="browser"}`:                             "0",
		`gatehouse_redis_errors_total`:                                        "0",
	} {
		if got := metricValue(body, series); got != want {
			t.Errorf("%s = %q, want %q", series, got, want)
		}
	}
	// The gauge drops after the response is written, so it may still
	// count the last call here; it must exist.
	if metricValue(body, "gatehouse_calls_in_flight") == "" {
		t.Error("no gatehouse_calls_in_flight series")
	}
	for _, leak := range []string{"site.test", "127.0.0.1", "sk-aaaa", "principal=", "url="} {
		if strings.Contains(body, leak) {
			t.Errorf("/metrics names %q: labels must come from closed sets", leak)
		}
	}

	hs2 := f.listen(t, mcpserver.HTTPOptions{Token: "tok", SeparateMetrics: true})
	if code, _, _ := get(t, base(hs2)+"/metrics", "tok", ""); code != 404 {
		t.Fatalf("/metrics on the MCP listener with SeparateMetrics: %d, want 404", code)
	}
	addr, err := hs2.ServeMetrics("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := get(t, "http://"+addr.String()+"/metrics", "", ""); code != 200 || metricValue(body, `gatehouse_tool_calls_total{outcome="ok",tool="web_extract"}`) != "2" {
		t.Fatalf("/metrics on the metrics listener: %d", code)
	}
	if code, _, _ := get(t, "http://"+addr.String()+"/readyz", "", ""); code != 200 {
		t.Fatalf("/readyz on the metrics listener: %d", code)
	}
}

// session opens a raw HTTP MCP session and returns the headers its later
// requests carry.
func session(t *testing.T, url string) map[string]string {
	t.Helper()
	resp, body := post(t, url, nil, initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %s", body)
	}
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	post(t, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

func extractBody(id int, url string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": "web_extract", "arguments": map[string]any{"urls": []string{url}}}})
	return string(b)
}

// TestReplicaCap: with ReplicaMaxCalls calls in flight (in any sessions),
// the next tools/call gets 429 with Retry-After and a JSON-RPC error whose
// data.reason is too_many_calls; other requests (tools/list) still pass.
func TestReplicaCap(t *testing.T) {
	m := metrics.New()
	var buf logBuf
	f := newFixture(t, mcpserver.Options{Metrics: m, Audit: audit.NewWriter(&buf, nil)})
	hs := f.listen(t, mcpserver.HTTPOptions{ReplicaMaxCalls: 1})
	h1, h2 := session(t, hs.URL), session(t, hs.URL)
	done := make(chan string, 1)
	go func() { done <- postAsync(hs.URL, h1, extractBody(2, f.site.URL("/hang"))) }()
	f.waitHung(t)
	t.Cleanup(func() { hs.Close(); <-done })
	resp, body := post(t, hs.URL, h2, extractBody(3, f.site.URL("/a")))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("call past the replica cap: %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	r := rpcReply(t, body)
	e, _ := r["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if r["id"] != 3.0 || data["reason"] != "too_many_calls" || !strings.Contains(e["message"].(string), "mcp.replica_max_calls") {
		t.Fatalf("429 body: %s", body)
	}
	// The principal limits' shape: code CodeLimited and data.retry_after_s.
	if e["code"] != float64(mcpserver.CodeLimited) || data["retry_after_s"] != 1.0 {
		t.Fatalf("429 error code/data: %s", body)
	}
	// Counted as a refusal and written to the audit trail.
	if v := metricValue(gather(t, m), `gatehouse_refusals_total{reason="too_many_calls",tool="web_extract"}`); v != "1" {
		t.Fatalf(`gatehouse_refusals_total{reason="too_many_calls",tool="web_extract"} = %q`, v)
	}
	if !auditHas(buf.String(), "web_extract", "too_many_calls") {
		t.Fatalf("no audit refuse line for the replica-cap 429:\n%s", buf.String())
	}
	if resp, body := post(t, hs.URL, h2, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); resp.StatusCode != 200 {
		t.Fatalf("tools/list at the cap: %d %s", resp.StatusCode, body)
	}
	if v := metricValue(gather(t, m), "gatehouse_replica_cap_refusals_total"); v != "1" {
		t.Fatalf("gatehouse_replica_cap_refusals_total = %q", v)
	}
}

func gather(t *testing.T, m *metrics.Set) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// TestDrainCutsOffAtDeadline: Drain turns /readyz to 503 "draining" … and,
// with a call that never ends, returns ErrDrainTimeout at its deadline after
// cancelling it (the client still gets an answer: the interrupted result).
// The completing path (exit 0) is tested on the real binary
// (cmd/gatehouse TestMCPDrainOnSIGTERM).
func TestDrainCutsOffAtDeadline(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	hs := f.listen(t, mcpserver.HTTPOptions{})
	metricsAddr, err := hs.ServeMetrics("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := session(t, hs.URL)
	done := make(chan string, 1)
	go func() { done <- postAsync(hs.URL, h, extractBody(2, f.site.URL("/hang"))) }()
	f.waitHung(t)
	ctx, cancel := context.WithCancel(context.Background())
	drained := make(chan error, 1)
	go func() { drained <- hs.Drain(ctx) }()
	// The metrics listener stays up until the drain ends: it says draining.
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, body := get(t, "http://"+metricsAddr.String()+"/readyz", "", "")
		if code == 503 && body == "not ready: draining\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz while draining: %d %q", code, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v with a call in flight", err)
	default:
	}
	cancel() // the --drain deadline
	select {
	case err := <-drained:
		if !errors.Is(err, mcpserver.ErrDrainTimeout) || !strings.Contains(err.Error(), "1 cancelled") {
			t.Fatalf("Drain at its deadline: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Drain did not return at its deadline")
	}
	select {
	case body := <-done:
		if m := rpcReply(t, body); m["id"] != 2.0 || !strings.Contains(body, "interrupted") {
			t.Fatalf("the call cut off by the drain got %q, want its interrupted result", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight call was never answered")
	}
}

// TestAuditSecretRefusal: a web_extract refused for a secret in its URL
// writes a gate line (refuse, secret_in_url, the URL redacted) and a call
// line, each with principal, tool and duration_ms; the secret is in
// neither. An allowed page writes an allow line.
func TestAuditSecretRefusal(t *testing.T) {
	var buf logBuf
	f := newFixture(t, mcpserver.Options{Audit: audit.NewWriter(&buf, nil)})
	cs := f.connect(t, "http")
	const secret = "sk-proj0123456789abcdefABCDEF"
	callTool(t, cs, "web_extract", map[string]any{"urls": []string{f.site.URL("/a"), f.site.URL("/b?key=" + secret)}})
	callTool(t, cs, "web_extract", map[string]any{"urls": []string{f.site.URL("/a")}})
	out := buf.String()
	if strings.Contains(out, secret) || strings.Contains(out, "0123456789abcdef") {
		t.Fatalf("the audit trail carries the secret:\n%s", out)
	}
	var lines []audit.Event
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var raw map[string]any
		if err := json.Unmarshal([]byte(l), &raw); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		for _, k := range []string{"time", "event", "principal", "tool", "decision", "duration_ms"} {
			if _, ok := raw[k]; !ok {
				t.Fatalf("line without %q: %s", k, l)
			}
		}
		var e audit.Event
		json.Unmarshal([]byte(l), &e)
		lines = append(lines, e)
	}
	if len(lines) != 4 {
		t.Fatalf("want 4 lines (refused gate, refused call, allowed gate, allowed call), got:\n%s", out)
	}
	g, c := lines[0], lines[1]
	if g.Kind != audit.KindGate || g.Decision != audit.Refuse || g.Reason != "secret_in_url" || g.Tool != "web_extract" ||
		g.Principal != "default" || !strings.Contains(g.URL, "/b?key=") {
		t.Errorf("gate line: %+v", g)
	}
	if c.Kind != audit.KindCall || c.Decision != audit.Refuse || c.Reason != "secret_in_url" || c.URL != "" {
		t.Errorf("call line: %+v", c)
	}
	if a := lines[2]; a.Kind != audit.KindGate || a.Decision != audit.Allow || a.Reason != "" || a.URL != f.site.URL("/a") {
		t.Errorf("allowed gate line: %+v", a)
	}
	if a := lines[3]; a.Kind != audit.KindCall || a.Decision != audit.Allow {
		t.Errorf("allowed call line: %+v", a)
	}
}

// postAsync is post for a goroutine: it returns the body, or the error's
// text, instead of failing the test.
func postAsync(url string, hdr map[string]string, body string) string {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestDrainInterruptsSessionless: at the --drain deadline a sessionless
// (protocol 2026-07-28) call on a page that never answers is interrupted
// too and delivers its interrupted result, like a session's call.
func TestDrainInterruptsSessionless(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	hs := f.listen(t, mcpserver.HTTPOptions{})
	done := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(sessionlessBody(2, "tools/call",
			map[string]any{"name": "web_extract", "arguments": map[string]any{"urls": []string{f.site.URL("/hang")}}})))
		setSessionless(req, "", "tools/call", "web_extract")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	f.waitHung(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := hs.Drain(ctx); !errors.Is(err, mcpserver.ErrDrainTimeout) {
		t.Fatalf("Drain at its deadline: %v", err)
	}
	select {
	case body := <-done:
		if !strings.Contains(body, "interrupted") {
			t.Fatalf("the sessionless call cut off by the drain got %q, want its interrupted result", body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the sessionless call was not interrupted by the drain")
	}
}

// auditHas reports whether the audit trail out holds a call line refusing
// tool with reason rc.
func auditHas(out, tool, rc string) bool {
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e audit.Event
		if json.Unmarshal([]byte(l), &e) == nil && e.Kind == audit.KindCall && e.Tool == tool && e.Decision == audit.Refuse && e.Reason == rc {
			return true
		}
	}
	return false
}
