package browser

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// The secret-shaped token every browser-originated text below carries.
const leak = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd"

// Snapshot, title, console, eval result and image list of a page that shows
// a secret come back redacted (spec §B2), and browser_type echoes it redacted.
func TestBrowserTextIsRedacted(t *testing.T) {
	m, ps := manager(t)
	task := "redact-task"
	defer m.CloseTask(task)
	ctx := context.Background()
	nr := mustNav(t, m, task, ps.url("allowed.test", "/form"))
	// Put the token in the page: text, title, an image and a console message.
	r := m.Console(ctx, task, ConsoleInput{Expression: `document.title = "T ` + leak + `";
document.body.insertAdjacentHTML("beforeend", "<p>key ` + leak + `</p><img alt='` + leak + `' src='/img?k=` + leak + `'>");
console.log("log ` + leak + `"); ({v: "` + leak + `"})`})
	if !r.Success || strings.Contains(string(r.Result), leak) || !strings.Contains(string(r.Result), "sk-") {
		t.Fatalf("eval result: %+v %s", r, r.Result)
	}
	s := m.Snapshot(ctx, task, SnapshotInput{Full: true})
	if !s.Success || strings.Contains(s.Snapshot, leak) || strings.Contains(s.Title, leak) || !strings.Contains(s.Snapshot, "key sk-") {
		t.Errorf("snapshot: %+v", s)
	}
	c := m.Console(ctx, task, ConsoleInput{})
	for _, msg := range c.ConsoleMessages {
		if strings.Contains(msg.Text, leak) {
			t.Errorf("console: %q", msg.Text)
		}
	}
	im := m.GetImages(ctx, task)
	if im.Count == 0 {
		t.Fatalf("images: %+v", im)
	}
	for _, i := range im.Images {
		if strings.Contains(i.Src, leak) || strings.Contains(i.Alt, leak) {
			t.Errorf("image: %+v", i)
		}
	}
	ty := m.Type(ctx, task, TypeInput{Ref: refOf(t, nr.Snapshot, "textbox", "Name"), Text: leak})
	if !ty.Success || strings.Contains(ty.Typed, leak) {
		t.Errorf("type echo: %+v", ty)
	}
	b, _ := json.Marshal(ty)
	if strings.Contains(string(b), leak) {
		t.Errorf("type result carries the token: %s", b)
	}
}
