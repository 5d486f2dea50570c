package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// HeaderParamSession is the HTTP header an MCP 2026-07-28 client mirrors
// the browser tools' session argument into (SEP-2243: the argument is
// declared with "x-mcp-header": "Session" in the tool's input schema), so
// a layer-7 load balancer can route on it.
const HeaderParamSession = "Mcp-Param-Session"

// sessionParamMismatch returns the refusal text when body is a tools/call
// whose HeaderParamSession header, present in h, differs from its session
// argument (absent or not a string counts as different) once decoded
// (decodeParamHeader: SEP-2243's =?base64?…?= form): the header must mirror
// the argument, or a balancer would route the call by a session it does
// not act on. "" when the header is absent or matches.
func sessionParamMismatch(h http.Header, body []byte) string {
	vals, ok := h[http.CanonicalHeaderKey(HeaderParamSession)]
	if !ok {
		return ""
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Arguments map[string]json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" {
		return ""
	}
	var arg string
	raw, has := m.Params.Arguments["session"]
	if has && json.Unmarshal(raw, &arg) != nil {
		has = false
	}
	if len(vals) == 1 && has {
		if v, ok := decodeParamHeader(vals[0]); ok && v == arg {
			return ""
		}
	}
	return "Invalid params: the " + HeaderParamSession + " header must equal the session argument of the call (MCP 2026-07-28 x-mcp-header; a value in SEP-2243's =?base64?…?= form is decoded first); send both with the same value, or neither"
}

// decodeParamHeader decodes an x-mcp-header value: SEP-2243 sends a value
// with non-ASCII or control characters or leading/trailing whitespace (or
// one that looks encoded) as "=?base64?" + standard Base64 + "?="; any
// other value is itself. ok false: the wrapper holds invalid Base64.
func decodeParamHeader(v string) (string, bool) {
	if enc, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if enc, ok = strings.CutSuffix(enc, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			return string(b), err == nil
		}
	}
	return v, true
}

// dropEmptySession returns body without its session argument when body is
// a tools/call whose session argument is "" and h has no
// HeaderParamSession value (absent or empty): an empty session is no
// session (the tools read "" as none), so the call is not refused for a
// header that mirrors nothing. ok false: body is left as it is.
func dropEmptySession(h http.Header, body []byte) (out []byte, ok bool) {
	for _, v := range h.Values(HeaderParamSession) {
		if v != "" {
			return nil, false
		}
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || string(msg["method"]) != `"tools/call"` {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil {
		return nil, false
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(params["arguments"], &args) != nil || string(args["session"]) != `""` {
		return nil, false
	}
	delete(args, "session")
	var err error
	if params["arguments"], err = json.Marshal(args); err != nil {
		return nil, false
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, false
	}
	if out, err = json.Marshal(msg); err != nil {
		return nil, false
	}
	return out, true
}
