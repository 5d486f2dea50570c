package nodeserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// timeoutReplica is a replica whose browser.command_timeout is the 5 s
// floor.
func timeoutReplica(t *testing.T, reg *node.Registry) *browser.Manager {
	t.Helper()
	cfg := privateConfig()
	cfg.Browser.CommandTimeout = 5 * time.Second
	m, _ := browser.New(browser.Options{Config: cfg, Home: t.TempDir(), Nodes: &browser.NodeOptions{Registry: reg}})
	t.Cleanup(func() { m.Close() })
	return m
}

// hangPage serves a page whose button never returns from its click
// handler (the renderer's main thread spins), and /ok, a plain page.
func hangPage() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/ok" {
			fmt.Fprint(w, `<!doctype html><title>ok-page</title><h1>ok-page</h1>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>hang-page</title><button onclick="for (;;) {}">Hang</button>`)
	}))
}

// hang navigates to the hanging page through m (handle h, any task) and
// clicks its button until a call meets browser.command_timeout; the
// record in Redis then says suspect.
func hang(t *testing.T, m *browser.Manager, hc context.Context, srv string, st *handle.Store, h string) {
	t.Helper()
	nav := m.Navigate(hc, "hanger", browser.NavigateInput{URL: srv + "/"})
	if !nav.Success || nav.Session != h {
		t.Fatalf("navigate to the hanging page: %+v", nav)
	}
	ref := regexp.MustCompile(`button "Hang" \[ref=(\w+)\]`).FindStringSubmatch(nav.Snapshot)
	if ref == nil {
		t.Fatalf("no Hang button: %s", nav.Snapshot)
	}
	cl := m.Click(hc, "hanger", browser.RefInput{Ref: ref[1]})
	if cl.Reason != reason.CommandTimeout {
		// The click may return before the handler spins; the next call meets it.
		if sn := m.Snapshot(hc, "hanger", browser.SnapshotInput{}); sn.Reason != reason.CommandTimeout {
			t.Fatalf("no call met the spinning page: click %+v, snapshot %+v", cl.Page, sn.Page)
		}
	}
	rec, ok, err := st.Get(context.Background(), "x", h)
	if !ok || err != nil || !rec.Suspect {
		t.Fatalf("after the timeout the record is %+v (found %v, %v); want suspect", rec, ok, err)
	}
}

// TestSuspectRecycleAcrossReplicas (spec §B6 on handle sessions): a
// command that times out on one replica marks the session's record
// suspect, so the next call through any replica recycles it: a fresh
// BrowserContext and tab on the node under the same handle (the record's
// next generation, refs start over), the old context disposed and its
// proxy closed, and that call's result says recycled, once. A snapshot
// recycles into a blank page, as in one process; a navigation recycles and
// then loads its page. The creating replica follows the new generation
// (no session_lost), for a call with the handle and for its task's call
// without one.
func TestSuspectRecycleAcrossReplicas(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	redisURL, rdb := startRedis(t)
	bin := buildGatehouse(t)
	reg := node.NewRegistry(rdb)
	n := startNode(t, bin, redisURL)
	srv := hangPage()
	defer srv.Close()
	st := handle.NewStore(rdb, nil)
	ctx := principal.With(context.Background(), "x")
	m1, m2 := timeoutReplica(t, reg), timeoutReplica(t, reg)
	sessions := func() int {
		rec, ok, _ := reg.Get(context.Background(), n.id)
		if !ok {
			return -1
		}
		return rec.Sessions
	}

	nav := m1.Navigate(ctx, "t1", browser.NavigateInput{URL: srv.URL + "/ok"})
	if !nav.Success || !handle.Valid(nav.Session) {
		t.Fatalf("navigate: %+v", nav)
	}
	h := nav.Session
	hc := browser.WithSession(ctx, h)
	gen0, _, _ := st.Get(ctx, "x", h)

	// Round 1: the timeout on replica 1, a snapshot through replica 2.
	hang(t, m1, hc, srv.URL, st, h)
	sn := m2.Snapshot(hc, "t2", browser.SnapshotInput{})
	if !sn.Success || !strings.Contains(sn.Recycled, "timed out") || sn.URL != "about:blank" {
		t.Fatalf("replica 2's snapshot of the suspect session: %+v; want success on a fresh blank page, recycled", sn)
	}
	gen1, ok, _ := st.Get(ctx, "x", h)
	if !ok || gen1.Suspect || gen1.Gen != gen0.Gen+1 || gen1.Target == gen0.Target || gen1.Context == gen0.Context || gen1.Key != gen0.Key || gen1.Owner != gen0.Owner {
		t.Fatalf("record after the recycle: %+v (before %+v)", gen1, gen0)
	}
	waitFor(t, 10*time.Second, "the node to close the old session's proxy", func() bool { return sessions() == 1 })
	if again := m2.Snapshot(hc, "t2", browser.SnapshotInput{}); !again.Success || again.Recycled != "" {
		t.Errorf("the call after the recycle: %+v; want success, no second recycled note", again.Page)
	}
	// The creating replica follows the new generation: its task's call
	// without session and a navigation with the handle.
	if own := m1.Snapshot(ctx, "t1", browser.SnapshotInput{}); !own.Success || own.URL != "about:blank" || own.Recycled != "" {
		t.Errorf("replica 1, task t1 without session, after replica 2 recycled: %+v", own.Page)
	}
	back := m1.Navigate(hc, "t1", browser.NavigateInput{URL: srv.URL + "/ok"})
	if !back.Success || back.Session != h || !strings.Contains(back.Snapshot, "ok-page") || back.Recycled != "" {
		t.Fatalf("replica 1's navigation with the handle after the recycle: %+v", back)
	}

	// Round 2: the timeout on replica 2, a navigation through replica 1:
	// a fresh session under the same handle, which then loads the page.
	hang(t, m2, hc, srv.URL, st, h)
	start := time.Now()
	rn := m1.Navigate(hc, "t1", browser.NavigateInput{URL: srv.URL + "/ok"})
	if !rn.Success || rn.Session != h || !strings.Contains(rn.Recycled, "timed out") || !strings.Contains(rn.Snapshot, "ok-page") {
		t.Fatalf("replica 1's navigation of the suspect session: %+v", rn)
	}
	t.Logf("the recycling navigation took %v", time.Since(start))
	gen2, ok, _ := st.Get(ctx, "x", h)
	if !ok || gen2.Suspect || gen2.Gen != gen1.Gen+1 || gen2.Navs != 1 {
		t.Fatalf("record after the second recycle: %+v", gen2)
	}
	waitFor(t, 10*time.Second, "the node to close the old session's proxy", func() bool { return sessions() == 1 })
	if r2 := m2.Snapshot(hc, "t2", browser.SnapshotInput{}); !r2.Success || !strings.Contains(r2.Snapshot, "ok-page") || r2.Recycled != "" {
		t.Errorf("replica 2 after replica 1 recycled: %+v", r2)
	}
	// Ownership holds on the recycled session: another principal's call
	// with the handle is session_not_found.
	if y := m2.Snapshot(browser.WithSession(principal.With(context.Background(), "y"), h), "ty", browser.SnapshotInput{}); y.Reason != reason.SessionNotFound {
		t.Errorf("another principal's call with the handle: %+v", y.Page)
	}
}
