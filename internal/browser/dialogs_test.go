package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// dialogPages serves the dialog, popup and download pages on their own
// loopback server (host names resolve through hostResolver).
func dialogPages(t *testing.T) (base func(host, path string) string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/prompt":
			html(w, "Prompt", `<button onclick="const v=prompt('your name?','x'); document.title='got '+v">Ask</button>
<button onclick="document.title=confirm('sure?')?'yes':'no'">Confirm</button>`)
		case "/title-prompt":
			html(w, "Form", `<button onclick="document.title = prompt('name?','def')">Name the page</button>
<button onclick="const v = prompt('note?'); const p = document.createElement('p'); p.textContent = 'Noted: ' + v; document.body.append(p)">Add a note</button>
<button onclick="alert('hello')">Alert</button>`)
		case "/onload-alert":
			html(w, "Loading", `<script>alert('during load')</script><p>after</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return func(host, path string) string { return "http://" + host + ":" + u.Port() + path }
}

func TestDialogMustRespondPromptAndConfirm(t *testing.T) {
	m, _ := manager(t)
	at := dialogPages(t)
	task := "dialog-prompt"
	defer m.CloseTask(task)
	nav := mustNav(t, m, task, at("dialog.test", "/prompt"))
	ask := refOf(t, nav.Snapshot, "button", "Ask")
	conf := refOf(t, nav.Snapshot, "button", "Confirm")

	cl := m.Click(context.Background(), task, RefInput{Ref: ask})
	if !cl.Success || len(cl.PendingDialogs) != 1 || cl.PendingDialogs[0].Type != "prompt" || cl.PendingDialogs[0].DefaultPrompt != "x" {
		t.Fatalf("click: %+v", cl)
	}
	id := cl.PendingDialogs[0].ID
	// Every page call fails fast while the dialog is open; none waits on it.
	start := time.Now()
	sn := m.Snapshot(context.Background(), task, SnapshotInput{})
	if sn.Reason != reason.DialogPending || len(sn.PendingDialogs) != 1 || !strings.Contains(sn.Error, "browser_dialog") {
		t.Fatalf("snapshot with a pending dialog: %+v", sn)
	}
	if cl2 := m.Click(context.Background(), task, RefInput{Ref: conf}); cl2.Reason != reason.DialogPending {
		t.Fatalf("click with a pending dialog: %+v", cl2)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("calls with a pending dialog took %v", d)
	}
	if bad := m.Dialog(context.Background(), task, DialogInput{Action: "maybe"}); bad.Reason != reason.InvalidDialogAction {
		t.Fatalf("bad action: %+v", bad)
	}
	if wrong := m.Dialog(context.Background(), task, DialogInput{Action: "accept", DialogID: "d999"}); wrong.Reason != reason.NoDialog {
		t.Fatalf("wrong id: %+v", wrong)
	}
	dr := m.Dialog(context.Background(), task, DialogInput{Action: "accept", PromptText: "Ada", DialogID: id})
	if !dr.Success || dr.Title != "got Ada" || dr.Dialog.Action != "accepted" || dr.Dialog.By != "agent" {
		t.Fatalf("accept prompt: %+v", dr)
	}
	if again := m.Dialog(context.Background(), task, DialogInput{Action: "dismiss"}); again.Reason != reason.NoDialog {
		t.Fatalf("nothing pending: %+v", again)
	}
	// confirm → dismiss → false.
	if cl := m.Click(context.Background(), task, RefInput{Ref: conf}); len(cl.PendingDialogs) != 1 {
		t.Fatalf("confirm click: %+v", cl)
	}
	if dr := m.Dialog(context.Background(), task, DialogInput{Action: "dismiss"}); !dr.Success || dr.Title != "no" {
		t.Fatalf("dismiss confirm: %+v", dr)
	}
	sn = m.Snapshot(context.Background(), task, SnapshotInput{})
	if !sn.Success || len(sn.RecentDialogs) != 2 || sn.RecentDialogs[1].Action != "dismissed" {
		t.Fatalf("snapshot after: %+v", sn.RecentDialogs)
	}
}

func TestDialogDuringLoadNeverBlocksNavigate(t *testing.T) {
	m, _ := manager(t)
	at := dialogPages(t)
	task := "dialog-onload"
	defer m.CloseTask(task)
	start := time.Now()
	r := m.Navigate(context.Background(), task, NavigateInput{URL: at("dialog.test", "/onload-alert")})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("navigate to a page that alerts while loading took %v", d)
	}
	if !r.Success || len(r.PendingDialogs) != 1 || r.PendingDialogs[0].Message != "during load" {
		t.Fatalf("navigate: %+v", r)
	}
	dr := m.Dialog(context.Background(), task, DialogInput{Action: "dismiss"})
	if !dr.Success || !strings.Contains(dr.Snapshot, "after") {
		t.Fatalf("after dismiss: %+v", dr)
	}
	// A navigation away dismisses a pending dialog first.
	mustNav(t, m, task, at("dialog.test", "/onload-alert"))
	r = m.Navigate(context.Background(), task, NavigateInput{URL: at("dialog.test", "/prompt")})
	if !r.Success || len(r.PendingDialogs) != 0 || len(r.Dialogs) != 0 {
		t.Fatalf("navigate away: %+v", r)
	}
}

// browser_dialog returns what the page did next: a delta when the answer
// changed the page, the compact snapshot when it changed nothing a snapshot
// shows (the answer went into the title); the dialog_pending message reads
// "An alert dialog" (hostile review D8).
func TestDialogAnswerReturnsWhatThePageDidNext(t *testing.T) {
	m, _ := manager(t)
	at := dialogPages(t)
	task := "dialog-next"
	defer m.CloseTask(task)
	nav := mustNav(t, m, task, at("dialog.test", "/title-prompt"))
	name := refOf(t, nav.Snapshot, "button", "Name the page")
	note := refOf(t, nav.Snapshot, "button", "Add a note")
	alert := refOf(t, nav.Snapshot, "button", "Alert")

	if cl := m.Click(context.Background(), task, RefInput{Ref: name}); len(cl.PendingDialogs) != 1 {
		t.Fatalf("click: %+v", cl)
	}
	dr := m.Dialog(context.Background(), task, DialogInput{Action: "accept", PromptText: "myname"})
	if !dr.Success || dr.Title != "myname" || !strings.Contains(dr.Snapshot, `button "Name the page" [ref=`+name+`]`) || dr.ElementCount == nil || *dr.ElementCount != 3 || dr.Navigated {
		t.Fatalf("accept a prompt that only sets the title: %+v", dr)
	}

	if cl := m.Click(context.Background(), task, RefInput{Ref: note}); len(cl.PendingDialogs) != 1 {
		t.Fatalf("click: %+v", cl)
	}
	dr = m.Dialog(context.Background(), task, DialogInput{Action: "accept", PromptText: "milk"})
	if !dr.Success || dr.Delta != `+ "Noted: milk"` || dr.Snapshot != "" {
		t.Fatalf("accept a prompt that adds a paragraph: %+v", dr)
	}

	if cl := m.Click(context.Background(), task, RefInput{Ref: alert}); len(cl.PendingDialogs) != 1 {
		t.Fatalf("click: %+v", cl)
	}
	sn := m.Snapshot(context.Background(), task, SnapshotInput{})
	if sn.Reason != reason.DialogPending || !strings.HasPrefix(sn.Error, "An alert dialog is open") {
		t.Fatalf("snapshot with an alert open: %q (%s)", sn.Error, sn.Reason)
	}
	if dr := m.Dialog(context.Background(), task, DialogInput{Action: "dismiss"}); !dr.Success || dr.Snapshot == "" {
		t.Fatalf("dismiss the alert: %+v", dr)
	}
}
