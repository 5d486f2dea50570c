package browser

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestSessionHandles: in one process (no Redis), browser_navigate returns
// a session handle bound to the principal; a call of another task with it
// acts on that session (same page, same refs) and leaves that task's own
// binding alone; another principal's use of it, an unknown handle and a
// closed one read session_not_found alike; browser_close with it closes
// exactly that session.
func TestSessionHandles(t *testing.T) {
	m, ps := manager(t)
	x := principal.With(context.Background(), "x")
	y := principal.With(context.Background(), "y")
	defer m.CloseTask("h-a")
	defer m.CloseTask("h-b")

	nav := m.Navigate(x, "h-a", NavigateInput{URL: ps.url("allowed.test", "/task-a")})
	if !nav.Success || !handle.Valid(nav.Session) {
		t.Fatalf("navigate: no handle: %+v", nav.Page)
	}
	nav2 := m.Navigate(x, "h-a", NavigateInput{URL: ps.url("allowed.test", "/task-a")})
	if nav2.Session != nav.Session {
		t.Fatalf("a second navigation of one session got another handle: %q vs %q", nav2.Session, nav.Session)
	}

	// Task h-b drives h-a's session by its handle.
	sn := m.Snapshot(WithSession(x, nav.Session), "h-b", SnapshotInput{})
	if !sn.Success || sn.SessionKey != "h-a" || !strings.Contains(sn.Snapshot, `textbox "Email"`) {
		t.Fatalf("snapshot with the handle from another task: %+v", sn)
	}
	email := refOf(t, nav2.Snapshot, "textbox", "Email")
	ty := m.Type(WithSession(x, nav.Session), "h-b", TypeInput{Ref: email, Text: "ada@example.com"})
	if !ty.Success || !strings.Contains(ty.Delta, "ada@example.com") {
		t.Fatalf("type with the handle: %+v", ty)
	}
	if _, bound := m.Bindings()["h-b"]; bound {
		t.Errorf("a call with a handle bound task h-b: %v", m.Bindings())
	}

	// Another principal, an unknown handle, a malformed one: the same refusal.
	for name, c := range map[string]context.Context{
		"other principal": WithSession(y, nav.Session),
		"unknown":         WithSession(x, handle.New()),
		"malformed":       WithSession(x, "not-a-handle"),
	} {
		r := m.Snapshot(c, "h-b", SnapshotInput{})
		if r.Success || r.Reason != reason.SessionNotFound || strings.Contains(r.Snapshot, "Email") {
			t.Errorf("%s: %+v", name, r)
		}
		n := m.Navigate(c, "h-b", NavigateInput{URL: ps.url("allowed.test", "/task-b")})
		if n.Success || n.Reason != reason.SessionNotFound {
			t.Errorf("%s navigate: %+v", name, n.Page)
		}
	}

	cl := m.CloseSessions(WithSession(x, nav.Session), "h-b")
	if !cl.Success || len(cl.Closed) != 1 || cl.Closed[0] != "h-a" {
		t.Fatalf("close with the handle: %+v", cl)
	}
	if r := m.Snapshot(WithSession(x, nav.Session), "h-b", SnapshotInput{}); r.Reason != reason.SessionNotFound {
		t.Errorf("closed handle: %+v", r.Page)
	}
	if r := m.Snapshot(x, "h-a", SnapshotInput{}); strings.Contains(r.Snapshot, "Email") {
		t.Errorf("the task's session survived a close by handle: %+v", r)
	}
}
