package vendors

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// mcpFake is a local MCP server built with the same SDK, exposing the tools
// of Exa's and Parallel's hosted keyless servers (spec §A5.1). It records the
// tool calls and HTTP headers it receives; mode injects HTTP failures.
type mcpFake struct {
	mu      sync.Mutex
	calls   []toolCall
	headers []http.Header
	mode    string
	toolErr string // when set, tools answer isError with this text
	srv     *httptest.Server
}

type toolCall struct {
	name string
	args map[string]any
}

func newMCPFake(t *testing.T, sse bool) *mcpFake {
	f := &mcpFake{}
	s := mcp.NewServer(&mcp.Implementation{Name: "fake-vendor", Version: "1"}, nil)
	add := func(name string, answer func(args map[string]any) string) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			f.mu.Lock()
			f.calls = append(f.calls, toolCall{name: name, args: args})
			te := f.toolErr
			f.mu.Unlock()
			if te != "" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: te}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer(args)}}}, nil
		})
	}
	add("web_search_exa", func(map[string]any) string {
		return "Title: The Go Programming Language\nURL: https://go.dev/\nPublished: 2026-01-01\nAuthor: Go team\nHighlights:\nGo is an open source language.\nIt is simple.\n---\nTitle: pkg.go.dev\nURL: https://pkg.go.dev/\nHighlights: Packages.\n"
	})
	add("web_fetch_exa", func(args map[string]any) string {
		return "# Fetched page\n\nContent of " + fmt.Sprint(args["urls"])
	})
	add("web_search", func(map[string]any) string {
		return `{"search_id":"s1","results":[{"url":"https://go.dev/","title":"Go","excerpts":["fast","simple"]},{"url":"https://pkg.go.dev/","title":"Pkg","excerpts":["pkgs"]}]}`
	})
	add("web_fetch", func(args map[string]any) string {
		var rs []map[string]any
		for _, u := range args["urls"].([]any) {
			rs = append(rs, map[string]any{"url": u, "title": "T", "full_content": "Full content of " + u.(string)})
		}
		b, _ := json.Marshal(map[string]any{"results": rs, "errors": []any{}})
		return string(b)
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: !sse})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.headers = append(f.headers, r.Header.Clone())
		mode := f.mode
		f.mu.Unlock()
		if mode == "" {
			h.ServeHTTP(w, r)
			return
		}
		serveFault(w, r, mode, `{"jsonrpc":"2.0","id":1,"result":{"protocolVe`, `{"jsonrpc": "2.0", "id": 1, "result": {`,
			func(int) string { return "error" })
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *mcpFake) client() *http.Client {
	ap := netip.MustParseAddrPort(f.srv.Listener.Addr().String())
	return egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap}}).Client(egress.ClientOptions{})
}

func (f *mcpFake) set(mode string) {
	f.mu.Lock()
	f.mode, f.calls, f.headers = mode, nil, nil
	f.mu.Unlock()
}

func (f *mcpFake) lastCall(t *testing.T) toolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		t.Fatal("no tool call received")
	}
	return f.calls[len(f.calls)-1]
}

// The hosted servers answer tools/call as an SSE stream; both framings work.
func TestKeylessMCPOverSSE(t *testing.T) {
	f := newMCPFake(t, true)
	rows, err := NewExaKeyless(Options{Client: f.client(), Base: f.srv.URL}).Search(context.Background(), "golang", 3)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%+v %v", rows, err)
	}
}

func TestKeylessMCPVendors(t *testing.T) {
	f := newMCPFake(t, false)
	opts := func() Options { return Options{Client: f.client(), Base: f.srv.URL} }
	exa, par := NewExaKeyless(opts()), NewParallelKeyless(opts())

	rows, err := exa.Search(context.Background(), "golang", 7)
	if err != nil || len(rows) != 2 || rows[0].Description != "Go is an open source language. It is simple." || rows[1].Position != 2 {
		t.Fatalf("exa search: %+v %v", rows, err)
	}
	if c := f.lastCall(t); c.name != "web_search_exa" || c.args["query"] != "golang" || num(c.args["numResults"]) != 7 {
		t.Fatalf("exa call %+v", c)
	}
	for _, h := range f.headers {
		if h.Get("Authorization") != "" {
			t.Fatal("keyless call sent Authorization")
		}
	}
	pages := make([]provider.Page, 2)
	exa.Extract(context.Background(), []string{"https://a.example/", "https://b.example/"}, func(i int, p provider.Page) { pages[i] = p })
	if pages[0].Err != nil || pages[0].Title != "Fetched page" || !strings.Contains(pages[1].Content, "https://b.example/") {
		t.Fatalf("exa fetch %+v", pages)
	}
	f.mu.Lock()
	fetches := 0
	for _, c := range f.calls {
		if c.name == "web_fetch_exa" {
			fetches++
			if u, _ := c.args["urls"].([]any); len(u) != 1 {
				t.Errorf("web_fetch_exa must get one URL per call: %v", c.args)
			}
		}
	}
	f.mu.Unlock()
	if fetches != 2 {
		t.Fatalf("web_fetch_exa calls %d", fetches)
	}

	rows, err = par.Search(context.Background(), "golang", 1)
	if err != nil || len(rows) != 1 || rows[0].Description != "fast simple" {
		t.Fatalf("parallel search: %+v %v", rows, err)
	}
	c := f.lastCall(t)
	if c.name != "web_search" || c.args["objective"] != "golang" || fmt.Sprint(c.args["search_queries"]) != "[golang]" || c.args["session_id"] == "" {
		t.Fatalf("parallel call %+v", c)
	}
	sid := c.args["session_id"]
	pages = make([]provider.Page, 1)
	par.Extract(context.Background(), []string{"https://a.example/"}, func(i int, p provider.Page) { pages[i] = p })
	if pages[0].Err != nil || !strings.Contains(pages[0].Content, "Full content") {
		t.Fatalf("parallel fetch %+v", pages)
	}
	if c := f.lastCall(t); c.name != "web_fetch" || c.args["session_id"] != sid || c.args["objective"] != "Full page content" {
		t.Fatalf("session id must be per process: %+v", c)
	}

	for mode, want := range failureModes {
		f.set(mode)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if mode == "timeout" {
			cancel()
			ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		}
		_, err := exa.Search(ctx, "q", 5)
		if reason.Of(err) != want {
			t.Errorf("exa %s: got %v (%s), want %s", mode, err, reason.Of(err), want)
		} else if !strings.Contains(err.Error(), "EXA_API_KEY") && mode != "timeout" {
			t.Errorf("exa %s: error does not suggest the key: %v", mode, err)
		}
		pages := make([]provider.Page, 1)
		par.Extract(ctx, []string{"https://a.example/"}, func(i int, p provider.Page) { pages[i] = p })
		cancel()
		if reason.Of(pages[0].Err) != want && !(mode == "timeout" && reason.Of(pages[0].Err) == reason.VendorTimeout) {
			t.Errorf("parallel fetch %s: got %v, want %s", mode, pages[0].Err, want)
		}
	}
	f.set("")
	f.mu.Lock()
	f.toolErr = "Rate limit exceeded, please slow down"
	f.mu.Unlock()
	if _, err := par.Search(context.Background(), "q", 5); reason.Of(err) != reason.VendorRateLimited || !provider.MovesRing(err) {
		t.Fatalf("tool isError: %v", err)
	}
}
