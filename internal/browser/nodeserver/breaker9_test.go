package nodeserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

// slowPage serves /slow after a delay (announced on arrived), anything
// else at once.
func slowPage(delay time.Duration, arrived chan<- struct{}) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case arrived <- struct{}{}:
			default:
			}
			time.Sleep(delay)
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>p%s</title><h1>%s</h1>`, r.URL.Path, r.URL.Path)
	}))
}

// TestHandleCloseTakesLock (breaker9 D2): browser_close on the creating
// replica while another replica's navigation runs on the handle waits for
// that call (the handle's Redis lock) instead of closing the tab under
// it; the navigation succeeds, the close then succeeds, and the handle
// reads session_not_found afterwards on both replicas.
func TestHandleCloseTakesLock(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	redisURL, rdb := startRedis(t)
	bin := buildGatehouse(t)
	reg := node.NewRegistry(rdb)
	startNode(t, bin, redisURL)
	arrived := make(chan struct{}, 1)
	srv := slowPage(1500*time.Millisecond, arrived)
	defer srv.Close()
	ctx := principal.With(context.Background(), "x")
	m1, m2 := replica(t, reg, nil), replica(t, reg, nil)
	nav := m1.Navigate(ctx, "t1", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success {
		t.Fatalf("navigate: %+v", nav.Page)
	}
	hc := browser.WithSession(ctx, nav.Session)
	done := make(chan browser.NavigateResult, 1)
	go func() { done <- m2.Navigate(hc, "t2", browser.NavigateInput{URL: srv.URL + "/slow"}) }()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow navigation did not reach the page")
	}
	start := time.Now()
	cl := m1.CloseSessions(hc, "t1")
	took := time.Since(start)
	var slow browser.NavigateResult
	select {
	case slow = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow navigation did not return")
	}
	if took < time.Second {
		t.Errorf("browser_close returned after %v, while another replica's navigation still ran on the session (1.5 s page)", took)
	}
	if !slow.Success {
		t.Errorf("the navigation the close waited for: %+v", slow.Page)
	}
	if !cl.Success {
		t.Errorf("close: %+v", cl.Page)
	}
	for i, m := range []*browser.Manager{m1, m2} {
		if r := m.Snapshot(hc, "t3", browser.SnapshotInput{}); r.Reason != reason.SessionNotFound {
			t.Errorf("replica %d after the close: %+v", i+1, r.Page)
		}
	}
}

// TestRedisRestartLosesSession (breaker9 D3, D4): Redis restarts without
// persistence while a navigation runs on a handle session through replica
// 2 (which attached to it). The node closes the session's proxy (its index
// key is gone); the navigation answers session_lost or succeeded, never
// navigation_failed; no record is saved back (no ghost); replica 2 then
// answers session_lost, and so does the creating replica for its task
// without a session argument (never wording about "the session
// argument"); a navigation of that task without session gets a fresh
// session at once. The message is true: the node did not go away, and a
// new session lands on a node with room.
func TestRedisRestartLosesSession(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	rs := redistest.Start(t)
	rdb := redistest.Open(t, rs).Client()
	bin := buildGatehouse(t)
	reg := node.NewRegistry(rdb)
	n := startNode(t, bin, rs.URL(), "--heartbeat-ttl", "900ms")
	arrived := make(chan struct{}, 1)
	srv := slowPage(3*time.Second, arrived)
	defer srv.Close()
	ctx := principal.With(context.Background(), "x")
	m1, m2 := replica(t, reg, nil), replica(t, reg, nil)
	nav := m1.Navigate(ctx, "t1", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success {
		t.Fatalf("navigate: %+v", nav.Page)
	}
	hc := browser.WithSession(ctx, nav.Session)
	if sn := m2.Snapshot(hc, "t2", browser.SnapshotInput{}); !sn.Success {
		t.Fatalf("snapshot through replica 2: %+v", sn.Page)
	}
	nav3 := m1.Navigate(ctx, "t3", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav3.Success {
		t.Fatalf("navigate t3: %+v", nav3.Page)
	}
	done := make(chan browser.NavigateResult, 1)
	go func() { done <- m2.Navigate(hc, "t2", browser.NavigateInput{URL: srv.URL + "/slow"}) }()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow navigation did not reach the page")
	}
	rs.Restart()
	var slow browser.NavigateResult
	select {
	case slow = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the navigation did not return")
	}
	if !slow.Success && slow.Reason != reason.SessionLost {
		t.Errorf("the navigation that ran while Redis restarted: %+v; want session_lost (or success)", slow.Page)
	}
	if n, _ := rdb.Exists(context.Background(), handle.RecordKey("x", nav.Session)).Result(); n != 0 {
		t.Errorf("a record was saved back after Redis lost it (a ghost)")
	}
	waitFor(t, 10*time.Second, "the node to register again", func() bool { _, ok, _ := reg.Get(context.Background(), n.id); return ok })
	r2 := m2.Snapshot(hc, "t2", browser.SnapshotInput{})
	if r2.Reason != reason.SessionLost || !strings.Contains(r2.Error, "Redis") || strings.Contains(r2.Error, "node went away") {
		t.Errorf("replica 2 after the restart: %+v; want session_lost naming Redis", r2.Page)
	}
	r1 := m1.Snapshot(ctx, "t1", browser.SnapshotInput{})
	if r1.Reason != reason.SessionLost || strings.Contains(r1.Error, "session argument") {
		t.Errorf("replica 1, the task's call without session: %+v; want session_lost", r1.Page)
	}
	if !strings.Contains(r1.Error, "a browser node that has room") {
		t.Errorf("session_lost with a node with room: %q", r1.Error)
	}
	// The first call of task t3 after the loss is a navigation without
	// session: a fresh session at once (docs/browser.md "Losing").
	if r3 := m1.Navigate(ctx, "t3", browser.NavigateInput{URL: srv.URL + "/"}); !r3.Success || r3.Session == nav3.Session {
		t.Errorf("t3's navigation without session after the loss: %+v; want a fresh session at once", r3)
	}
	again := m1.Navigate(ctx, "t1", browser.NavigateInput{URL: srv.URL + "/"})
	if !again.Success || again.Session == nav.Session {
		t.Errorf("a navigation without session after the loss: %+v; want a fresh session at once", again)
	}
}
