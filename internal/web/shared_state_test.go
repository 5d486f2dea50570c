package web_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// TestSharedStateTwoReplicas is issue 18's "Done when" for the shared
// state at the web layer: two independent services (two GATEHOUSE_HOMEs,
// two Redis clients, one redis-server). The page origin is public-looking
// through the egress test seams: a name (news.test) the injected resolver
// maps to loopback, reached through AllowAddrPorts, so the cache rules
// treat it as a public page (pages from private addresses are never cached).
func TestSharedStateTwoReplicas(t *testing.T) {
	srv := redistest.Start(t)
	f := &braveFake{delay: 300 * time.Millisecond}
	a := newHarness(t)
	site := a.serve("news.test", pageHandler(html("Long Read", article(150, "tide"))))
	a.dotenv = map[string]string{"BRAVE_SEARCH_API_KEY": "BSAtestkey0123456789"}
	a.cfg.Web.SearchBackend = "brave"
	a.vendor("brave-free", f.handler)
	a.state = redistest.Open(t, srv)

	b := newHarness(t)
	b.res.set("news.test", "127.0.0.1")
	b.sites, b.vendors, b.endpoints, b.dotenv, b.cfg, b.now = a.sites, a.vendors, a.endpoints, a.dotenv, a.cfg, a.now
	b.state = redistest.Open(t, srv)
	a.open()
	b.open()
	ctx := principal.With(context.Background(), "x")
	extract := func(h *harness, ctx context.Context, u string) web.Result {
		t.Helper()
		resp := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{u}, ReadTool: truncate.ReadToolWeb})
		if len(resp.Results) != 1 {
			t.Fatalf("extract %s: %+v", u, resp)
		}
		return resp.Results[0]
	}

	// A fetches and stores the truncated page; B serves it from the cache.
	u := site.URL("/long")
	r1 := extract(a, ctx, u)
	if !r1.OK() || r1.Meta.Cached || !r1.Meta.Truncated || r1.Meta.StoredPath == "" {
		t.Fatalf("replica A: %+v meta %+v", r1, r1.Meta)
	}
	r2 := extract(b, ctx, u)
	if !r2.OK() || !r2.Meta.Cached || r2.Content != r1.Content {
		t.Fatalf("replica B: cached=%v ok=%v; want a cache hit of A's fetch", r2.Meta != nil && r2.Meta.Cached, r2.OK())
	}
	if n := site.hits.Load(); n != 1 {
		t.Fatalf("origin hits = %d; want 1 (B hit A's cache entry)", n)
	}

	// web_read on B reads the page A stored, by the footer's name; another
	// principal gets not_found, exactly as for a page that does not exist.
	readB := (&tools.Env{Web: web.Env{Home: b.home, Config: b.cfg, State: b.state}}).Store()
	name := r1.Meta.StoredPath
	got, err := readB.For(ctx).Read(name, 1, 2)
	if err != nil || !strings.Contains(got.Content, "Paragraph 0 about tide") || got.TotalLines < 10 {
		t.Fatalf("web_read on B of %s: %+v %v", name, got, err)
	}
	_, errY := readB.For(principal.With(context.Background(), "y")).Read(name, 1, 2)
	if e := reason.As(errY); e == nil || e.Code != reason.ReadNotFound {
		t.Fatalf("principal y reading x's page: %v; want read_not_found", errY)
	}

	// 10 identical concurrent searches over both replicas reach the backend once.
	var wg sync.WaitGroup
	resps := make([]*web.SearchResponse, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := []*harness{a, b}[i%2]
			resps[i] = h.svc.Search(ctx, web.SearchRequest{Query: "shared state", Limit: 5})
		}()
	}
	wg.Wait()
	for i, r := range resps {
		if !r.Success {
			t.Fatalf("search %d: %+v", i, r)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("10 identical searches over 2 replicas reached the backend %d times; want 1", n)
	}

	// Redis stopped: calls that need it are refused with state_unavailable,
	// never served from per-replica state; back, and they work with no restart.
	srv.Stop()
	down := extract(b, ctx, site.URL("/other"))
	if rowReason(t, down) != reason.StateUnavailable || down.Error == nil || !strings.Contains(*down.Error, srv.Addr()) {
		t.Fatalf("extract with Redis down: %+v", down)
	}
	if r := b.svc.Search(ctx, web.SearchRequest{Query: "another query"}); r.Success || r.Reason != reason.StateUnavailable {
		t.Fatalf("search with Redis down: %+v", r)
	}
	if _, err := readB.For(ctx).Read(name, 1, 2); reason.As(err) == nil || reason.As(err).Code != reason.StateUnavailable {
		t.Fatalf("web_read with Redis down: %v", err)
	}
	srv.Restart()
	if up := extract(b, ctx, site.URL("/other")); !up.OK() {
		t.Fatalf("extract after Redis came back: %+v", up)
	}
	if r := b.svc.Search(ctx, web.SearchRequest{Query: "another query"}); !r.Success {
		t.Fatalf("search after Redis came back: %+v", r)
	}
}
