package browser

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestClickDisabledButtonRefused: browser_click on a <button disabled> (or a
// button inside a disabled <fieldset>) reports element_disabled, naming the
// element, instead of claiming a click the browser never delivered; an
// enabled button on the same page is clicked.
func TestClickDisabledButtonRefused(t *testing.T) {
	m, ps := manager(t)
	ctx := context.Background()
	task := "disabled-task"
	nr := m.Navigate(ctx, task, NavigateInput{URL: ps.url("allowed.test", "/disabled")})
	if !nr.Success {
		t.Fatalf("navigate: %+v", nr)
	}
	for _, name := range []string{"Pay", "Inner"} {
		c := m.Click(ctx, task, RefInput{Ref: refOf(t, nr.Snapshot, "button", name)})
		if c.Success || c.Reason != reason.ElementDisabled || !strings.Contains(c.Error, "disabled") || !strings.Contains(c.Error, name) {
			t.Errorf("click %s: %+v", name, c)
		}
	}
	c := m.Click(ctx, task, RefInput{Ref: refOf(t, nr.Snapshot, "button", "Live")})
	if !c.Success {
		t.Fatalf("click Live: %+v", c)
	}
	s := m.Snapshot(ctx, task, SnapshotInput{})
	if !strings.Contains(s.Snapshot, "live clicked") || strings.Contains(s.Snapshot, "pay clicked") || strings.Contains(s.Snapshot, "inner clicked") {
		t.Errorf("page after clicks:\n%s", s.Snapshot)
	}
}
