package cache

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

func TestVectorsBucketLimit(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.bucket_limit", 11) {
		var in struct{ Limit int }
		var want struct{ Bucket int }
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(v.Note+" "+string(v.Input), func(t *testing.T) {
			if got := BucketLimit(in.Limit); got != want.Bucket {
				t.Fatalf("BucketLimit(%d) = %d, want %d", in.Limit, got, want.Bucket)
			}
		})
	}
	if BucketLimit(0) != 10 || BucketLimit(-3) != 10 {
		t.Error("non-positive limits should bucket to 10")
	}
}

func TestVectorsNormalizeQuery(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.normalize_query", 4) {
		var in struct{ Query string }
		var want struct{ Normalized string }
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(v.Note+" "+string(v.Input), func(t *testing.T) {
			if got := NormalizeQuery(in.Query); got != want.Normalized {
				t.Fatalf("NormalizeQuery(%q) = %q, want %q", in.Query, got, want.Normalized)
			}
		})
	}
	if got := NormalizeQuery("\u3000Foo\u00a0\u2028BAR\x1f"); got != "foo bar" {
		t.Errorf("unicode whitespace: %q", got)
	}
}

// successCall returns a call that counts invocations and answers with a
// response in the shape of a web_search result.
func successCall(n *atomic.Int32, success bool) func(context.Context, int) (any, bool, error) {
	return func(_ context.Context, bucket int) (any, bool, error) {
		n.Add(1)
		return map[string]any{"success": success, "bucket": bucket}, success, nil
	}
}

func TestVectorsSearchMemoKey(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.search_memo_key", 3) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct {
				Store  [3]json.RawMessage `json:"store"`
				Lookup [3]json.RawMessage `json:"lookup"`
			}
			var want struct{ Hit bool }
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			var sp, sq, lp, lq string
			var sl, ll int
			vectors.Decode(t, in.Store[0], &sp)
			vectors.Decode(t, in.Store[1], &sq)
			vectors.Decode(t, in.Store[2], &sl)
			vectors.Decode(t, in.Lookup[0], &lp)
			vectors.Decode(t, in.Lookup[1], &lq)
			vectors.Decode(t, in.Lookup[2], &ll)
			m := NewMemo(20*time.Minute, nil)
			var calls atomic.Int32
			if _, hit, err := m.Do(context.Background(), sp, sq, sl, successCall(&calls, true)); hit || err != nil {
				t.Fatalf("first Do: hit=%v err=%v", hit, err)
			}
			_, hit, err := m.Do(context.Background(), lp, lq, ll, successCall(&calls, true))
			if err != nil || hit != want.Hit {
				t.Fatalf("lookup hit = %v, want %v", hit, want.Hit)
			}
			if wantCalls := map[bool]int32{true: 1, false: 2}[want.Hit]; calls.Load() != wantCalls {
				t.Fatalf("%d paid calls, want %d", calls.Load(), wantCalls)
			}
		})
	}
}

func TestVectorsSearchMemoStore(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.search_memo_store", 1) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct {
				Response map[string]any `json:"response"`
			}
			var want struct{ Cached bool }
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			m := NewMemo(20*time.Minute, nil)
			call := func(context.Context, int) (any, bool, error) {
				ok, _ := in.Response["success"].(bool)
				return in.Response, ok, nil
			}
			got, _, _ := m.Do(context.Background(), "p", "q", 5, call)
			if got.(map[string]any)["error"] != "boom" {
				t.Fatal("failure response not passed through")
			}
			_, hit, _ := m.Do(context.Background(), "p", "q", 5, call)
			if hit != want.Cached || (m.Len() > 0) != want.Cached {
				t.Fatalf("cached = %v, want %v", hit, want.Cached)
			}
		})
	}
}

func TestMemoErrorNotStored(t *testing.T) {
	m := NewMemo(time.Minute, nil)
	boom := errors.New("boom")
	_, _, err := m.Do(context.Background(), "p", "q", 5, func(context.Context, int) (any, bool, error) { return nil, true, boom })
	if !errors.Is(err, boom) || m.Len() != 0 {
		t.Fatalf("err=%v len=%d", err, m.Len())
	}
}

