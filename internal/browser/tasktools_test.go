package browser

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// taskChrome is the page chrome /task-a and /task-b share (integration_test.go).
const taskChrome = `<header><nav aria-label=Main><a href="/h1">Home</a> <a href="/h2">Products</a> <a href="/h3">Pricing</a> <a href="/h4">Help</a></nav></header>`

// TestTaskTools covers the tool-surface changes of issue 20 on real
// Chromium: find cuts a navigation's snapshot to the matching lines (refs
// as in the whole page); browser_fill types several fields in one call with
// one delta, a delta result omits an unchanged title, and a failing field
// names itself; find on an action cuts its delta; a navigation after a
// whole snapshot folds the chrome the two pages share; browser_type submit
// presses Enter.
func TestTaskTools(t *testing.T) {
	m, ps := manager(t)
	ctx := context.Background()
	task := "task-tools"
	defer m.CloseTask(task)

	nav := m.Navigate(ctx, task, NavigateInput{URL: ps.url("allowed.test", "/task-a"), Find: "email"})
	if !nav.Success || !strings.HasPrefix(nav.Snapshot, `[find "email": 1 of `) || strings.Contains(nav.Snapshot, `link "Home"`) {
		t.Fatalf("navigate with find: %+v", nav)
	}
	name, email := refOf(t, nav.Snapshot, "textbox", "Name"), refOf(t, nav.Snapshot, "textbox", "Email")
	whole := m.Snapshot(ctx, task, SnapshotInput{})
	if refOf(t, whole.Snapshot, "textbox", "Email") != email {
		t.Fatalf("a found ref differs from the whole snapshot's:\n%s\n%s", nav.Snapshot, whole.Snapshot)
	}

	f := m.Fill(ctx, task, FillInput{Fields: []FillField{{Ref: name, Text: "Ada"}, {Ref: "@" + email, Text: "ada@example.com"}}})
	if !f.Success || len(f.Filled) != 2 || !strings.Contains(f.Delta, `"Ada"`) || !strings.Contains(f.Delta, `"ada@example.com"`) {
		t.Fatalf("fill: %+v", f)
	}
	if f.Title != "" || f.URL == "" {
		t.Errorf("a delta result under an unchanged title: title %q url %q", f.Title, f.URL)
	}
	bad := m.Fill(ctx, task, FillInput{Fields: []FillField{{Ref: name, Text: "Bo"}, {Ref: "e999", Text: "x"}}})
	if bad.Success || bad.Reason != reason.StaleRef || !strings.Contains(bad.Error, "Field 2 of 2") {
		t.Fatalf("fill with a stale ref: %+v", bad)
	}
	if empty := m.Fill(ctx, task, FillInput{}); empty.Success || empty.Reason != reason.InvalidArguments {
		t.Fatalf("fill without fields: %+v", empty)
	}

	count := refOf(t, whole.Snapshot, "button", "Count")
	cl := m.Click(ctx, task, RefInput{Ref: count, Find: "counted"})
	if !cl.Success || !strings.HasPrefix(cl.Delta, `[find "counted": 1 of `) || strings.Contains(cl.Delta, "none") {
		t.Fatalf("click with find: %+v", cl)
	}

	m.Snapshot(ctx, task, SnapshotInput{}) // the agent sees page a whole
	link := refOf(t, whole.Snapshot, "link", "Go to b")
	cl = m.Click(ctx, task, RefInput{Ref: link})
	if !cl.Success || !cl.Navigated || !strings.Contains(cl.Snapshot, "- banner:\n  - [same 5 lines as on the previous page: refs e1–e4]") || strings.Contains(cl.Snapshot, `link "Home"`) {
		t.Fatalf("navigation after a whole snapshot, chrome not folded: %+v", cl)
	}
	if cl.Title != "Task b" {
		t.Errorf("navigated result title %q", cl.Title)
	}
	home := m.Click(ctx, task, RefInput{Ref: "e1"}) // a folded ref is the same element on the new page
	if !home.Success || !strings.HasSuffix(home.URL, "/h1") {
		t.Fatalf("click on a folded ref: %+v", home)
	}

	nav = mustNav(t, m, task, ps.url("allowed.test", "/task-a"))
	ty := m.Type(ctx, task, TypeInput{Ref: refOf(t, nav.Snapshot, "textbox", "Search"), Text: "x", Submit: true})
	if !ty.Success || !strings.HasSuffix(ty.URL, "/task-b") {
		t.Fatalf("type with submit: %+v", ty)
	}
}
