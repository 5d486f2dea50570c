package main

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
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

// The leftover check sees a descendant that outlived its parent even though
// it carries no marker of its own: a process tracked in a tree while it ran
// is reported until it exits.
func TestProcTrackerReportsAnOrphanedDescendant(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	if _, err := fmt.Fscan(out, &child); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(child, syscall.SIGKILL)
	var pt procTracker
	pt.track([]int{cmd.Process.Pid})
	cmd.Process.Kill()
	cmd.Wait()
	left := pt.alive()
	if len(left) != 1 || !strings.HasPrefix(left[0], fmt.Sprintf("%d ", child)) {
		t.Fatalf("after the parent's SIGKILL: alive %v, want the orphaned sleep %d", left, child)
	}
	syscall.Kill(child, syscall.SIGKILL)
	if err := waitFor("the orphan gone", 5*time.Second, nil, func() bool { return len(pt.alive()) == 0 }); err != nil {
		t.Errorf("%v: alive %v", err, pt.alive())
	}
}
