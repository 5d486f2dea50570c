package browser

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// A partial snapshot's note ends both the shown text, which stays within the
// threshold, and the stored text, which web_read pages through; a whole
// snapshot gets no note and renders as before.
func TestPartialSnapshotNoteShownAndStored(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "web")
	m := &Manager{cfg: config.Default(), store: truncate.Store{Dir: dir}}
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "- button \"B%d\" [ref=e%d]\n", i, i+1)
	}
	text := strings.TrimSuffix(b.String(), "\n")
	w := &snapshot.WalkData{Stopped: "nodes", Elements: snapshot.NodeBudget, Total: 200_007}
	cov := w.Coverage(3000)
	if !cov.SnapshotTruncated || cov.SnapshotWalk.StoppedBy != snapshot.WalkNodeBudget || cov.SnapshotWalk.RefsShown != 3000 {
		t.Fatalf("coverage: %+v", cov)
	}
	out, truncated := m.renderCovered(WithStoreNames(context.Background()), text, cov)
	th := snapshot.Threshold(0)
	note := snapshot.Note(cov)
	if !truncated || utf8.RuneCountInString(out) > th || !strings.HasSuffix(out, "\n"+note) || !strings.Contains(note, "of the page's 200007 elements") {
		t.Fatalf("shown (%d chars, truncated %v) does not end with the note within %d chars:\n…%s", utf8.RuneCountInString(out), truncated, th, out[max(0, len(out)-800):])
	}
	wr := webReadNote.FindStringSubmatch(out)
	if wr == nil {
		t.Fatalf("no web_read note:\n…%s", out[max(0, len(out)-800):])
	}
	r, err := m.store.Read(wr[1], 2990, 200)
	if err != nil || !strings.Contains(r.Content, `- button "B2995"`) || !strings.HasSuffix(strings.TrimSpace(r.Content), note) {
		t.Fatalf("web_read %s: %v\n%s", wr[1], err, r.Content)
	}

	// At the smallest threshold, with the longest note.
	small := &Manager{cfg: config.Default(), store: m.store}
	small.cfg.Browser.SnapshotThreshold = config.MinSnapshotThreshold
	long := (&snapshot.WalkData{Stopped: "time", Elements: 29_999, Total: 2_000_000, Above: 1_999_999}).Coverage(29_999)
	if out, _ := small.renderCovered(context.Background(), text, long); utf8.RuneCountInString(out) > config.MinSnapshotThreshold || !strings.HasSuffix(out, snapshot.Note(long)) {
		t.Fatalf("threshold %d: %d chars:\n%s", config.MinSnapshotThreshold, utf8.RuneCountInString(out), out)
	}

	// Short enough: the note is added, nothing is stored.
	out, truncated = m.renderCovered(context.Background(), "- button \"B0\" [ref=e1]", cov)
	if truncated || out != "- button \"B0\" [ref=e1]\n\n"+note {
		t.Fatalf("short partial snapshot: %q", out)
	}
	// Whole: unchanged.
	if whole := (&snapshot.WalkData{Elements: 10, Total: 10}).Coverage(1); whole.SnapshotTruncated || snapshot.Note(whole) != "" {
		t.Fatalf("whole walk reported partial: %+v", whole)
	}
	// Scrolled past only: partial, named in the note.
	up := (&snapshot.WalkData{Elements: 500, Total: 200_007, Above: 1234}).Coverage(400)
	if !up.SnapshotTruncated || !strings.Contains(snapshot.Note(up), "1234 parts of the page above the viewport") {
		t.Fatalf("scrolled walk: %+v %q", up, snapshot.Note(up))
	}
}

// The walk's time budget is SnapshotTimeBudget, at most half of what is
// left before the call's deadline and at least minWalkTime; frames get what
// is left of it, and nothing once it is spent.
func TestWalkBudget(t *testing.T) {
	b, ok := snapshot.BudgetFor(context.Background(), time.Time{}, snapshot.NodeBudget)
	if !ok || b.MS != snapshot.TimeBudget.Milliseconds() || b.Nodes != snapshot.NodeBudget || b.Chars != snapshot.StoreCap {
		t.Fatalf("no deadline: %+v %v", b, ok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if b, _ := snapshot.BudgetFor(ctx, time.Time{}, 5); b.MS > 2000 || b.MS < 1500 || b.Nodes != 5 {
		t.Fatalf("4 s left: %+v", b)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if b, _ := snapshot.BudgetFor(ctx2, time.Time{}, 5); b.MS != snapshot.MinWalkTime.Milliseconds() {
		t.Fatalf("100 ms left: %+v", b)
	}
	if b, ok := snapshot.BudgetFor(ctx, time.Now().Add(time.Second), 7); !ok || b.MS > 1000 || b.Nodes != 7 {
		t.Fatalf("frame with 1 s left: %+v %v", b, ok)
	}
	if _, ok := snapshot.BudgetFor(ctx, time.Now().Add(-time.Millisecond), 7); ok {
		t.Fatal("frame after the end got a budget")
	}
	if _, ok := snapshot.BudgetFor(ctx, time.Now().Add(time.Second), 0); ok {
		t.Fatal("frame with no nodes left got a budget")
	}
}
