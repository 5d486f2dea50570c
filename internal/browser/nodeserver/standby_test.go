package nodeserver_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/standby"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// standbyReplica is a replica Manager with browser.standby_replicas k,
// logging at debug into lb.
func standbyReplica(t *testing.T, reg *node.Registry, k int, lb *logBuf) *browser.Manager {
	t.Helper()
	cfg := privateConfig()
	cfg.Browser.StandbyReplicas = k
	m, _ := browser.New(browser.Options{Config: cfg, Home: t.TempDir(), Nodes: &browser.NodeOptions{Registry: reg},
		Logger: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(func() { m.Close() })
	return m
}

func attachedCount(m *browser.Manager) int {
	_, n := m.StandbyStats()
	return n
}

// TestStandbyPreAttach (browser.standby_replicas, default 1): a record
// session opened on replica A is attached by replica B in the background,
// so B's first call on it attaches nothing more; A never stands by for its
// own session; another principal's call with the handle is still
// session_not_found on B; browser_close through A drops B's standby
// attachment at once (the end event); after everything closes no node
// session and no goroutine is left.
func TestStandbyPreAttach(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	redisURL, rdb := startRedis(t)
	bin := buildGatehouse(t)
	reg := node.NewRegistry(rdb)
	n := startNode(t, bin, redisURL)
	srv := page("standby-page")
	defer srv.Close()
	sessions := func() int {
		rec, ok, _ := reg.Get(context.Background(), n.id)
		if !ok {
			return -1
		}
		return rec.Sessions
	}
	base := runtime.NumGoroutine()
	ctx := principal.With(context.Background(), "x")

	var la, lb logBuf
	a, b := standbyReplica(t, reg, 1, &la), standbyReplica(t, reg, 1, &lb)
	nav := a.Navigate(ctx, "task-1", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success || !handle.Valid(nav.Session) {
		t.Fatalf("navigate: %+v", nav.Page)
	}
	waitFor(t, 30*time.Second, "replica B's standby attach", func() bool { return attachedCount(b) == 1 })
	if st, _ := b.StandbyStats(); st.Claimed != 1 || st.Attached != 1 || st.Failed != 0 {
		t.Errorf("replica B's standby: %+v", st)
	}
	if st, n := a.StandbyStats(); st.Announced != 1 || st.Claimed != 0 || n != 0 {
		t.Errorf("replica A stood by for its own session: %+v, %d attached", st, n)
	}
	if c := lb.count("browser session attached"); c != 1 || lb.count("standby=true") != 1 {
		t.Fatalf("replica B attached %d times before its first call:\n%s", c, lb.b.String())
	}

	hc := browser.WithSession(ctx, nav.Session)
	sn := b.Snapshot(hc, "task-2", browser.SnapshotInput{})
	if !sn.Success || !strings.Contains(sn.Snapshot, "standby-page") {
		t.Fatalf("snapshot through replica B: %+v", sn)
	}
	if c := lb.count("browser session attached"); c != 1 {
		t.Errorf("replica B's first call attached again: %d attaches", c)
	}
	// Another principal's handle: not found, whatever B holds.
	other := browser.WithSession(principal.With(context.Background(), "y"), nav.Session)
	if r := b.Snapshot(other, "task-3", browser.SnapshotInput{}); r.Success || r.Reason != reason.SessionNotFound {
		t.Errorf("principal y with x's handle on replica B: %+v", r.Page)
	}
	if c := lb.count("browser session attached"); c != 1 {
		t.Errorf("principal y's call attached: %d attaches", c)
	}

	// browser_close through A: B drops its attachment (the end event), and
	// the handle is session_not_found on B.
	if r := a.CloseSessions(hc, "task-1"); !r.Success {
		t.Fatalf("close through replica A: %+v", r.Page)
	}
	waitFor(t, 10*time.Second, "replica B to drop its standby attachment on the end event", func() bool {
		st, n := b.StandbyStats()
		return n == 0 && st.Dropped == 1
	})
	if r := b.Snapshot(hc, "task-2", browser.SnapshotInput{}); r.Success || r.Reason != reason.SessionNotFound {
		t.Errorf("the closed handle on replica B: %+v", r.Page)
	}
	waitFor(t, 10*time.Second, "the node to free the session", func() bool { return sessions() == 0 })

	// A call right after the navigation, while the pre-attach may still
	// be queued or in flight (or done already: it starts when the
	// navigation writes the record): one attach in all, never two.
	before := lb.count("browser session attached")
	nav = a.Navigate(ctx, "task-6", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success {
		t.Fatalf("navigate: %+v", nav.Page)
	}
	if sn := b.Snapshot(browser.WithSession(ctx, nav.Session), "task-7", browser.SnapshotInput{}); !sn.Success {
		t.Fatalf("snapshot through replica B at once: %+v", sn.Page)
	}
	time.Sleep(time.Second) // a late pre-attach would log by now
	if c := lb.count("browser session attached") - before; c != 1 {
		t.Errorf("replica B attached %d times for a call right after the navigation", c)
	}
	if r := a.CloseSessions(browser.WithSession(ctx, nav.Session), "task-6"); !r.Success {
		t.Fatalf("close: %+v", r.Page)
	}
	waitFor(t, 10*time.Second, "replica B to drop the third attachment", func() bool { return attachedCount(b) == 0 })

	// A second session, then everything closes: nothing is left.
	nav = a.Navigate(ctx, "task-4", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success {
		t.Fatalf("navigate: %+v", nav.Page)
	}
	waitFor(t, 30*time.Second, "replica B's second standby attach", func() bool { return attachedCount(b) == 1 })
	if r := b.CloseSessions(browser.WithSession(ctx, nav.Session), "task-5"); !r.Success {
		t.Fatalf("close through replica B: %+v", r.Page)
	}
	if n := attachedCount(b); n != 0 {
		t.Errorf("replica B holds %d attachments after closing the session itself", n)
	}
	waitFor(t, 10*time.Second, "the node to free the second session", func() bool { return sessions() == 0 })
	a.Close()
	b.Close()
	waitFor(t, 10*time.Second, "the replicas' goroutines to end", func() bool { return runtime.NumGoroutine() <= base+2 })
}

// TestStandbyOff: with browser.standby_replicas 0 nothing is announced
// and nothing attached ahead; B's first call attaches on demand as before.
func TestStandbyOff(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	redisURL, rdb := startRedis(t)
	bin := buildGatehouse(t)
	reg := node.NewRegistry(rdb)
	startNode(t, bin, redisURL)
	srv := page("standby-off")
	defer srv.Close()
	ctx := principal.With(context.Background(), "x")
	var la, lb logBuf
	a, b := standbyReplica(t, reg, 0, &la), standbyReplica(t, reg, 0, &lb)
	nav := a.Navigate(ctx, "task-1", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success {
		t.Fatalf("navigate: %+v", nav.Page)
	}
	time.Sleep(time.Second) // a standby would attach within this
	if n := attachedCount(b); n != 0 || lb.count("browser session attached") != 0 {
		t.Fatalf("K=0: replica B attached ahead (%d)", n)
	}
	if st, _ := a.StandbyStats(); st != (standby.Stats{}) {
		t.Errorf("K=0: replica A's standby stats %+v", st)
	}
	if sn := b.Snapshot(browser.WithSession(ctx, nav.Session), "task-2", browser.SnapshotInput{}); !sn.Success || !strings.Contains(sn.Snapshot, "standby-off") {
		t.Fatalf("snapshot through replica B: %+v", sn)
	}
	if c := lb.count("browser session attached"); c != 1 || lb.count("standby=true") != 0 {
		t.Errorf("K=0: replica B's on-demand attach: %d (standby %d)", c, lb.count("standby=true"))
	}
}
