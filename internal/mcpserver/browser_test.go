package mcpserver_test

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
	"github.com/gatehouse-dev/gatehouse/internal/webtest"
)

// The browser flows over both MCP transports (issue 8): fill and submit a form
// and read the result page, go back and click a fresh ref, an old ref after
// navigation is stale_ref (the server never sees its request), vision returns
// an image content block, and two MCP sessions (two tasks) see each other's
// page and cookies never.
func TestBrowserFlowsOverMCP(t *testing.T) {
	needChromium(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFixture(t, mcpserver.Options{Version: "test"})
			t.Cleanup(func() { f.reg.Close() })
			var trapHits int
			mux := http.NewServeMux()
			mux.Handle("/form", webtest.Page(`<!doctype html><title>Form</title><h1>Sign up</h1>
<form action="/result"><label for=n>Name</label><input id=n name=name><button>Send</button></form>
<a href="/trap">Trap link</a>`))
			mux.HandleFunc("/result", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Set-Cookie", "who="+r.URL.Query().Get("name")+"; Path=/")
				webtest.Page(`<!doctype html><title>Result</title><h1>Hello `+r.URL.Query().Get("name")+`</h1>`)(w, r)
			})
			mux.HandleFunc("/trap", func(w http.ResponseWriter, r *http.Request) { trapHits++; webtest.Page(`<title>Trap</title>`)(w, r) })
			site := f.w.Serve("forms.test", mux)
			var hs *mcpserver.HTTPServer
			connect := func() *mcp.ClientSession {
				if transport == "stdio" {
					return f.stdio(t, nil)
				}
				if hs == nil {
					hs = f.listen(t, mcpserver.HTTPOptions{})
				}
				return httpClient(t, hs.URL, "", nil)
			}
			cs := connect()
			ref := func(snap, role, name string) string {
				m := regexp.MustCompile(role + ` "` + name + `"[^\n]*\[ref=(e\d+)\]`).FindStringSubmatch(snap)
				if m == nil {
					t.Fatalf("no %s %q in\n%s", role, name, snap)
				}
				return m[1]
			}
			_, nav := callTool(t, cs, "browser_navigate", map[string]any{"url": site.URL("/form")})
			snap, _ := nav["snapshot"].(string)
			if nav["success"] != true || plain(nav["title"]) != "Form" {
				t.Fatalf("navigate: %v", nav)
			}
			trap := ref(snap, "link", "Trap link")
			if res, v := callTool(t, cs, "browser_type", map[string]any{"ref": ref(snap, "textbox", "Name"), "text": "Ada"}); res.IsError {
				t.Fatalf("type: %v", v)
			}
			res, v := callTool(t, cs, "browser_click", map[string]any{"ref": ref(snap, "button", "Send")})
			if res.IsError || plain(v["title"]) != "Result" || !strings.Contains(v["snapshot"].(string), "Hello Ada") {
				t.Fatalf("submit: %v", v)
			}
			if res, v := callTool(t, cs, "browser_click", map[string]any{"ref": trap}); !res.IsError || v["reason"] != "stale_ref" {
				t.Fatalf("old ref after navigation: %v", v)
			}
			if trapHits != 0 {
				t.Fatalf("the old element's request reached the server %d times", trapHits)
			}
			// A value outside an enum keeps the tool's own code (newcomer review D1).
			if res, v := callTool(t, cs, "browser_scroll", map[string]any{"direction": "left"}); !res.IsError || v["reason"] != "invalid_direction" || !strings.Contains(v["error"].(string), `"up", "down"`) {
				t.Fatalf("scroll left: %v", v)
			}
			_, back := callTool(t, cs, "browser_back", map[string]any{})
			bs, _ := back["snapshot"].(string)
			if bs == "" {
				_, s := callTool(t, cs, "browser_snapshot", map[string]any{})
				bs = s["snapshot"].(string)
			}
			if res, v := callTool(t, cs, "browser_click", map[string]any{"ref": ref(bs, "link", "Trap link")}); res.IsError || !strings.HasSuffix(v["url"].(string), "/trap") {
				t.Fatalf("fresh ref after back: %v", v)
			}
			res, _ = callTool(t, cs, "browser_vision", map[string]any{"question": "what is on screen?"})
			images := 0
			for _, c := range res.Content {
				if im, ok := c.(*mcp.ImageContent); ok && im.MIMEType == "image/png" && strings.HasPrefix(string(im.Data), "\x89PNG") {
					images++
				}
			}
			if images != 1 {
				t.Fatalf("vision: %d PNG image blocks", images)
			}
			// Over HTTP a second MCP session is another task: its own blank
			// session, and on the same site no cookie of the first. (Over stdio
			// the process is one task by design.)
			if transport == "http" {
				other := connect()
				_, o := callTool(t, other, "browser_snapshot", map[string]any{})
				if o["success"] != true || o["url"] != "about:blank" {
					t.Fatalf("second session starts on another page: %v", o)
				}
				callTool(t, other, "browser_navigate", map[string]any{"url": site.URL("/form")})
				_, o = callTool(t, other, "browser_console", map[string]any{"expression": "document.cookie"})
				if o["success"] != true || o["result"] != "" {
					t.Fatalf("second session sees the first one's cookie: %v", o)
				}
			}
			_, c := callTool(t, cs, "browser_console", map[string]any{"expression": "document.cookie"})
			if plain(c["result"]) != "who=Ada" {
				t.Fatalf("first session lost its cookie: %v", c)
			}
		})
	}
}

// Over MCP a truncated snapshot's note names the stored file by its store
// name, as web_extract's footer does, never by a path on the server's disk;
// web_read reads it (hostile review D10).
func TestBrowserSnapshotNoteNamesTheStoreOverMCP(t *testing.T) {
	needChromium(t)
	f := newFixture(t, mcpserver.Options{Version: "test"})
	t.Cleanup(func() { f.reg.Close() })
	site := serveBigPage(f)
	cs := f.connect(t, "stdio")
	_, nav := callTool(t, cs, "browser_navigate", map[string]any{"url": site.URL("/big")})
	snap, _ := nav["snapshot"].(string)
	m := regexp.MustCompile(`web_read path="([^"]+)" offset=(\d+) limit=200\]`).FindStringSubmatch(snap)
	if nav["success"] != true || m == nil {
		t.Fatalf("navigate: %v", nav)
	}
	if strings.ContainsAny(m[1], `/\`) || !strings.HasPrefix(m[1], "browser-snapshot-") {
		t.Fatalf("the note names %q, not a store name", m[1])
	}
	off, _ := strconv.Atoi(m[2])
	res, rd := callTool(t, cs, "web_read", map[string]any{"path": m[1], "offset": off, "limit": 1})
	if res.IsError || !strings.Contains(fmt.Sprint(rd["content"]), "of a long page.") {
		t.Fatalf("web_read %s: %v", m[1], rd)
	}
}

// needChromium skips the test when Chromium is missing, or fails it under CI
// (CI=true: the browser tests must run there).
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := backend.FindChromium(""); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Chromium missing (CI unset): %v", err)
		}
		t.Fatal(err)
	}
}

// serveBigPage serves big.test/big: 2,000 short paragraphs, a page whose
// snapshot is truncated and stored.
func serveBigPage(f *fixture) *webtest.Site {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "<p>Line %d of a long page.</p>", i)
	}
	mux := http.NewServeMux()
	mux.Handle("/big", webtest.Page(`<!doctype html><title>Big</title>`+b.String()))
	return f.w.Serve("big.test", mux)
}
