package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

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
