package node

import (
	"testing"
	"time"
)

// TestHeldTarget: the number of spares held per node is the placements
// on it in the last HeldDemandWindow within [floor, ceiling], none before
// the replica's first placement or after Close; take records the demand
// and finds nothing on a node where none is held.
func TestHeldTarget(t *testing.T) {
	h := &heldPool{floor: 1, ceil: 3, spares: map[string][]*heldSpare{}, demand: map[string][]time.Time{}, notBefore: map[string]time.Time{}}
	now := time.Now()
	if n := h.targetLocked("a", now); n != 0 {
		t.Fatalf("target before any placement = %d, want 0", n)
	}
	for i := range 5 {
		if s := h.take("a", nil); s != nil {
			t.Fatal("take found a spare where none is held")
		}
		want := min(i+1, 3)
		if n := h.targetLocked("a", time.Now()); n != want {
			t.Fatalf("target after %d placements = %d, want %d", i+1, n, want)
		}
	}
	if n := h.targetLocked("b", now); n != 1 {
		t.Fatalf("target of a node with no placement = %d, want the floor 1", n)
	}
	if n := h.targetLocked("a", now.Add(HeldDemandWindow+time.Second)); n != 1 {
		t.Fatalf("target once the demand is older than the window = %d, want the floor", n)
	}
	if h.stats.Misses != 5 || h.stats.Hits != 0 {
		t.Fatalf("stats %+v", h.stats)
	}
	h.closed = true
	if n := h.targetLocked("b", now); n != 0 {
		t.Fatalf("target after Close = %d", n)
	}
	var none *heldPool
	if none.take("a", nil) != nil {
		t.Fatal("a nil pool held a spare")
	}
	none.kick()
}
