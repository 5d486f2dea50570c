package node

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

// scanCounter counts SCAN commands (the registry's List).
type scanCounter struct{ n *atomic.Int64 }

func (h scanCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h scanCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.EqualFold(cmd.Name(), "scan") {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h scanCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestPlaceCachesNodeList: placement reads the registry (a keyspace SCAN)
// at most once per ListCacheTTL, not once per new session.
func TestPlaceCachesNodeList(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redistest.Open(t, srv).Client()
	var scans atomic.Int64
	rdb.AddHook(scanCounter{&scans})
	reg := NewRegistry(rdb)
	ctx := context.Background()
	// A node whose address answers nothing: every placement on it fails
	// after the list was read.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rec := goodRecord()
	rec.Addr = addr
	if err := reg.Put(ctx, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	p := NewPool(reg, Allow{}, "", nil, nil)
	defer p.Close()
	place := func() {
		t.Helper()
		placed, _, err := p.Place(ctx, "s", Policy{}, 0, func(*Conn, *Proxy) error { return nil })
		if !placed || err == nil {
			t.Fatalf("Place on a node that does not answer = %v, %v; want placed with an error", placed, err)
		}
	}
	start := time.Now()
	for i := 0; i < 3; i++ {
		place()
	}
	if n := scans.Load(); n != 1 && time.Since(start) < ListCacheTTL {
		t.Fatalf("3 placements within %v read the registry %d times, want 1", ListCacheTTL, n)
	}
	time.Sleep(ListCacheTTL + 50*time.Millisecond)
	before := scans.Load()
	place()
	if scans.Load() == before {
		t.Fatal("a placement after ListCacheTTL did not read the registry again")
	}
}

// TestPlaceRefusedDoesNotMaskCapacity (breaker9 D5): a node record whose
// address browser.node_allow refuses (a metadata address with room) next
// to an allowed node that is full: placement answers browser_capacity, not
// browser_node_refused, and readiness says no node has room. With only the
// refused record: browser_node_refused, and readiness is not ready.
func TestPlaceRefusedDoesNotMaskCapacity(t *testing.T) {
	srv := redistest.Start(t)
	reg := NewRegistry(redistest.Open(t, srv).Client())
	ctx := context.Background()
	now := time.Now().UnixMilli()
	full := Record{Version: RecordVersion, ID: strings.Repeat("b", 32), Addr: "127.0.0.1:9", Capacity: 4, Sessions: 4, Heartbeat: now}
	evil := Record{Version: RecordVersion, ID: strings.Repeat("a", 32), Addr: "169.254.169.254:80", Capacity: 1000, Heartbeat: now}
	for _, r := range []Record{full, evil} {
		if err := reg.Put(ctx, r, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	p := NewPool(reg, Allow{}, "", nil, nil)
	defer p.Close()
	open := func(*Conn, *Proxy) error { t.Fatal("a node was dialed"); return nil }
	placed, _, err := p.Place(ctx, "k", Policy{}, 0, open)
	if !placed || reason.As(err) == nil || reason.As(err).Code != reason.BrowserCapacity {
		t.Errorf("Place with the allowed node full and a refused one with room = %v, %v; want browser_capacity", placed, err)
	}
	if err := p.Readiness(ctx); err == nil || !strings.Contains(err.Error(), "no browser node has room") {
		t.Errorf("Readiness = %v; want no browser node has room", err)
	}
	reg.Delete(ctx, full.ID)
	if _, _, err := p.Place(ctx, "k", Policy{}, 0, open); reason.As(err) == nil || reason.As(err).Code != reason.BrowserNodeRefused {
		t.Errorf("Place with only a refused node = %v; want browser_node_refused", err)
	}
	if err := p.Readiness(ctx); err == nil {
		t.Error("Readiness with only a refused node: ready")
	}
}
