package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP SDK's opaque pagination cursors (upstream encodes them with
// encoding/gob; an earlier patched copy used JSON): a tools/list paged one
// tool at a time returns every tool once, in order, and a cursor the server
// did not issue is refused.
func TestListCursorsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ServerOptions{PageSize: 1})
	names := []string{"a", "b", "c"}
	for _, n := range names {
		mcp.AddTool(s, &mcp.Tool{Name: n}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var got []string
	cursor, pages := "", 0
	for {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
	}
	if len(got) != len(names) || got[0] != "a" || got[1] != "b" || got[2] != "c" || pages < 3 {
		t.Fatalf("paged tools/list: %v in %d pages, want %v one per page", got, pages, names)
	}
	if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "bm90IGEgY3Vyc29y"}); err == nil {
		t.Error("a cursor the server did not issue was accepted")
	}
}
