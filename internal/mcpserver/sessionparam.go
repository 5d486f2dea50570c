package mcpserver

import (
	"encoding/json"
	"net/http"
)

// HeaderParamSession is the HTTP header an MCP 2026-07-28 client mirrors
// the browser tools' session argument into (SEP-2243: the argument is
// declared with "x-mcp-header": "Session" in the tool's input schema), so
// a layer-7 load balancer can route on it.
const HeaderParamSession = "Mcp-Param-Session"

// sessionParamMismatch returns the refusal text when body is a tools/call
// whose HeaderParamSession header, present in h, differs from its session
// argument (absent or not a string counts as different): the header must
// mirror the argument, or a balancer would route the call by a session it
// does not act on. "" when the header is absent or matches.
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
	if len(vals) != 1 || !has || vals[0] != arg {
		return "Invalid params: the " + HeaderParamSession + " header must equal the session argument of the call (MCP 2026-07-28 x-mcp-header); send both with the same value, or neither"
	}
	return ""
}
