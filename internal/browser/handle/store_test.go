package handle_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

func record(h string) handle.Record {
	return handle.Record{Version: handle.RecordVersion, Handle: h, Node: strings.Repeat("a", 32), Context: "CTX1", Target: "TGT1",
		Proxy: strings.Repeat("b", 32), Key: "task", Owner: "task", Principal: state.PrincipalKey("x"), NextRef: 1, LastActive: time.Now().UnixMilli()}
}

// TestStore with a real redis-server: a record is its principal's only
// (another principal reads it as absent); the call lock serialises two
// holders ("replicas") of one handle, never interleaving them; the reap
// lease goes to exactly one of many janitors; a reap leaves the
// session_expired marker and removes the record and its proxy index key.
func TestStore(t *testing.T) {
	srv := redistest.Start(t)
	st := redistest.Open(t, srv)
	a, b := handle.NewStore(st.Client(), nil), handle.NewStore(st.Client(), nil) // two replicas
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

// TestStoreOwnerAndUpdate (breaker9 D6, D3): a record copied under another
// principal's key names its owner, so that principal reads it as absent
// (logged); Update writes only over a record that is there (no ghost
// after Redis lost it); Delete leaves a closed marker and Lose one that
// says why, so Gone answers session_not_found and session_lost with it.
func TestStoreOwnerAndUpdate(t *testing.T) {
	srv := redistest.Start(t)
	st := redistest.Open(t, srv)
	var logs strings.Builder
	var mu sync.Mutex
	lg := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) }), nil))
	s := handle.NewStore(st.Client(), lg)
	ctx := context.Background()
	h := handle.New()
	r := record(h)
	if err := s.Put(ctx, "x", r, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.Client().Copy(ctx, handle.RecordKey("x", h), handle.RecordKey("y", h), 0, false).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(ctx, "y", h); ok || err != nil {
		t.Errorf("y read x's record copied under y's key: %v %v", ok, err)
	}
	mu.Lock()
	if !strings.Contains(logs.String(), "another principal") {
		t.Errorf("the copied record was not logged: %q", logs.String())
	}
	mu.Unlock()
	if found, err := s.Update(ctx, "x", r, time.Minute); !found || err != nil {
		t.Errorf("Update of a record that is there: %v %v", found, err)
	}
	st.Client().Del(ctx, handle.RecordKey("x", h))
	if found, err := s.Update(ctx, "x", r, time.Minute); found || err != nil {
		t.Errorf("Update of a record that is gone: %v %v", found, err)
	}
	if n, _ := st.Client().Exists(ctx, handle.RecordKey("x", h)).Result(); n != 0 {
		t.Error("Update wrote a ghost record")
	}
	if err, _, marked := s.Gone(ctx, "x", h, time.Minute, "next"); marked || err.Code != "session_not_found" {
		t.Errorf("Gone with no marker: %v %v", err, marked)
	}
	s.Delete(ctx, "x", r)
	if err, _, marked := s.Gone(ctx, "x", h, time.Minute, "next"); !marked || err.Code != "session_not_found" {
		t.Errorf("Gone after Delete: %v %v", err, marked)
	}
	s.Lose(ctx, "x", r, "its tab closed")
	if err, _, marked := s.Gone(ctx, "x", h, time.Minute, "a new one lands there"); !marked || err.Code != "session_lost" ||
		!strings.Contains(err.Message, "its tab closed") || !strings.Contains(err.Message, "a new one lands there") {
		t.Errorf("Gone after Lose: %v %v", err, marked)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestLockJunkAndWrongType (breaker9 D7): a lock key holding a value
// Gatehouse did not write answers session_busy at once (naming the DEL
// fix, retry_after_s from its TTL), never a silent wait; a lock held by
// another call answers session_busy once the call's lock wait ends; a
// record key of another Redis type reads state_corrupt with the DEL fix.
func TestLockJunkAndWrongType(t *testing.T) {
	srv := redistest.Start(t)
	st := redistest.Open(t, srv)
	s := handle.NewStore(st.Client(), nil)
	ctx := context.Background()
	h := handle.New()
	lockKey := handle.LockPrefix + state.PrincipalKey("x") + ":" + h
	st.Client().Set(ctx, lockKey, "junk", 600*time.Second)
	start := time.Now()
	jctx, jcancel := context.WithTimeout(ctx, 3*time.Second) // the call's lock wait
	_, err := s.Lock(jctx, "x", h)
	jcancel()
	var ra handle.RetryAfter
	if rerr := reason.As(err); rerr == nil || rerr.Code != reason.SessionBusy || !strings.Contains(rerr.Message, "DEL "+lockKey) ||
		!errors.As(err, &ra) || ra.RetryAfterS() < 500 || time.Since(start) > 2*time.Second {
		t.Errorf("Lock on a junk lock value: %v after %v", err, time.Since(start))
	}
	st.Client().Del(ctx, lockKey)
	unlock, err := s.Lock(ctx, "x", h)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = s.Lock(wctx, "x", h)
	cancel()
	if rerr := reason.As(err); rerr == nil || rerr.Code != reason.SessionBusy || !errors.As(err, &ra) || ra.RetryAfterS() < 1 {
		t.Errorf("Lock held by another call: %v", err)
	}
	unlock()
	st.Client().HSet(ctx, handle.RecordKey("x", h), "a", "b")
	if _, _, err := s.Get(ctx, "x", h); reason.Of(err) != reason.StateCorrupt || !strings.Contains(err.Error(), "DEL") {
		t.Errorf("Get of a WRONGTYPE record key: %v", err)
	}
}