func TestMemoExpiry(t *testing.T) {
	clk := newClock()
	m := NewMemo(20*time.Minute, clk.Now)
	var calls atomic.Int32
	m.Do(context.Background(), "p", "q", 5, successCall(&calls, true))
	clk.Advance(20*time.Minute - time.Nanosecond)
	if _, hit, _ := m.Do(context.Background(), "p", "q", 5, successCall(&calls, true)); !hit {
		t.Fatal("miss before expiry")
	}
	clk.Advance(time.Nanosecond)
	if _, hit, _ := m.Do(context.Background(), "p", "q", 5, successCall(&calls, true)); hit {
		t.Fatal("hit at expiry")
	}
	if calls.Load() != 2 {
		t.Fatalf("calls = %d", calls.Load())
	}
	// Storing sweeps expired entries of other keys.
	clk.Advance(21 * time.Minute)
	m.Do(context.Background(), "p", "other", 5, successCall(&calls, true))
	if m.Len() != 1 {
		t.Fatalf("expired entries not swept: %d", m.Len())
	}
}

func TestMemoDisabledStillCoalesces(t *testing.T) {
	m := NewMemo(0, nil)
	var calls atomic.Int32
	for i := 0; i < 3; i++ {
		if _, hit, _ := m.Do(context.Background(), "p", "q", 5, successCall(&calls, true)); hit {
			t.Fatal("disabled memo hit")
		}
	}
	if calls.Load() != 3 || m.Len() != 0 {
		t.Fatalf("calls=%d len=%d", calls.Load(), m.Len())
	}
}

func TestMemoSingleFlight(t *testing.T) {
	m := NewMemo(time.Minute, nil)
	var calls atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	call := func(_ context.Context, bucket int) (any, bool, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return "result", true, nil
	}
	var wg sync.WaitGroup
	results := make([]any, 8)
	go func() { <-started; time.Sleep(20 * time.Millisecond); close(release) }()
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Same key despite case, spacing and limit within one bucket.
			q := []string{"Weather in Vegas", "weather  in vegas", " WEATHER in Vegas "}[i%3]
			v, _, err := m.Do(context.Background(), "firecrawl", q, 1+i, call)
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("%d paid calls for 8 identical concurrent queries", calls.Load())
	}
	for _, r := range results {
		if r != "result" {
			t.Fatalf("results %v", results)
		}
	}
}

func TestMemoWaiterContextCancel(t *testing.T) {
	m := NewMemo(time.Minute, nil)
	release := make(chan struct{})
	started := make(chan struct{})
	go m.Do(context.Background(), "p", "q", 5, func(context.Context, int) (any, bool, error) {
		close(started)
		<-release
		return "late", true, nil
	})
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := m.Do(ctx, "p", "q", 5, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	close(release)
}

// TestMemoScopedByPrincipal (issue 18, principals): the in-process memo keeps
// each principal's entries apart, as the shared one does: principal Y's
// search is never answered from X's entry, and a repeat of X's is.
func TestMemoScopedByPrincipal(t *testing.T) {
	m := NewMemo(time.Minute, nil)
	calls := 0
	call := func(context.Context, int) (any, bool, error) { calls++; return calls, true, nil }
	x := principal.With(context.Background(), "x")
	y := principal.With(context.Background(), "y")
	if _, hit, _ := m.Do(x, "searxng", "go memo", 5, call); hit {
		t.Fatal("first search of x was a hit")
	}
	v, hit, _ := m.Do(y, "searxng", "go memo", 5, call)
	if hit || v != 2 {
		t.Fatalf("y's search = %v (hit %v), want a call of its own (2, miss)", v, hit)
	}
	if v, hit, _ := m.Do(x, "searxng", "go memo", 5, call); !hit || v != 1 {
		t.Fatalf("x's repeat = %v (hit %v), want x's own entry (1, hit)", v, hit)
	}
	if calls != 2 {
		t.Fatalf("backend calls = %d, want 2", calls)
	}
}
