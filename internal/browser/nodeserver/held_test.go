package nodeserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestHeldSpares: a replica holds reserved spares on a node, attached in
// the background (node/held.go), and a navigate that takes one binds it
// and attaches nothing on the call's path: every AttachTab on the
// replica's node connection is one the pool made (a replica holding none
// attaches on the path, the contrast). Capacity stays honest: held spares
// are not sessions; another replica's opens reclaim them before
// browser_capacity, which then comes when the node's sessions fill it; the
// holder drops the spares it lost and holds again when a slot frees; its
// Close releases what it holds.
func TestHeldSpares(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	reg := node.NewRegistry(rdb)
	const capacity = 4
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Config: config.Default(), Home: t.TempDir(), Listen: "127.0.0.1:0",
		Registry: reg, Resolver: testResolver{}, MaxSessions: capacity})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	srv := page("held-page-marker")
	defer srv.Close()
	ctx := principal.With(context.Background(), "x")
	replica := func(spares int) *browser.Manager {
		m, _ := browser.New(browser.Options{Config: privateConfig(), Home: t.TempDir(), Resolver: testResolver{},
			Nodes: &browser.NodeOptions{Registry: reg, Spares: spares}})
		t.Cleanup(func() { m.Close() })
		return m
	}
	nav := func(m *browser.Manager, task string) browser.NavigateResult {
		t.Helper()
		r := m.Navigate(ctx, task, browser.NavigateInput{URL: srv.URL + "/"})
		if r.Success && (r.Backend != "node" || !strings.Contains(r.Snapshot, "held-page-marker")) {
			t.Fatalf("navigate %s = %+v", task, r)
		}
		return r
	}
	// onPath is the AttachTab calls on m's node connections that its pool
	// did not make.
	onPath := func(m *browser.Manager) int64 {
		st := m.NodeSpareStats()
		return st.ConnAttaches - int64(st.Attaches)
	}

	// The contrast: without held spares the navigate attaches to the
	// node's spare on its path.
	waitFor(t, 60*time.Second, "the node's spares", func() bool { return s.SpareStats().Ready == nodeserver.DefaultSpares })
	cold := replica(-1)
	if r := nav(cold, "cold"); !r.Success {
		t.Fatalf("navigate cold = %+v", r.Page)
	}
	if n := onPath(cold); n != 1 {
		t.Fatalf("a replica holding no spare: %d attaches on the path, want 1", n)
	}
	cold.CloseSessions(ctx, "cold")

	m := replica(0)
	if r := nav(m, "warm"); !r.Success {
		t.Fatalf("navigate warm = %+v", r.Page)
	}
	// From its first placement on, the replica holds spares on the node.
	waitFor(t, 60*time.Second, "a held spare", func() bool { return m.NodeSpareStats().Held >= 1 })
	if got := s.SpareStats().Reserved; got != m.NodeSpareStats().Held {
		t.Fatalf("the node has %d reservations, the replica holds %d", got, m.NodeSpareStats().Held)
	}
	base := onPath(m) // warm's own attach (nothing was held yet)
	st0, ns0 := m.NodeSpareStats(), s.SpareStats()
	r := nav(m, "a")
	if !r.Success {
		t.Fatalf("navigate a = %+v", r.Page)
	}
	if st := m.NodeSpareStats(); st.Hits != st0.Hits+1 {
		t.Fatalf("held stats %+v after %+v: the navigate was not served by a held spare", st, st0)
	}
	if ns := s.SpareStats(); ns.Binds != ns0.Binds+1 {
		t.Fatalf("node spare stats %+v after %+v: no reservation was bound", ns, ns0)
	}
	// Timing-free: the pool's refill may still be attaching; once it is
	// done, every attach on the connection is the pool's.
	waitFor(t, 30*time.Second, "no attach on the navigate's path", func() bool { return onPath(m) == base })
	if sn := m.Snapshot(browser.WithSession(ctx, r.Session), "a", browser.SnapshotInput{}); !sn.Success || !strings.Contains(sn.Snapshot, "held-page-marker") {
		t.Fatalf("snapshot of the held session = %+v", sn)
	}

	// Capacity: m has 2 sessions and holds spares in the other slots;
	// replica b's opens reclaim them, and the node is full only when its
	// sessions fill it.
	waitFor(t, 60*time.Second, "the held spares to fill the node", func() bool {
		return s.Sessions()+s.SpareStats().Reserved == capacity
	})
	b := replica(-1)
	for _, task := range []string{"b1", "b2"} {
		if r := nav(b, task); !r.Success {
			t.Fatalf("navigate %s on a node whose free slots are held by another replica = %+v, want a reclaimed slot", task, r.Page)
		}
	}
	if r := nav(b, "b3"); r.Success || r.Reason != reason.BrowserCapacity {
		t.Fatalf("a fifth session on a node of capacity 4 = %+v, want browser_capacity", r.Page)
	}
	if r := nav(m, "c"); r.Success || r.Reason != reason.BrowserCapacity {
		t.Fatalf("the holder's navigate on the full node = %+v, want browser_capacity", r.Page)
	}
	if err := m.NodeReadiness(ctx); err == nil {
		t.Error("NodeReadiness of a full node = nil")
	}
	rec, _, _ := reg.Get(ctx, s.ID())
	if rec.Sessions != capacity || s.SpareStats().Reserved != 0 {
		t.Fatalf("record %+v, node %+v", rec, s.SpareStats())
	}
	waitFor(t, 30*time.Second, "the holder to drop the spares it lost", func() bool { return m.NodeSpareStats().Held == 0 })

	// A slot frees: the holder holds again, and its next navigate takes it.
	b.CloseSessions(ctx, "b1")
	waitFor(t, 60*time.Second, "a held spare in the freed slot", func() bool { return m.NodeSpareStats().Held == 1 })
	hits := m.NodeSpareStats().Hits
	if r := nav(m, "c"); !r.Success {
		t.Fatalf("navigate c = %+v", r.Page)
	}
	if st := m.NodeSpareStats(); st.Hits != hits+1 {
		t.Fatalf("held stats %+v: navigate c was not served by the held spare", st)
	}

	// Close releases what the replica holds.
	m.CloseSessions(ctx, "c")
	waitFor(t, 60*time.Second, "a held spare", func() bool { return m.NodeSpareStats().Held >= 1 })
	m.Close()
	if n := s.SpareStats().Reserved; n != 0 {
		t.Fatalf("%d reservations left after the replica closed", n)
	}
}
