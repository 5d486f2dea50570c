package handle_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

// TestDecodeEvent: only Gatehouse's own events decode.
func TestDecodeEvent(t *testing.T) {
	h, id := handle.New(), strings.Repeat("c", 32)
	good := []string{
		`{"kind":"open","handle":"` + h + `","from":"` + id + `","principal":"alice"}`,
		`{"kind":"end","handle":"` + h + `"}`,
	}
	for _, s := range good {
		if _, err := handle.DecodeEvent([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := []string{
		`{"kind":"close","handle":"` + h + `"}`,
		`{"kind":"end","handle":"ABC"}`,
		`{"kind":"open","handle":"` + h + `","from":"x"}`,
		`{"kind":"open","handle":"` + h + `","principal":"a\nb"}`,
		`{"kind":"end","handle":"` + h + `","extra":1}`,
		`{"kind":"end","handle":"` + h + `"} {}`,
		`{"kind":"open","handle":"` + h + `","principal":"` + strings.Repeat("p", 3000) + `"}`,
		`[]`,
	}
	for _, s := range bad {
		if _, err := handle.DecodeEvent([]byte(s)); !errors.Is(err, handle.ErrRecord) {
			t.Errorf("%.80s: decoded (%v)", s, err)
		}
	}
}

// TestStandbyClaimsAndEvents with a real redis-server: K replicas win a
// session's standby slots, the next loses; Announce and every end of a
// record (Delete, Lose, Reap) reach a subscriber.
func TestStandbyClaimsAndEvents(t *testing.T) {
	srv := redistest.Start(t)
	st := redistest.Open(t, srv)
	s := handle.NewStore(st.Client(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := handle.New()
	for i, want := range []bool{true, true, false} {
		ok, err := s.ClaimStandby(ctx, "x", h, strings.Repeat(string(rune('a'+i)), 32), 2, time.Minute)
		if err != nil || ok != want {
			t.Fatalf("claim %d: %v %v", i, ok, err)
		}
	}
	if ok, _ := s.ClaimStandby(ctx, "y", h, strings.Repeat("d", 32), 2, time.Minute); !ok {
		t.Fatal("another principal's slots are not this one's")
	}
	if ttl := srv.Do("PTTL", handle.StandbyKey("x", h, 0)); ttl == "-1" || ttl == "-2" {
		t.Fatalf("claim without a TTL: %s", ttl)
	}

	events := s.Subscribe(ctx)
	time.Sleep(200 * time.Millisecond) // the subscription is in place
	st.Client().Publish(ctx, handle.EventsChannel, "not json")
	if err := s.Announce(ctx, handle.Event{Kind: handle.EventOpen, Handle: h, From: strings.Repeat("a", 32), Principal: "x"}); err != nil {
		t.Fatal(err)
	}
	r := record(h)
	s.Put(ctx, "x", r, time.Minute)
	s.Delete(ctx, "x", r)
	s.Put(ctx, "x", r, time.Minute)
	s.Lose(ctx, "x", r, "its tab on the browser node is gone")
	var got []string
	for len(got) < 3 {
		select {
		case e := <-events:
			b, _ := json.Marshal(e)
			got = append(got, string(b))
		case <-time.After(10 * time.Second):
			t.Fatalf("events: %v", got)
		}
	}
	want := []string{`{"kind":"open","handle":"` + h + `","from":"` + strings.Repeat("a", 32) + `","principal":"x"}`,
		`{"kind":"end","handle":"` + h + `"}`, `{"kind":"end","handle":"` + h + `"}`}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %s, want %s", i, got[i], want[i])
		}
	}
	s.Put(ctx, "x", r, time.Minute)
	ls, _, err := s.ReapIdle(ctx, -time.Hour, func(handle.Listed) {})
	if err != nil || len(ls) != 1 {
		t.Fatalf("reap: %v %v", ls, err)
	}
	select {
	case e := <-events:
		if e.Kind != handle.EventEnd || e.Handle != h {
			t.Errorf("reap event: %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no end event for the reap")
	}
	cancel()
	for range events { // closed once ctx ends
	}
}

// FuzzDecodeEvent: DecodeEvent never panics, and what it accepts
// round-trips.
func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"kind":"open","handle":"` + handle.New() + `","from":"` + strings.Repeat("c", 32) + `","principal":"alice"}`))
	f.Add([]byte(`{"kind":"end","handle":"` + handle.New() + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := handle.DecodeEvent(b)
		if err != nil {
			return
		}
		enc, _ := json.Marshal(e)
		again, err := handle.DecodeEvent(enc)
		if err != nil || again != e {
			t.Fatalf("round trip of %q: %+v %v", b, again, err)
		}
	})
}

// breaker10 F2: a huge browser.inactivity_timeout saturates the record TTL
// instead of overflowing to a negative one.
func TestRecordTTLSaturates(t *testing.T) {
	if got := handle.RecordTTL(time.Duration(math.MaxInt64)); got != handle.MaxRecordTTL {
		t.Errorf("RecordTTL(huge) = %v, want %v", got, handle.MaxRecordTTL)
	}
	if got := handle.RecordTTL(time.Minute); got != time.Minute+handle.Grace {
		t.Errorf("RecordTTL(1m) = %v", got)
	}
}
