package browser

import (
	"context"
	"strings"
	"testing"
)

// The snapshot leaves out what a sighted reader does not see, by the same
// judgement as the render step (visibility.js): every hidden kind of
// render_hidden_test.go is absent from the compact and the full snapshot,
// every visible kind present (hostile review D19).
func TestSnapshotLeavesOutHiddenText(t *testing.T) {
	m, ps := manager(t)
	task := "snapshot-hidden-task"
	defer m.CloseTask(task)
	compact := mustNav(t, m, task, ps.url("allowed.test", "/page")).Snapshot
	fr := m.Snapshot(context.Background(), task, SnapshotInput{Full: true})
	if !fr.Success {
		t.Fatalf("full snapshot: %s (%s)", fr.Error, fr.Reason)
	}
	frames := map[string]string{"1px iframe": "Hidden-frame", "same-origin frame": "Visible-frame"}
	for _, snap := range []struct{ name, text string }{{"compact", compact}, {"full", fr.Snapshot}} {
		if !strings.Contains(snap.text, "polished the great lens") {
			t.Fatalf("%s: the article is gone:\n%s", snap.name, snap.text)
		}
		for _, k := range hiddenKinds {
			w := markerOf(k.html)
			if f := frames[k.name]; f != "" {
				w = f
			}
			if strings.Contains(snap.text, w) {
				t.Errorf("%s snapshot: %s: %q reached the agent", snap.name, k.name, w)
			}
		}
		for _, k := range visibleKinds {
			w := markerOf(k.html)
			if f := frames[k.name]; f != "" {
				w = f
			}
			if !strings.Contains(snap.text, w) {
				t.Errorf("%s snapshot: %s: %q was left out", snap.name, k.name, w)
			}
		}
	}
	if t.Failed() {
		t.Logf("compact snapshot:\n%s", compact)
	}
}

// Native controls a sighted reader does not see (an sr-only checkbox beside
// its drawn box, an opacity-0 file input over a styled button) keep a ref,
// marked [visually hidden] and without their value; a visually hidden link
// (skip link) is left out. An SVG's text is its own line, not joined with
// the next paragraph; a textarea's text is its value, listed once. The
// content of a closed <details>, bare text included, is left out; its
// summary and an open one's content are listed.
func TestSnapshotHiddenControlsAndLines(t *testing.T) {
	m, ps := manager(t)
	task := "snapshot-controls-task"
	defer m.CloseTask(task)
	snap := mustNav(t, m, task, ps.url("allowed.test", "/snapctl")).Snapshot
	for _, want := range []string{
		`- checkbox "Remember me" [visually hidden] [ref=`,
		`- button "Upload" [visually hidden] [ref=`,
		`- textbox "Secret note" [visually hidden] [ref=`,
		`- checkbox "Shown box" [ref=`,
		"  - Drawn words\n", "  - Visible after the drawing.\n",
		"Closed summary", "Open summary", "Open details words",
	} {
		if !strings.Contains("\n"+snap+"\n", want) {
			t.Errorf("snapshot lacks %q:\n%s", want, snap)
		}
	}
	// The text directly in a closed <details> is left out like its
	// elements (hostile review session 6, D11).
	for _, gone := range []string{"Skip-to-content", "Hidden-value", "Hidden-button", "Hidden-details-bare", "Hidden-details-p"} {
		if strings.Contains(snap, gone) {
			t.Errorf("snapshot holds %q:\n%s", gone, snap)
		}
	}
	if n := strings.Count(snap, "Field words once"); n != 1 {
		t.Errorf("textarea text listed %d times, want 1:\n%s", n, snap)
	}
	// The hidden checkbox's ref clicks it.
	ref := refOf(t, snap, "checkbox", "Remember me")
	if r := m.Click(context.Background(), task, RefInput{Ref: ref}); !r.Success && r.Reason != "click_intercepted" {
		t.Errorf("click %s: %s (%s)", ref, r.Error, r.Reason)
	}
}
