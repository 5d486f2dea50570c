package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// rpcReply decodes a JSON-RPC message from a JSON body or from the first
// "data:" line of an SSE body.
func rpcReply(t *testing.T, body string) map[string]any {
	t.Helper()
	s := body
	if i := strings.Index(body, "data: "); i >= 0 {
		s = body[i+len("data: "):]
		if j := strings.IndexByte(s, '\n'); j >= 0 {
			s = s[:j]
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("body is not a JSON-RPC message: %q", body)
	}
	return m
}

func rpcCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// post sends body to url with the given headers (Content-Type and Accept
// default to what MCP requires).
func post(t *testing.T, url string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestHTTPErrorsAreJSONRPC: every HTTP refusal, ours or the SDK's, carries a
// JSON-RPC error body (application/json, standard code); Host and Origin
// hosts compare case-insensitively; an https Origin is not this http
// server's; 401 names the Bearer scheme (RFC 6750 §3); a request without
// Mcp-Session-Id other than initialize is 400; a message without method is
// 400 -32600; a second initialize gets -32600.
func TestHTTPErrorsAreJSONRPC(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	hs := f.listen(t, mcpserver.HTTPOptions{MaxBodyBytes: 4096, Token: "tok"})
	port := hs.URL[strings.LastIndex(hs.URL, ":")+1 : strings.LastIndex(hs.URL, "/")]
	auth := "Bearer tok"
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
		code   float64
	}{
		{"upper-case Host", map[string]string{"Host": "LOCALHOST:" + port, "Authorization": auth}, initBody, 200, 0},
		{"upper-case Origin", map[string]string{"Origin": "http://LOCALHOST:" + port, "Authorization": auth}, initBody, 200, 0},
		{"https Origin", map[string]string{"Origin": "https://127.0.0.1:" + port, "Authorization": auth}, initBody, 403, -32600},
		{"foreign Host", map[string]string{"Host": "evil.example:" + port, "Authorization": auth}, initBody, 403, -32600},
		{"no token", nil, initBody, 401, -32600},
		{"too large", map[string]string{"Authorization": auth}, initBody[:len(initBody)-1] + strings.Repeat(" ", 5000) + "}", 413, -32600},
		{"wrong Content-Type", map[string]string{"Authorization": auth, "Content-Type": "text/plain"}, initBody, 415, -32600},
		{"wrong Accept", map[string]string{"Authorization": auth, "Accept": "text/html"}, initBody, 400, -32600},
		{"not JSON", map[string]string{"Authorization": auth}, "}{", 400, -32700},
		{"no session id", map[string]string{"Authorization": auth}, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, 400, -32600},
		{"unknown session", map[string]string{"Authorization": auth, "Mcp-Session-Id": "nope"}, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, 404, -32600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, hs.URL, tc.hdr, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("401 without WWW-Authenticate: Bearer: %v", resp.Header)
			}
			if tc.code == 0 {
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q, body %q", ct, body)
			}
			if m := rpcReply(t, body); rpcCode(m) != tc.code || m["jsonrpc"] != "2.0" {
				t.Fatalf("reply %v, want code %v", m, tc.code)
			}
		})
	}

	// In a session: a message without method, then a second initialize.
	resp, body := post(t, hs.URL, map[string]string{"Authorization": auth}, initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	h := map[string]string{"Authorization": auth, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	post(t, hs.URL, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, body = post(t, hs.URL, h, `{"jsonrpc":"2.0","id":3}`)
	if m := rpcReply(t, body); resp.StatusCode != 400 || rpcCode(m) != -32600 || m["id"] != 3.0 {
		t.Fatalf("no method: %d %v", resp.StatusCode, m)
	}
	resp, body = post(t, hs.URL, h, `{"jsonrpc":"2.0","id":null,"method":"ping"}`)
	if m := rpcReply(t, body); resp.StatusCode != 400 || rpcCode(m) != -32600 || m["id"] != nil {
		t.Fatalf("id null: %d %v", resp.StatusCode, m)
	}
	resp, body = post(t, hs.URL, h, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	if m := rpcReply(t, body); resp.StatusCode != 400 || rpcCode(m) != -32600 {
		t.Fatalf("id 1.5: %d %v", resp.StatusCode, m)
	}
	_, body = post(t, hs.URL, h, strings.Replace(initBody, `"id":1`, `"id":9`, 1))
	if m := rpcReply(t, body); rpcCode(m) != -32600 || m["id"] != 9.0 {
		t.Fatalf("second initialize: %v", m)
	}
	resp, body = post(t, hs.URL, h, `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`)
	if m := rpcReply(t, body); resp.StatusCode != 400 || rpcCode(m) != -32600 || !strings.Contains(body, "batch") {
		t.Fatalf("batch: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, hs.URL, h, `{"jsonrpc":"2.0","id":7,"method":"nope/nope"}`)
	if m := rpcReply(t, body); rpcCode(m) != -32601 || m["id"] != 7.0 {
		t.Fatalf("unknown method: %d %s", resp.StatusCode, body)
	}
	_, body = post(t, hs.URL, h, `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if m := rpcReply(t, body); m["id"] != 6.0 || m["result"] == nil {
		t.Fatalf("the session did not go on: %v", m)
	}
}

// wireError returns the JSON-RPC error inside a client error.
func wireError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T) carries no JSON-RPC error", err, err)
	}
	return we
}

// TestResourceErrorsCoded: every refused resources/read carries a standard
// code (-32002 resource not found, MCP server/resources §Error Handling;
// -32602 for a URI that cannot name a stored page) and data.reason, on both
// transports; a method before initialize is -32600 (stdio, raw lines in
// cmd/gatehouse's TestMCPStdioNothingEndsTheSession).
func TestResourceErrorsCoded(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFixture(t, mcpserver.Options{})
			cs := f.connect(t, transport)
			dir := web.CacheDir(f.w.Home)
			os.MkdirAll(dir, 0o700)
			secret := filepath.Join(f.w.Home, "outside.md")
			os.WriteFile(secret, []byte("SECRET"), 0o644)
			os.Symlink(secret, filepath.Join(dir, "planted-0000000000.md"))
			fifo := filepath.Join(dir, "fifo-0000000001.md")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Log("no FIFO:", err)
			}
			for _, tc := range []struct {
				uri    string
				code   int64
				reason string
			}{
				{tools.StoreURIPrefix + "%2e%2e%2foutside.md", -32602, "read_outside_store"},
				{tools.StoreURIPrefix + "../outside.md", -32602, "read_outside_store"},
				{tools.StoreURIPrefix + "x-0000000000.md%00", -32602, "read_outside_store"},
				{tools.StoreURIPrefix + "planted-0000000000.md", -32002, "read_symlink"},
				{tools.StoreURIPrefix + "fifo-0000000001.md", -32002, "read_not_regular"},
				{tools.StoreURIPrefix + "missing-0000000000.md", -32002, "read_not_found"},
			} {
				_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tc.uri})
				if err == nil {
					t.Fatalf("%s: read", tc.uri)
				}
				we := wireError(t, err)
				var data struct{ Reason, URI string }
				json.Unmarshal(we.Data, &data)
				if tc.reason == "read_not_regular" && data.Reason == "read_not_found" {
					continue // no FIFO on this system
				}
				if we.Code != tc.code || data.Reason != tc.reason || data.URI != tc.uri || strings.Contains(we.Message, "SECRET") {
					t.Errorf("%s: code %d data %s (%s), want %d %s", tc.uri, we.Code, we.Data, we.Message, tc.code, tc.reason)
				}
			}
			// An empty name: refused with a code whether the SDK's template
			// matching or our handler answers.
			_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tools.StoreURIPrefix})
			if err == nil {
				t.Fatal("empty name read")
			}
			if we := wireError(t, err); we.Code != -32602 && we.Code != -32002 {
				t.Errorf("empty name: code %d", we.Code)
			}
		})
	}
}

// TestResourcesListSessionPages: after a truncated extract, resources/list
// shows the stored page (name, MIME type, size in bytes) to the session that
// stored it and not to another one; reading the listed URI serves it.
func TestResourcesListSessionPages(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	hs := f.listen(t, mcpserver.HTTPOptions{})
	a, b := httpClient(t, hs.URL, "", nil), httpClient(t, hs.URL, "", nil)
	if lr, err := a.ListResources(context.Background(), nil); err != nil || len(lr.Resources) != 0 {
		t.Fatalf("before: %v %+v", err, lr)
	}
	res, _ := callTool(t, a, "web_extract", map[string]any{"urls": []string{f.site.URL("/long")}})
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if link == nil {
		t.Fatal("the long page was not stored")
	}
	lr, err := a.ListResources(context.Background(), nil)
	if err != nil || len(lr.Resources) != 1 {
		t.Fatalf("list: %v %+v", err, lr)
	}
	r := lr.Resources[0]
	if r.URI != link.URI || r.Name != link.Name || r.MIMEType != "text/markdown" || r.Size <= 0 {
		t.Fatalf("listed %+v, linked %+v", r, link)
	}
	if rr, err := a.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: r.URI}); err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text == "" {
		t.Fatalf("read listed: %v", err)
	}
	if lr, err := b.ListResources(context.Background(), nil); err != nil || len(lr.Resources) != 0 {
		t.Fatalf("other session sees %+v (%v)", lr, err)
	}
	// Hostile review session 5, D7: the other session cannot read the page
	// either, although its name derives from the URL: neither as a
	// resource nor with web_read, and it is told the same as for a page
	// that does not exist.
	_, err = b.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: r.URI})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcpserver.CodeResourceNotFound || !strings.Contains(string(we.Data), `"read_not_found"`) {
		t.Fatalf("other session's resources/read: %v", err)
	}
	res, v := callTool(t, b, "web_read", map[string]any{"path": r.Name})
	if !res.IsError || v["reason"] != "read_not_found" || strings.Contains(fmt.Sprint(v["content"]), "harbour") {
		t.Fatalf("other session's web_read: %v", v)
	}
	// The session that was given it reads it with web_read too.
	if res, v := callTool(t, a, "web_read", map[string]any{"path": r.Name}); res.IsError || v["content"] == "" {
		t.Fatalf("own web_read: %v", v)
	}
}

// TestHTTPDeleteAnswersInFlightCall: DELETE /mcp while a call hangs: the
// call is interrupted and its response (interrupted rows) is delivered on
// its stream before the session closes.
func TestHTTPDeleteAnswersInFlightCall(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	hs := f.listen(t, mcpserver.HTTPOptions{})
	resp, body := post(t, hs.URL, nil, initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %s", body)
	}
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	post(t, hs.URL, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	done := make(chan string, 1)
	go func() {
		_, body := post(t, hs.URL, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"web_extract","arguments":{"urls":["`+f.site.URL("/hang")+`"]}}}`)
		done <- body
	}()
	f.waitHung(t) // the call is in flight
	req, _ := http.NewRequest("DELETE", hs.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	dr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dr.Body.Close()
	select {
	case body := <-done:
		m := rpcReply(t, body)
		if m["id"] != 2.0 || m["result"] == nil || !strings.Contains(body, "interrupted") {
			t.Fatalf("in-flight call got %q", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight call was not answered")
	}
	if dr.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %d", dr.StatusCode)
	}
}

// stdioSession runs f's server over the line transport on pipes for the
// test's life: send writes one JSON-RPC line, next returns the next message
// the server writes (decoded), failing the test after 10 s without one.
func stdioSession(t *testing.T, f *fixture) (send func(line string), next func(what string) map[string]any) {
	t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.srv.Run(ctx, mcpserver.NewLineTransport(sr, sw)) }()
	t.Cleanup(func() { cw.Close(); cancel(); <-done })
	lines := make(chan map[string]any, 8)
	go func() {
		dec := json.NewDecoder(cr)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				return
			}
			lines <- m
		}
	}()
	next = func(what string) map[string]any {
		t.Helper()
		select {
		case m := <-lines:
			return m
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no reply", what)
		}
		return nil
	}
	return func(line string) { io.WriteString(cw, line+"\n") }, next
}

// TestStdioDuplicateIDAnswered: a call reusing the id of a call still in
// flight gets -32600 with id null over the line transport (the SDK drops
// it without a reply); the first call still gets its own answer.
func TestStdioDuplicateIDAnswered(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	send, next := stdioSession(t, f)
	send(strings.Replace(initBody, `"id":1`, `"id":0`, 1))
	next("initialize")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"web_extract","arguments":{"urls":["` + f.site.URL("/hang") + `"]}}}`
	send(call)
	f.waitHung(t) // the first call is in flight
	send(call)
	if m := next("duplicate"); rpcCode(m) != -32600 || m["id"] != nil || !strings.Contains(m["error"].(map[string]any)["message"].(string), "already in use") {
		t.Fatalf("duplicate id: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	for { // the session goes on: the ping is answered (after the cancelled call's result, if one is sent)
		m := next("ping after cancel")
		if m["id"] == 3.0 {
			break
		}
		if m["id"] != 2.0 {
			t.Fatalf("unexpected %v", m)
		}
	}
}

// TestStdioAnswersCallsInFlightAtEOF (breaker7 D14): a client that writes
// its calls and closes stdin gets every reply before the session ends:
// a slow call, and a quick one after it.
func TestStdioAnswersCallsInFlightAtEOF(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	in := strings.Join([]string{
		strings.Replace(initBody, `"id":1`, `"id":0`, 1),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"web_extract","arguments":{"urls":["` + f.site.URL("/slow") + `"]}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"web_check","arguments":{"urls":["` + f.site.URL("/a") + `"]}}}`,
	}, "\n") + "\n"
	var out strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- f.srv.Run(context.Background(), mcpserver.NewLineTransport(strings.NewReader(in), &out))
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the session did not end after its input did")
	}
	got := map[float64]bool{}
	dec := json.NewDecoder(strings.NewReader(out.String()))
	for {
		var m map[string]any
		if dec.Decode(&m) != nil {
			break
		}
		if id, ok := m["id"].(float64); ok && m["result"] != nil {
			got[id] = true
		}
	}
	if !got[0] || !got[6] || !got[7] {
		t.Fatalf("replies %v, want ids 0, 6 and 7:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "Slow content") {
		t.Errorf("the slow call's reply has no page: %s", out.String())
	}
}

