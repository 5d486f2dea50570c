package mcpserver

import (
	"net/http"
	"testing"
)

// TestSessionParamMismatch: a tools/call whose Mcp-Param-Session header
// differs from its session argument (or has none) is refused; a matching
// header, no header, and other methods pass.
func TestSessionParamMismatch(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef"
	call := func(args string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"browser_snapshot","arguments":` + args + `}}`)
	}
	for _, c := range []struct {
		name   string
		header []string // nil: absent
		body   []byte
		refuse bool
	}{
		{"no header", nil, call(`{"session":"` + h + `"}`), false},
		{"match", []string{h}, call(`{"session":"` + h + `"}`), false},
		{"differs", []string{"ffff"}, call(`{"session":"` + h + `"}`), true},
		{"argument absent", []string{h}, call(`{}`), true},
		{"argument not a string", []string{h}, call(`{"session":5}`), true},
		{"two headers", []string{h, h}, call(`{"session":"` + h + `"}`), true},
		{"not a call", []string{"x"}, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), false},
	} {
		hd := http.Header{}
		for _, v := range c.header {
			hd.Add(HeaderParamSession, v)
		}
		if got := sessionParamMismatch(hd, c.body) != ""; got != c.refuse {
			t.Errorf("%s: refused %v, want %v", c.name, got, c.refuse)
		}
	}
}
