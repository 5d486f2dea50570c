package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
)

// TestBadParamsInvalidParams: initialize without params, with params null or
// with a field of the wrong type, and tools/call with a wrong-typed name, get
// -32602 on both transports, with a message naming the field and the JSON
// type expected and no Go decoder text (the SDK answers -32600, or code 0
// over HTTP, with "Go struct field … of type …"); the stdio session goes on.
func TestBadParamsInvalidParams(t *testing.T) {
	cases := []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, `initialize needs "params"`},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}`, `initialize needs "params"`},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}`, `"params" must be an object, got array`},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`, `params.protocolVersion must be a string, got number`},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":"x"}}`, `params.capabilities must be an object, got string`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, `params.name must be a string, got number`},
	}
	check := func(t *testing.T, where, line, want string, m map[string]any) {
		t.Helper()
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if rpcCode(m) != -32602 || m["id"] != 1.0 || !strings.Contains(msg, want) || strings.Contains(msg, "Go ") || strings.Contains(msg, "mcp.") {
			t.Errorf("%s %s: %v, want -32602 with %q", where, line, m, want)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		f := newFixture(t, mcpserver.Options{})
		send, next := stdioSession(t, f)
		for _, tc := range cases[:5] { // tools/call before initialize is refused for that
			send(tc.line)
			check(t, "stdio", tc.line, tc.want, next(tc.line))
		}
		send(initBody)
		if m := next("initialize"); m["result"] == nil {
			t.Fatalf("initialize after the refusals: %v", m)
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		send(cases[5].line)
		check(t, "stdio", cases[5].line, cases[5].want, next(cases[5].line))
	})
	t.Run("http", func(t *testing.T) {
		f := newFixture(t, mcpserver.Options{})
		hs := f.listen(t, mcpserver.HTTPOptions{})
		for _, tc := range cases[:5] {
			resp, body := post(t, hs.URL, nil, tc.line)
			if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s: status %d %s", tc.line, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			check(t, "http", tc.line, tc.want, rpcReply(t, body))
		}
		resp, _ := post(t, hs.URL, nil, initBody)
		h := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
		post(t, hs.URL, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		_, body := post(t, hs.URL, h, cases[5].line)
		check(t, "http", cases[5].line, cases[5].want, rpcReply(t, body))
	})
}
