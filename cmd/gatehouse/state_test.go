package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

// TestBadRedisURLRefusesStart (issue 18 "Bad input"): a malformed
// GATEHOUSE_REDIS_URL refuses start-up with state_bad_url and a message
// naming the fix, never the password, and never runs on per-replica state.
func TestBadRedisURLRefusesStart(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GATEHOUSE_REDIS_URL", "redis://:hunter2pw@cache.internal:notaport/0")
	code, out, errs := cli(t, home, "extract", "--json", "https://example.com/")
	if code == 0 || !strings.Contains(out+errs, "state_bad_url") || !strings.Contains(out+errs, "GATEHOUSE_REDIS_URL") {
		t.Fatalf("extract: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	code, out2, errs2 := cli(t, home, "mcp")
	if code == 0 || !strings.Contains(out2+errs2, "state_bad_url") && !strings.Contains(out2+errs2, "not a usable Redis URL") {
		t.Fatalf("mcp: exit %d\nstdout %s\nstderr %s", code, out2, errs2)
	}
	if all := out + errs + out2 + errs2; strings.Contains(all, "hunter2pw") {
		t.Fatalf("the password was printed: %s", all)
	}
}

type doctorState struct {
	State *stateStatus `json:"state"`
	OK    bool         `json:"ok"`
}

func doctorJSON(t *testing.T, home string) (doctorState, string) {
	t.Helper()
	_, out, errs := cli(t, home, "doctor", "--json")
	var got doctorState
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.State == nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errs)
	}
	return got, out + errs
}

// TestDoctorShowsStateBackend: doctor shows disk, or the Redis host with
// reachability and latency, never a password.
func TestDoctorShowsStateBackend(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GATEHOUSE_REDIS_URL", "")
	if got, _ := doctorJSON(t, home); got.State.Backend != "disk" || got.State.Reachable != nil {
		t.Fatalf("no URL: %+v", got.State)
	}
	srv := redistest.Start(t)
	t.Setenv("GATEHOUSE_REDIS_URL", srv.URL())
	got, _ := doctorJSON(t, home)
	if s := got.State; s.Backend != "redis" || s.Redis != srv.URL() || s.Reachable == nil || !*s.Reachable || s.LatencyMS <= 0 || s.Reason != "" {
		t.Fatalf("reachable Redis: %+v", s)
	}
	_, text, errs := cli(t, home, "doctor")
	if !strings.Contains(text, "state → redis "+srv.URL()) || !strings.Contains(text, "reachable, PING") {
		t.Fatalf("doctor text: %s%s", text, errs)
	}
	srv.Stop()
	t.Setenv("REDIS_PASSWORD", "hunter2pw")
	got, all := doctorJSON(t, home)
	if s := got.State; s.Reachable == nil || *s.Reachable || s.Reason != "state_unavailable" || !s.Password || got.OK ||
		!strings.Contains(s.Error, srv.Addr()) {
		t.Fatalf("unreachable Redis: %+v ok=%v", s, got.OK)
	}
	if strings.Contains(all, "hunter2pw") {
		t.Fatalf("doctor printed the password: %s", all)
	}
}
