package web_test

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// BenchmarkSearch compares a memo hit with a call to a local vendor fake
// (loopback HTTP, JSON decode, row flagging): what the memo saves per call.
func BenchmarkSearch(b *testing.B) {
	for _, memo := range []bool{true, false} {
		name := "upstream"
		if memo {
			name = "memo_hit"
		}
		b.Run(name, func(b *testing.B) {
			f := &braveFake{}
			h := newHarness(b)
			h.dotenv = map[string]string{"BRAVE_SEARCH_API_KEY": "BSA-bench-0123456789abcdef"}
			h.cfg.Web.SearchBackend = "brave"
			h.cfg.Web.CacheEnabled = memo
			h.vendor("brave-free", f.handler)
			h.open()
			ctx := context.Background()
			req := web.SearchRequest{Query: "benchmark query", Limit: 10}
			h.svc.Search(ctx, req)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if r := h.svc.Search(ctx, req); !r.Success {
					b.Fatal(r.Error)
				}
			}
		})
	}
}