// TestBatchBeforeInitializedRefused (breaker7 D15): a batch sent after an
// initialize asking for 2025-06-18 but before notifications/initialized is
// refused with -32600, id null, as after it, on stdio (the batch written
// right behind initialize, before its answer) and on HTTP (without the
// Mcp-Protocol-Version header, which the SDK would read as 2025-03-26).
func TestBatchBeforeInitializedRefused(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`
	t.Run("stdio", func(t *testing.T) {
		f := newFixture(t, mcpserver.Options{})
		in := strings.Replace(initBody, `"id":1`, `"id":0`, 1) + "\n" + batch + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n"
		var out strings.Builder
		if err := f.srv.Run(context.Background(), mcpserver.NewLineTransport(strings.NewReader(in), &out)); err != nil {
			t.Fatal(err)
		}
		var refused, pinged bool
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if strings.HasPrefix(line, "[") {
				t.Fatalf("the batch was answered as a batch: %s", line)
			}
			m := rpcReply(t, line)
			refused = refused || (rpcCode(m) == -32600 && m["id"] == nil && strings.Contains(line, "batching is not supported in protocol 2025-06-18"))
			pinged = pinged || (m["id"] == 4.0 && m["result"] != nil)
		}
		if !refused || !pinged {
			t.Fatalf("want the batch refused and the session going on:\n%s", out.String())
		}
	})
	t.Run("http", func(t *testing.T) {
		f := newFixture(t, mcpserver.Options{})
		hs := f.listen(t, mcpserver.HTTPOptions{})
		resp, body := post(t, hs.URL, nil, initBody)
		sid := resp.Header.Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatalf("initialize: %s", body)
		}
		resp, body = post(t, hs.URL, map[string]string{"Mcp-Session-Id": sid}, batch)
		if m := rpcReply(t, body); resp.StatusCode != 400 || rpcCode(m) != -32600 || m["id"] != nil || !strings.Contains(body, "batching is not supported in protocol 2025-06-18") {
			t.Fatalf("batch before initialized: %d %s", resp.StatusCode, body)
		}
	})
}
