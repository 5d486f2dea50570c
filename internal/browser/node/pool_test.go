package node

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
