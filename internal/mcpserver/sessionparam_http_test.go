package mcpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
)

// TestEmptySessionOverHTTP: a 2026-07-28 tools/call with session "" and
// no Mcp-Param-Session header reaches the tool (no -32020 "missing
// header" from the SDK's x-mcp-header check).
func TestEmptySessionOverHTTP(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	hs := f.listen(t, mcpserver.HTTPOptions{})
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(sessionlessBody(3, "tools/call",
		map[string]any{"name": "browser_snapshot", "arguments": map[string]any{"session": ""}})))
	setSessionless(req, "", "tools/call", "browser_snapshot")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(b), `"error"`) && strings.Contains(string(b), "header") {
		t.Errorf("session \"\" without a header: %s", b)
	}
}
