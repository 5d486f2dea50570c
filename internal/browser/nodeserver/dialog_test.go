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
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// askPage serves a page whose button opens a prompt and writes the answer
// into the title, /late a page that opens one by itself after 1 s, and
// /ok a plain page.
func askPage() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/ok":
			fmt.Fprint(w, `<!doctype html><title>ok-page</title><h1>ok-page</h1>`)
		case "/late":
			fmt.Fprint(w, `<!doctype html><title>late</title><script>setTimeout(() => { document.title = "late:" + confirm("late question") }, 1000)</script><h1>late</h1>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>ask</title><button onclick="document.title = 'answer:' + prompt('name?', 'dflt')">Ask</button>`)
		}
	}))
}

// TestDialogAcrossReplicas (issue 19 item 3): a must_respond dialog that
// opened while replica 1 served the session is reported by replica 2's
// next call (dialog_pending with pending_dialogs: type, message, default
// prompt), answered through replica 2 (browser_dialog: the node's dialog
// watch answers it, then replica 2 attaches), and dismissed by a
// navigation through replica 2, as in one process; replica 1 then sees no
// dialog. A dialog that opens while no replica is attached at all is
// reported and answered too. Before the node watched dialogs, replica 2's
// attach waited for Page.enable until the call's deadline and the session
// was lost.
func TestDialogAcrossReplicas(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	redisURL, rdb := startRedis(t)
	bin := buildGatehouse(t)
	reg := node.NewRegistry(rdb)
	startNode(t, bin, redisURL, "--watch-dialogs")
	srv := askPage()
	defer srv.Close()
	ctx := principal.With(context.Background(), "x")
	m1, m2 := replica(t, reg, nil), replica(t, reg, nil)

	nav := m1.Navigate(ctx, "t1", browser.NavigateInput{URL: srv.URL + "/"})
	if !nav.Success {
		t.Fatalf("navigate: %+v", nav)
	}
	hc := browser.WithSession(ctx, nav.Session)
	ask := regexp.MustCompile(`button "Ask" \[ref=(\w+)\]`).FindStringSubmatch(nav.Snapshot)[1]
	open := func() {
		t.Helper()
		cl := m1.Click(hc, "t1", browser.RefInput{Ref: ask})
		if !cl.Success || len(cl.PendingDialogs) != 1 {
			t.Fatalf("the click that opens the prompt on replica 1: %+v", cl)
		}
	}
	open()

	start := time.Now()
	sn := m2.Snapshot(hc, "t2", browser.SnapshotInput{})
	took := time.Since(start)
	if sn.Success || sn.Reason != reason.DialogPending || len(sn.PendingDialogs) != 1 {
		t.Fatalf("replica 2's snapshot under replica 1's dialog: %+v; want dialog_pending naming it", sn.Page)
	}
	if d := sn.PendingDialogs[0]; d.Type != "prompt" || d.Message != "name?" || d.DefaultPrompt != "dflt" || d.Action != "pending" {
		t.Errorf("the pending dialog as replica 2 reports it: %+v", d)
	}
	t.Logf("replica 2's dialog_pending took %v", took)

	ans := m2.Dialog(hc, "t2", browser.DialogInput{Action: "accept", PromptText: "bob"})
	if !ans.Success || ans.Dialog == nil || ans.Dialog.Action != "accepted" || ans.Dialog.Message != "name?" {
		t.Fatalf("browser_dialog through replica 2: %+v", ans)
	}
	if c := m2.Console(hc, "t2", browser.ConsoleInput{Expression: "document.title"}); !c.Success || string(c.Result) != `"answer:bob"` {
		t.Errorf("the page after replica 2's answer: %+v (result %s)", c.Page, c.Result)
	}
	if r1 := m1.Snapshot(hc, "t1", browser.SnapshotInput{}); !r1.Success || len(r1.PendingDialogs) != 0 {
		t.Errorf("replica 1 after replica 2 answered: %+v", r1.Page)
	}

	// Dismissed by a navigation through replica 2.
	open()
	// Replica 2 holds an attachment now, made before this dialog opened:
	// it saw it open like replica 1, in process.
	if r2 := m2.Snapshot(hc, "t2", browser.SnapshotInput{}); r2.Reason != reason.DialogPending || len(r2.PendingDialogs) != 1 {
		t.Errorf("replica 2 (attached) under the second dialog: %+v", r2.Page)
	}
	m3 := replica(t, reg, nil) // never attached: the node's watch alone saw it
	if nv := m3.Navigate(hc, "t3", browser.NavigateInput{URL: srv.URL + "/ok"}); !nv.Success || !strings.Contains(nv.Snapshot, "ok-page") {
		t.Fatalf("a navigation through replica 3 under the dialog: %+v", nv)
	}
	if r1 := m1.Snapshot(hc, "t1", browser.SnapshotInput{}); !r1.Success || !strings.Contains(r1.Snapshot, "ok-page") || len(r1.PendingDialogs) != 0 {
		t.Errorf("replica 1 after the navigation: %+v", r1)
	}

	// A dialog that opens while no replica is attached.
	late := m1.Navigate(hc, "t1", browser.NavigateInput{URL: srv.URL + "/late"})
	if !late.Success {
		t.Fatalf("navigate /late: %+v", late.Page)
	}
	m1.Close()
	m2.Close()
	m3.Close()
	time.Sleep(1500 * time.Millisecond)
	m4 := replica(t, reg, nil)
	var r4 browser.SnapshotResult
	waitFor(t, 10*time.Second, "the late dialog", func() bool {
		r4 = m4.Snapshot(hc, "t4", browser.SnapshotInput{})
		return r4.Reason == reason.DialogPending
	})
	if len(r4.PendingDialogs) != 1 || r4.PendingDialogs[0].Type != "confirm" || r4.PendingDialogs[0].Message != "late question" {
		t.Errorf("the dialog no replica saw open: %+v", r4.Page)
	}
	if d := m4.Dialog(hc, "t4", browser.DialogInput{Action: "dismiss"}); !d.Success || d.Dialog == nil || d.Dialog.Action != "dismissed" {
		t.Fatalf("dismissing it through replica 4: %+v", d)
	}
	if c := m4.Console(hc, "t4", browser.ConsoleInput{Expression: "document.title"}); string(c.Result) != `"late:false"` {
		t.Errorf("the page after the dismissal: %+v (result %s)", c.Page, c.Result)
	}
}
