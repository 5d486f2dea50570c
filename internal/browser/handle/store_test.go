package handle_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

func record(h string) handle.Record {
	return handle.Record{Version: handle.RecordVersion, Handle: h, Node: strings.Repeat("a", 32), Context: "CTX1", Target: "TGT1",
		Proxy: strings.Repeat("b", 32), Key: "task", Owner: "task", NextRef: 1, LastActive: time.Now().UnixMilli()}
}

// TestStore with a real redis-server: a record is its principal's only
// (another principal reads it as absent); the call lock serialises two
// holders ("replicas") of one handle, never interleaving them; the reap
// lease goes to exactly one of many janitors; a reap leaves the
// session_expired marker and removes the record and its proxy index key.
func TestStore(t *testing.T) {
	srv := redistest.Start(t)
	st := redistest.Open(t, srv)
	a, b := handle.NewStore(st.Client()), handle.NewStore(st.Client()) // two replicas
	ctx := context.Background()
	h := handle.New()
	r := record(h)
	if err := handle.PutProxy(ctx, st.Client(), r.Node, r.Proxy, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, "x", r, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.Get(ctx, "x", h); err != nil || !ok || got.Target != "TGT1" {
		t.Fatalf("Get by another replica: %+v %v %v", got, ok, err)
	}
	if _, ok, err := b.Get(ctx, "y", h); ok || err != nil {
		t.Fatalf("another principal read the record: %v %v", ok, err)
	}

	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	for i := range 6 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := s.Lock(ctx, "x", h)
			if err != nil {
				t.Error(err)
				return
			}
			if inside.Add(1) > 1 {
				overlaps.Add(1)
			}
			time.Sleep(20 * time.Millisecond)
			inside.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	if overlaps.Load() > 0 {
		t.Errorf("two holders of one handle's lock overlapped %d times", overlaps.Load())
	}

	ls, err := b.Scan(ctx, 100)
	if err != nil || len(ls) != 1 || ls[0].Handle != h {
		t.Fatalf("Scan: %+v %v", ls, err)
	}
	var won atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a.Lease(ctx, handle.RecordPrefix+ls[0].PKey+":"+h) {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Errorf("%d janitors took the reap lease", won.Load())
	}
	if err := a.Reap(ctx, ls[0], 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.Get(ctx, "x", h); ok {
		t.Error("the record survived its reap")
	}
	if handle.ProxyAlive(ctx, st.Client(), r.Node, r.Proxy) {
		t.Error("the proxy index key survived the reap")
	}
	if ex, ok, err := b.ExpiredOf(ctx, "x", h); !ok || err != nil || ex.IdleMS != 180000 || ex.Key != "task" {
		t.Errorf("marker: %+v %v %v", ex, ok, err)
	}
	if _, ok, _ := b.ExpiredOf(ctx, "y", h); ok {
		t.Error("another principal reads the marker")
	}
}
