package browser

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// surrogateEscape matches an escaped surrogate pair (one code point, fine)
// or, when none starts there, a lone surrogate's \u escape in JSON text.
var surrogateEscape = regexp.MustCompile(`(?i)\\ud[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}|\\ud[89a-f][0-9a-f]{2}`)

// A page's lone UTF-16 surrogates ("\ud83d" alone) reach every result as
// U+FFFD: in an evaluation's value (string, object key and value, array),
// a console message, an uncaught exception, a dialog's text, the title and
// the snapshot; no result carries invalid UTF-8 or a surrogate escape
// (issue 16 item 5).
func TestLoneSurrogatesAreReplacementCharacters(t *testing.T) {
	m, ps := manager(t)
	task := "surrogate-everywhere-task"
	defer m.CloseTask(task)
	nav := mustNav(t, m, task, ps.url("allowed.test", "/surrogate"))
	results := map[string]any{"navigate": nav}
	want := map[string]string{
		"navigate title":    "T \uFFFD",
		"navigate snapshot": "half \uFFFD pair and \uFFFD tail",
	}
	if nav.Title != want["navigate title"] || !strings.Contains(nav.Snapshot, want["navigate snapshot"]) {
		t.Errorf("navigate: title %q, snapshot %q…; want %q and %q", nav.Title, nav.Snapshot[:min(60, len(nav.Snapshot))], want["navigate title"], want["navigate snapshot"])
	}
	for _, tc := range []struct{ name, expr, want string }{
		{"string", `"a\ud83d b"`, `"a` + "\uFFFD" + ` b"`},
		{"object", `({x: "a\udc00", ["k\ud800"]: 1})`, `{"x":"a` + "\uFFFD" + `","k` + "\uFFFD" + `":1}`},
		{"array", `[1, "\udc00\ud83d", "\ud83d\ude00"]`, `[1,"` + "\uFFFD\uFFFD" + `","😀"]`},
		{"promise", `Promise.resolve("p\udbff")`, `"p` + "\uFFFD" + `"`},
	} {
		r := m.Console(context.Background(), task, ConsoleInput{Expression: tc.expr})
		if !r.Success {
			t.Fatalf("eval %s: %s (%s)", tc.name, r.Error, r.Reason)
		}
		var got, exp any
		if err := json.Unmarshal(r.Result, &got); err != nil {
			t.Fatalf("eval %s: result %s: %v", tc.name, r.Result, err)
		}
		json.Unmarshal([]byte(tc.want), &exp)
		if b1, b2 := mustJSON(t, got), mustJSON(t, exp); b1 != b2 {
			t.Errorf("eval %s: result %s, want %s", tc.name, r.Result, tc.want)
		}
		results["eval "+tc.name] = r
	}
	ev := m.Console(context.Background(), task, ConsoleInput{Expression: `console.log("c\ud83d d", {y: "e\udc00"}); setTimeout(() => { throw new Error("f\ud83d g") }); 1`})
	if !ev.Success {
		t.Fatalf("eval console.log: %s (%s)", ev.Error, ev.Reason)
	}
	dl := m.Console(context.Background(), task, ConsoleInput{Expression: `setTimeout(() => alert("dialog \ud800 text")); 1`})
	var pending DialogResult
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if pending = m.Dialog(context.Background(), task, DialogInput{Action: "accept"}); pending.Success {
			break
		}
	}
	if b := mustJSON(t, pending); !pending.Success || !strings.Contains(b, "dialog \uFFFD text") {
		t.Errorf("alert with a lone surrogate: %s (eval %+v)", b, dl)
	}
	results["dialog"] = pending
	var cr ConsoleResult
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cr = m.Console(context.Background(), task, ConsoleInput{}); len(cr.JSErrors) > 0 && len(cr.ConsoleMessages) > 0 {
			break
		}
	}
	if len(cr.ConsoleMessages) == 0 || cr.ConsoleMessages[0].Text != "c\uFFFD d {y: \"e\uFFFD\"}" {
		t.Errorf("console message: %+v", cr.ConsoleMessages)
	}
	if len(cr.JSErrors) == 0 || !strings.HasPrefix(cr.JSErrors[0].Message, "Error: f\uFFFD g") {
		t.Errorf("exception: %+v", cr.JSErrors)
	}
	results["console"] = cr
	results["snapshot"] = m.Snapshot(context.Background(), task, SnapshotInput{Full: true})
	for name, r := range results {
		b := mustJSON(t, r)
		if !utf8.ValidString(b) {
			t.Errorf("%s: result JSON is not valid UTF-8", name)
		}
		for _, loc := range surrogateEscape.FindAllStringIndex(b, -1) {
			if loc[1]-loc[0] == 6 {
				t.Errorf("%s: result JSON carries the lone surrogate escape %s: …%s…", name, b[loc[0]:loc[1]], b[max(0, loc[0]-40):min(len(b), loc[1]+40)])
			}
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
