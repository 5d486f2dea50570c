package browser

import (
	"context"
	"github.com/gatehouse-dev/gatehouse/internal/browser/lifespec"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// consoleWithin runs m.Console and fails the test when it has not returned
// within d (the bug it guards against is a call that never returns).
func consoleWithin(t *testing.T, m *Manager, task, expr string, d time.Duration) (ConsoleResult, time.Duration) {
	t.Helper()
	done := make(chan ConsoleResult, 1)
	start := time.Now()
	go func() { done <- m.Console(context.Background(), task, ConsoleInput{Expression: expr}) }()
	select {
	case r := <-done:
		return r, time.Since(start)
	case <-time.After(d):
		t.Fatalf("browser_console %q has not returned after %v", expr, d)
		return ConsoleResult{}, 0
	}
}

// An expression that never ends (a busy loop, also inside a getter read for
// the result's value) ends at browser.command_timeout with command_timeout:
// Gatehouse stops the script (Runtime.terminateExecution), and the same page,
// with its REPL state, answers the next call without a recycle (breaker5
// D20: the call and every later one of the session hung until the process
// died).
func TestEvalBusyLoopEndsAtCommandTimeout(t *testing.T) {
	_, ps := manager(t)
	m, _ := ownManager(t, LifecycleOptions{})
	m.timeouts = lifespec.Timeouts{Command: 2, Open: 10, FirstOpen: 20}
	task := "busy-eval"
	mustNav(t, m, task, ps.url("allowed.test", "/next"))
	if r, _ := consoleWithin(t, m, task, "let keep = 41; keep", 20*time.Second); !r.Success || string(r.Result) != "41" {
		t.Fatalf("setup eval: %+v", r)
	}
	for _, expr := range []string{
		"while(true){}",
		"({get x() { for(;;){} }})", // the loop runs when the value is read
	} {
		r, took := consoleWithin(t, m, task, expr, 30*time.Second)
		if r.Success || r.Reason != reason.CommandTimeout || !strings.Contains(r.Error, "browser.command_timeout") {
			t.Fatalf("%s: %+v, want command_timeout", expr, r)
		}
		if took > 2*time.Second+8*time.Second { // 2 s timeout + stop/probe bound + a loaded machine's slack
			t.Errorf("%s: took %v with a 2 s command timeout", expr, took)
		}
		t.Logf("%s: %s after %v", expr, r.Error, took)
		if s, _ := m.Session(task); s == nil || s.suspect.Load() {
			t.Errorf("%s: the session was marked for recycling although the script was stopped", expr)
		}
		after, took := consoleWithin(t, m, task, "keep + 1", 20*time.Second)
		if !after.Success || string(after.Result) != "42" || after.Recycled != "" {
			t.Fatalf("%s: the next call: %+v, want 42 from the same page", expr, after)
		}
		if took > 5*time.Second {
			t.Errorf("%s: the next call took %v", expr, took)
		}
	}
	if s := m.Snapshot(context.Background(), task, SnapshotInput{}); !s.Success || !strings.Contains(s.Snapshot, "Next page") {
		t.Errorf("snapshot after the stopped scripts: %+v", s)
	}
}
