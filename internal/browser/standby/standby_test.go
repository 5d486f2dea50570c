package standby_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/standby"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

// fakeReplica is a replica's side of the duty: Attach records what it
// attached (after gate, when set, is closed), Held and Drop read and
// change that set.
type fakeReplica struct {
	mu       sync.Mutex
	held     map[string]string // handle → principal
	gate     chan struct{}
	running  atomic.Int32
	maxConc  atomic.Int32
	attachFn func(p, h string) error
}

func (f *fakeReplica) attach(ctx context.Context, p, h string) error {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		m := f.maxConc.Load()
		if n <= m || f.maxConc.CompareAndSwap(m, n) {
			break
		}
	}
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.attachFn != nil {
		if err := f.attachFn(p, h); err != nil {
			return err
		}
	}
	f.held[h] = p
	return nil
}

func (f *fakeReplica) holds(h string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.held[h]
	return ok
}

func (f *fakeReplica) drop(h string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.held[h]
	delete(f.held, h)
	return ok
}

func (f *fakeReplica) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.held)
}

func start(t *testing.T, st *state.Redis, k, workers, queue int) (*standby.Duty, *fakeReplica) {
	t.Helper()
	f := &fakeReplica{held: map[string]string{}}
	d := standby.Start(context.Background(), standby.Options{Store: handle.NewStore(st.Client(), nil), Replicas: k, TTL: time.Minute,
		Workers: workers, Queue: queue, Attach: f.attach, Held: f.holds, Drop: f.drop})
	if d == nil {
		t.Fatal("no duty")
	}
	t.Cleanup(d.Close)
	return d, f
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // generous: the machine may be loaded
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func record(p, h string) handle.Record {
	return handle.Record{Version: handle.RecordVersion, Handle: h, Node: strings.Repeat("a", 32), Context: "CTX1", Target: "TGT1",
		Proxy: strings.Repeat("b", 32), Key: "task", Owner: "task", Principal: state.PrincipalKey(p), NextRef: 1, LastActive: time.Now().UnixMilli()}
}

// TestDutyClaimsAndEnds: a session announced by replica A is attached by
// exactly K of the other replicas (never by A), with the announced
// principal; a call on the claimant while the attach is in flight waits for
// it (Wait), one elsewhere does not; the record's end drops the attachment.
func TestDutyClaimsAndEnds(t *testing.T) {
	srv := redistest.Start(t)
	st := redistest.Open(t, srv)
	store := handle.NewStore(st.Client(), nil)
	base := runtime.NumGoroutine()
	ctx := context.Background()

	for _, k := range []int{1, 2} {
		a, fa := start(t, st, k, 0, 0)
		b, fb := start(t, st, k, 0, 0)
		c, fc := start(t, st, k, 0, 0)
		gate := make(chan struct{})
		fb.gate, fc.gate = gate, gate
		h := handle.New()
		a.Announce("alice", h)
		waitFor(t, "the claims", func() bool { return b.Stats().Claimed+c.Stats().Claimed == int64(k) })
		// While the attach waits on the gate, a call on the claimant waits
		// for it; one on a replica that did not claim does not.
		claimant, other := b, c
		if b.Stats().Claimed == 0 {
			claimant, other = c, b
		}
		if k == 1 {
			wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			if !claimant.Wait(wctx, h) || wctx.Err() == nil {
				t.Errorf("K=%d: Wait on the claimant did not wait for the attach in flight", k)
			}
			cancel()
			if other.Wait(ctx, h) {
				t.Errorf("K=%d: Wait on a replica that did not claim waited", k)
			}
		}
		cf := fb
		if claimant == c {
			cf = fc
		}
		done := make(chan struct{})
		go func() { claimant.Wait(ctx, h); close(done) }()
		time.Sleep(50 * time.Millisecond)
		close(gate)
		<-done
		if !cf.holds(h) {
			t.Errorf("K=%d: Wait returned before the pre-attach ended", k)
		}
		waitFor(t, "the attaches", func() bool { return fb.count()+fc.count() == k })
		time.Sleep(200 * time.Millisecond) // no late claim
		if n := fb.count() + fc.count(); n != k || fa.count() != 0 {
			t.Errorf("K=%d: attached on B+C %d, on the announcing replica %d", k, n, fa.count())
		}
		for _, f := range []*fakeReplica{fb, fc} {
			for _, p := range f.held {
				if p != "alice" {
					t.Errorf("attached for principal %q", p)
				}
			}
		}
		if s := a.Stats(); s.Announced != 1 || s.Claimed != 0 {
			t.Errorf("K=%d: announcing replica's stats %+v", k, s)
		}
		// The record ends (browser_close on any replica): the end event
		// drops every attachment.
		if err := store.Delete(ctx, "alice", record("alice", h)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the drops", func() bool { return fb.count()+fc.count() == 0 })
		if got := b.Stats().Dropped + c.Stats().Dropped; got != int64(k) {
			t.Errorf("K=%d: dropped %d", k, got)
		}
		a.Close()
		b.Close()
		c.Close()
	}
	waitFor(t, "the duties' goroutines to end", func() bool { return runtime.NumGoroutine() <= base+2 })
}

// TestDutyBounds: with one worker and a queue of one, a burst of
// announcements attaches at most two (the rest are skipped, not claimed);
// with four workers, at most four attaches run at once; a failed attach is
// counted and forgotten (the slot stays claimed); K=0 is no duty.
func TestDutyBounds(t *testing.T) {
	srv := redistest.Start(t)
	st := redistest.Open(t, srv)
	if d := standby.Start(context.Background(), standby.Options{Store: handle.NewStore(st.Client(), nil), Replicas: 0,
		Attach: func(context.Context, string, string) error { return nil }}); d != nil {
		t.Fatal("K=0 started a duty")
	}
	var nilDuty *standby.Duty
	nilDuty.Announce("x", handle.New()) // no duty: nothing, no panic
	if nilDuty.Wait(context.Background(), handle.New()) {
		t.Fatal("a nil duty waited")
	}

	a, _ := start(t, st, 1, 0, 0)
	b, fb := start(t, st, 1, 1, 1)
	gate := make(chan struct{})
	fb.gate = gate
	for range 6 {
		a.Announce("x", handle.New())
	}
	waitFor(t, "the announcements", func() bool { s := b.Stats(); return s.Claimed >= 1 && s.Skipped >= 4 })
	close(gate)
	waitFor(t, "the attaches", func() bool { return b.Stats().Attached >= 1 })
	time.Sleep(200 * time.Millisecond)
	if s := b.Stats(); s.Attached > 2 || s.Skipped < 4 || s.Attached+s.Skipped != 6 {
		t.Errorf("one worker, queue one: %+v", s)
	}

	c, fc := start(t, st, 1, 4, 64)
	gate = make(chan struct{})
	fc.gate = gate
	b.Close() // c alone claims
	for range 12 {
		a.Announce("x", handle.New())
	}
	waitFor(t, "four attaches in flight", func() bool { return fc.running.Load() == 4 })
	time.Sleep(100 * time.Millisecond)
	if n := fc.maxConc.Load(); n != 4 {
		t.Errorf("attaches at once: %d, want 4", n)
	}
	close(gate)
	waitFor(t, "every attach", func() bool { return c.Stats().Attached == 12 })

	fc.mu.Lock()
	fc.attachFn = func(string, string) error { return context.DeadlineExceeded }
	fc.mu.Unlock()
	h := handle.New()
	a.Announce("x", h)
	waitFor(t, "the failure", func() bool { return c.Stats().Failed == 1 })
	if fc.holds(h) || c.Wait(context.Background(), h) {
		t.Error("a failed pre-attach left something behind")
	}
}

// TestDutyAfterRedisRestart: the subscription comes back after Redis
// restarts (go-redis PubSub reconnects), so a later announcement is heard.
func TestDutyAfterRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	st := redistest.Open(t, srv)
	a, _ := start(t, st, 1, 0, 0)
	b, _ := start(t, st, 1, 0, 0)
	a.Announce("x", handle.New())
	waitFor(t, "the first attach", func() bool { return b.Stats().Attached == 1 })
	srv.Restart()
	// Announcements made while the subscription reconnects are lost (an
	// optimisation only): announce until one is heard.
	waitFor(t, "an attach after the restart", func() bool {
		a.Announce("x", handle.New())
		time.Sleep(100 * time.Millisecond)
		return b.Stats().Attached >= 2
	})
}
