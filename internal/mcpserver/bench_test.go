package mcpserver_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/webtest"
)

// benchEnv serves one article page (about 6,000 chars of markdown) and
// returns the registry, the store and the page URL. cache false disables the
// extract cache, so every call fetches and converts the page again.
func benchEnv(b *testing.B, cache bool) (*tools.Registry, tools.Env, string) {
	w := webtest.New(b)
	w.Cfg.Web.CacheEnabled = cache
	s := w.Serve("bench.test", webtest.Page(webtest.LongArticle("Bench", 60)))
	env := tools.Env{Web: w.Env()}
	env.Web.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, _ := tools.Default(env)
	return reg, env, s.URL("/article")
}

// BenchmarkExtractCLIPath is what `gatehouse extract --json URL` does per
// call once the process runs: one registry call and the JSON encoding.
func BenchmarkExtractCLIPath(b *testing.B) {
	for _, cache := range []bool{true, false} {
		b.Run(map[bool]string{true: "cache_hit", false: "no_cache"}[cache], func(b *testing.B) {
			reg, _, url := benchEnv(b, cache)
			in := tools.ExtractInput{URLs: []any{url}}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := reg.CallValue(ctx, tools.WebExtract, in, tools.Options{Surface: tools.SurfaceCLI})
				if err != nil || res.Refused {
					b.Fatal(err)
				}
				if _, err := res.JSON(true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExtractMCPStdio is one tools/call of web_extract from the Go
// SDK's client to a running server over the stdio framing
// (newline-delimited JSON-RPC on pipes), content boundaries on.
func BenchmarkExtractMCPStdio(b *testing.B) {
	for _, cache := range []bool{true, false} {
		b.Run(map[bool]string{true: "cache_hit", false: "no_cache"}[cache], func(b *testing.B) {
			reg, env, url := benchEnv(b, cache)
			srv := mcpserver.New(mcpserver.Options{Registry: reg, Store: env.Store(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); srv.Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}) }()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
			if err != nil {
				b.Fatal(err)
			}
			p := &mcp.CallToolParams{Name: "web_extract", Arguments: map[string]any{"urls": []string{url}}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, p)
				if err != nil || res.IsError {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cs.Close()
			cancel()
			<-done
		})
	}
}
