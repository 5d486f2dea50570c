package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
)

// TestShort is the CI version of the task benchmark (issue 20): 3 tasks
// (sign in and read a value, the 8-field form with a validation retry, the
// confirm dialog) against the real gatehouse binary over MCP stdio, with
// Gatehouse's own tools; each must reach its end state. Tokens are counted
// as chars/4 here (no Node needed). Under CI=true a missing Chromium fails.
func TestShort(t *testing.T) {
	if _, err := backend.FindBrowser("", false); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Chromium is required in CI: %v", err)
		}
		t.Skipf("Chromium missing: %v", err)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Chromium is required in CI: %v", err)
		}
		t.Skipf("Chromium missing: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := run(ctx, options{short: true, noTokens: true, log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.tasks) != 3 {
		t.Fatalf("%d tasks, want 3", len(rep.tasks))
	}
	var out strings.Builder
	rep.print(&out)
	t.Log(out.String())
	for _, tk := range rep.tasks {
		o := rep.res["gatehouse"][tk.id]
		if !o.done {
			t.Errorf("%s (%s) not completed: %s\n%s", tk.id, tk.title, o.why, log.String())
		}
		if o.calls == 0 || o.tokens == 0 {
			t.Errorf("%s: %d calls, %d tokens counted", tk.id, o.calls, o.tokens)
		}
	}
}
