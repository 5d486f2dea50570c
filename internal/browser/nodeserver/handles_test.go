package nodeserver_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// idleReplica is a replica Manager whose janitor ticks every 50 ms and
// reaps sessions idle for idle.
func idleReplica(t *testing.T, reg *node.Registry, idle time.Duration, lb *logBuf) *browser.Manager {
	t.Helper()
	m, _ := browser.New(browser.Options{Config: privateConfig(), Home: t.TempDir(), Nodes: &browser.NodeOptions{Registry: reg},
		Logger:    slog.New(slog.NewTextHandler(lb, nil)),
		Lifecycle: browser.LifecycleOptions{Tick: 50 * time.Millisecond, Idle: idle}})
	t.Cleanup(func() { m.Close() })
	return m
}

// TestHandleJanitorReapsOnce: a handle session made by replica 1 and
// served by replica 2 is reaped, once idle, by exactly one of the two
// janitors (the lease): its proxy closes on the node and both replicas
// answer session_expired for the handle. The node itself closes a handle
// session's proxy whose index key is gone (its record expired).
func TestHandleJanitorReapsOnce(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	redisURL, rdb := startRedis(t)
	bin := buildGatehouse(t)
	reg := node.NewRegistry(rdb)
	n := startNode(t, bin, redisURL, "--heartbeat-ttl", "600ms")
	srv := page("janitor-page")
	defer srv.Close()
	ctx := principal.With(context.Background(), "x")
	sessions := func() int {
		rec, ok, _ := reg.Get(context.Background(), n.id)
		if !ok {
			return -1
		}
		return rec.Sessions
	}

	var l1, l2 logBuf
	idle := 1500 * time.Millisecond
	m1, m2 := idleReplica(t, reg, idle, &l1), idleReplica(t, reg, idle, &l2)
	nav := m1.Navigate(ctx, "task-1", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success || !handle.Valid(nav.Session) {
		t.Fatalf("navigate: %+v", nav)
	}
	if sn := m2.Snapshot(browser.WithSession(ctx, nav.Session), "task-2", browser.SnapshotInput{}); !sn.Success || !strings.Contains(sn.Snapshot, "janitor-page") {
		t.Fatalf("snapshot through replica 2: %+v", sn)
	}
	waitFor(t, 3*time.Second, "the node to count the session", func() bool { return sessions() == 1 })
	waitFor(t, 10*time.Second, "the reap", func() bool {
		return l1.count("Cleaning up inactive session")+l2.count("Cleaning up inactive session") > 0
	})
	waitFor(t, 3*time.Second, "the node to close the proxy", func() bool { return sessions() == 0 })
	time.Sleep(300 * time.Millisecond) // more janitor ticks on both replicas
	if c := l1.count("Cleaning up inactive session") + l2.count("Cleaning up inactive session"); c != 1 {
		t.Errorf("the session was reaped %d times", c)
	}
	for i, m := range []*browser.Manager{m1, m2} {
		r := m.Snapshot(browser.WithSession(ctx, nav.Session), "task-3", browser.SnapshotInput{})
		if r.Success || r.Reason != reason.SessionExpired {
			t.Errorf("replica %d: the reaped handle: %+v", i+1, r.Page)
		}
	}
	if r := m1.Snapshot(ctx, "task-1", browser.SnapshotInput{}); r.Reason != reason.SessionExpired {
		t.Errorf("the creating task after the reap: %+v", r.Page)
	}

	// A record that expires without a janitor (every replica gone): the
	// node closes its proxy when the proxy's index key is gone. (m1 and m2
	// go first: their janitors would reap the record after 1.5 s.)
	m1.Close()
	m2.Close()
	m3 := replica(t, reg, nil)
	nav = m3.Navigate(ctx, "task-4", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success {
		t.Fatalf("navigate: %+v", nav.Page)
	}
	waitFor(t, 3*time.Second, "the node to count the session", func() bool { return sessions() == 1 })
	m3.Close()
	time.Sleep(700 * time.Millisecond)
	if s := sessions(); s != 1 {
		t.Fatalf("the handle session did not outlive its replica: %d sessions", s)
	}
	keys, _ := rdb.Keys(context.Background(), handle.ProxyPrefix+"*").Result()
	if len(keys) != 1 {
		t.Fatalf("proxy index keys: %v", keys)
	}
	rdb.Del(context.Background(), keys[0])
	waitFor(t, 3*time.Second, "the node to close the orphan proxy", func() bool { return sessions() == 0 })
}

// TestHandleDeltasAcrossReplicas: two replicas take turns on one handle
// session. A replica whose cached last snapshot is not the one the record
// names (the other replica acted since) answers with a full snapshot,
// never a delta against text the page moved on from; and refs stay unique
// across replicas (nextRef travels in the record).
func TestHandleDeltasAcrossReplicas(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	redisURL, rdb := startRedis(t)
	bin := buildGatehouse(t)
	reg := node.NewRegistry(rdb)
	startNode(t, bin, redisURL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>turns</title><button onclick="var b=document.createElement('button');b.textContent='added '+document.querySelectorAll('button').length;document.body.appendChild(b)">Add</button>`))
	}))
	defer srv.Close()
	ctx := principal.With(context.Background(), "x")
	m1, m2 := replica(t, reg, nil), replica(t, reg, nil)
	nav := m1.Navigate(ctx, "t1", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success {
		t.Fatalf("navigate: %+v", nav.Page)
	}
	hc := browser.WithSession(ctx, nav.Session)
	add := regexp.MustCompile(`button "Add" \[ref=(\w+)\]`).FindStringSubmatch(nav.Snapshot)[1]
	c1 := m1.Click(hc, "t1", browser.RefInput{Ref: add})
	if !c1.Success || !strings.Contains(c1.Delta, `+ button "added 1"`) {
		t.Fatalf("click on replica 1: %+v", c1)
	}
	c2 := m2.Click(hc, "t2", browser.RefInput{Ref: add})
	if !c2.Success || c2.Delta != "" || !strings.Contains(c2.Snapshot, `button "added 2"`) {
		t.Fatalf("replica 2's first action (no cached snapshot): want a full snapshot, got %+v", c2)
	}
	c3 := m1.Click(hc, "t1", browser.RefInput{Ref: add})
	if !c3.Success || c3.Delta != "" || !strings.Contains(c3.Snapshot, `button "added 3"`) {
		t.Fatalf("replica 1 after replica 2 acted: want a full snapshot, never a delta against its stale one, got %+v", c3)
	}
	c4 := m1.Click(hc, "t1", browser.RefInput{Ref: add})
	if !c4.Success || !strings.Contains(c4.Delta, `button "added 4"`) {
		t.Fatalf("replica 1 again (its snapshot is the record's): want a delta, got %+v", c4)
	}
	refs := regexp.MustCompile(`\[ref=(\w+)\]`).FindAllStringSubmatch(c3.Snapshot+"\n"+c4.Delta, -1)
	seen := map[string]string{}
	for _, r := range regexp.MustCompile(`(?m)^.*"(added \d|Add)" \[ref=(\w+)\]`).FindAllStringSubmatch(c3.Snapshot+"\n"+c4.Delta, -1) {
		if other, ok := seen[r[2]]; ok && other != r[1] {
			t.Errorf("ref %s names both %q and %q", r[2], other, r[1])
		}
		seen[r[2]] = r[1]
	}
	if len(refs) < 4 {
		t.Errorf("refs: %v", refs)
	}
}
