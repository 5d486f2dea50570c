package nodeserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
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
