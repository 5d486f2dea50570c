package browser

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// An expression that moves the page to a URL the gates refuse gets its result
// withheld and leaves the tab on about:blank (spec §B8.3 step 6).
func TestEvalThatMovesToRefusedPageIsWithheldAndReset(t *testing.T) {
	m, ps := manager(t)
	task := "eval-moves"
	defer m.CloseTask(task)
	mustNav(t, m, task, ps.url("allowed.test", "/next"))
	// blocked.test is on the website blocklist: not a private/metadata literal,
	// so the pre-screen lets it through on the local backend; the page check
	// after the eval catches where the page went.
	r := m.Console(context.Background(), task, ConsoleInput{Expression: "location.href = '" + ps.url("blocked.test", "/next") + "'; 'moved'"})
	if r.Success || r.Reason != reason.PageBlocked || !strings.Contains(r.Error, "withheld") || r.Result != nil {
		t.Fatalf("moved eval: %+v", r)
	}
	if r.URL != "about:blank" {
		t.Errorf("tab not reset: url %q", r.URL)
	}
	s, _ := m.Session(task)
	cur, err := s.tab.Current(context.Background())
	if err != nil || cur.URL != "about:blank" {
		t.Errorf("tab now on %q (%v), want about:blank", cur.URL, err)
	}
	if n := ps.count("blocked.test", "/next"); n != 0 {
		t.Errorf("blocked host got %d requests", n)
	}
}
