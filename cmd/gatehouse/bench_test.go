package main

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkProcessExtract compares what an agent pays per web_extract call:
// a fresh `gatehouse extract --json URL` process per call, against one
// tools/call to a long-running `gatehouse mcp` over stdio (both real
// processes, same loopback page).
func BenchmarkProcessExtract(b *testing.B) {
	bin := gatehouseBinary(b)
	home := mcpHome(b)
	page := testPage(b)
	url := page.URL + "/bench"
	b.Run("cli_process", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(bin, "extract", "--json", url)
			cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+home)
			if out, err := cmd.Output(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
		}
	})
	b.Run("mcp_stdio_call", func(b *testing.B) {
		cs := mcpStdio(b, bin, home, nil)
		defer cs.Close()
		p := &mcp.CallToolParams{Name: "web_extract", Arguments: map[string]any{"urls": []string{url}}}
		for b.Loop() {
			if res, err := cs.CallTool(context.Background(), p); err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
}
