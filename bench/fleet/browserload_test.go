package main

import (
	"testing"
	"time"
)

// A task without a session handle stays on its replica (its MCP session is
// its browser session); with one, consecutive calls alternate replicas.
func TestReplicaForAlternatesOnlyWithAHandle(t *testing.T) {
	for call := range 6 {
		if got := replicaFor(1, call, 2, ""); got != 1 {
			t.Errorf("no handle, call %d: replica %d, want 1", call, got)
		}
		if got, want := replicaFor(1, call, 2, "h"), (1+call)%2; got != want {
			t.Errorf("handle, call %d: replica %d, want %d", call, got, want)
		}
		if got := replicaFor(0, call, 1, "h"); got != 0 {
			t.Errorf("one replica, call %d: replica %d, want 0", call, got)
		}
	}
}

// The checks of what a task reads: its own marker passes; another task's
// marker or cookie is bleed and fails the task.
func TestExpectCountsBleed(t *testing.T) {
	r := &brun{res: &BrowserResult{Failures: map[string]int{}, Lat: map[string][]time.Duration{}}}
	own := &btask{r: r, id: 7, marker: "task7-k123456", ok: true}
	own.expect(&browserOut{Snapshot: "Marker: task7-k123456\nCookie received: fleet_7=task7-k123456"}, "snapshot", "task7-k123456")
	if !own.ok || r.res.Bleed != 0 {
		t.Fatalf("own marker and cookie: ok %v, bleed %d", own.ok, r.res.Bleed)
	}
	own.expect(&browserOut{Snapshot: "Marker: task7-k123456\nCookie received: fleet_7=task7-k123456; fleet_8=task8-k000001"}, "snapshot", "task7-k123456")
	if own.ok || r.res.Bleed != 2 {
		t.Errorf("another task's cookie and marker: ok %v, bleed %d (want false, 2)", own.ok, r.res.Bleed)
	}
	if got := unwrapUntrusted("<<<UNTRUSTED WEB CONTENT nonce=ab>>>\nfleet_7=x\n<<<END UNTRUSTED WEB CONTENT nonce=ab>>>"); got != "fleet_7=x" {
		t.Errorf("unwrapUntrusted = %q", got)
	}
	if got := refOf("- textbox \"Note\" [ref=e3]\n- button \"Save\" [ref=e4]", "button", "Save"); got != "e4" {
		t.Errorf("refOf = %q, want e4", got)
	}
}
