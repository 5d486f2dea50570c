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

// TestSessionParamDecodesAndEmpty (breaker9 D8): the header in SEP-2243's
// =?base64?…?= form is compared decoded; invalid Base64 is refused; an
// empty session argument with no (or an empty) header is dropped as no
// session, and left alone when a header names one.
func TestSessionParamDecodesAndEmpty(t *testing.T) {
	call := func(args string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"browser_snapshot","arguments":` + args + `}}`)
	}
	hd := func(v ...string) http.Header {
		h := http.Header{}
		for _, x := range v {
			h.Add(HeaderParamSession, x)
		}
		return h
	}
	if m := sessionParamMismatch(hd("=?base64?IMOpdMOp?="), call(`{"session":" été"}`)); m != "" {
		t.Errorf("a base64 header equal to the argument once decoded was refused: %s", m)
	}
	if m := sessionParamMismatch(hd("=?base64?***?="), call(`{"session":"***"}`)); m == "" {
		t.Error("invalid Base64 in the wrapper was accepted")
	}
	for _, h := range []http.Header{hd(), hd("")} {
		out, ok := dropEmptySession(h, call(`{"session":"","full":true}`))
		if !ok || string(out) != `{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"full":true},"name":"browser_snapshot"}}` {
			t.Errorf("session \"\" with header %v: %s %v", h, out, ok)
		}
	}
	if _, ok := dropEmptySession(hd("0123"), call(`{"session":""}`)); ok {
		t.Error("session \"\" was dropped although a header names a session")
	}
	if _, ok := dropEmptySession(hd(), call(`{"session":"0123"}`)); ok {
		t.Error("a non-empty session was dropped")
	}
}
