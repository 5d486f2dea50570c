package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestFailureNeverCarriesProtocolText: every CDP or chromedp failure maps to
// a reason code whose message says what happened in our words, never the
// protocol's text (issue 16 item 6: "Cannot find context with specified id"
// and "Inspected target navigated or closed" reached the agent).
func TestFailureNeverCarriesProtocolText(t *testing.T) {
	cdpErr := func(msg string) error { return fmt.Errorf("wrapped: %w", &cdproto.Error{Code: -32000, Message: msg}) }
	for _, c := range []struct {
		err  error
		want reason.Code
	}{
		{cdpErr("Cannot find context with specified id"), reason.PageNavigated},
		{cdpErr("Inspected target navigated or closed"), reason.PageNavigated},
		{cdpErr("Execution context was destroyed."), reason.PageNavigated},
		{cdpErr("Not attached to an active page"), reason.PageNavigated},
		{cdpErr("No frame for given id found"), reason.PageNavigated},
		{cdpErr("Frame with the given id was not found."), reason.PageNavigated},
		{cdpErr("Cannot find default execution context"), reason.PageNavigated},
		{cdpErr("Target closed"), reason.BrowserFailed},
		{cdpErr("Session with given id not found."), reason.BrowserFailed},
		{cdpErr("No target with given id found"), reason.BrowserFailed},
		{cdpErr("Internal error"), reason.BrowserFailed},
		{&cdproto.Error{Code: -32601, Message: "'Page.frobnicate' wasn't found"}, reason.BrowserFailed},
		{chromedp.ErrChannelClosed, reason.BrowserFailed},
		{chromedp.ErrTargetDetached, reason.BrowserFailed},
		{chromedp.ErrInvalidContext, reason.BrowserFailed},
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), reason.BrowserFailed},
		{errors.New("websocket: close 1006 (abnormal closure): unexpected EOF"), reason.BrowserFailed},
	} {
		got := Failure("Running the page script", c.err)
		rerr := reason.As(got)
		if rerr == nil || rerr.Code != c.want {
			t.Errorf("%v: got %v, want %s", c.err, got, c.want)
			continue
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%v: the reason does not wrap the cause", c.err)
		}
		raw := c.err.Error()
		if i := strings.LastIndex(raw, ": "); i >= 0 {
			raw = raw[i+2:]
		}
		if strings.Contains(strings.ToLower(rerr.Message), strings.ToLower(raw)) || strings.Contains(rerr.Message, "-32") ||
			strings.Contains(strings.ToLower(rerr.Message), "cdp") || !strings.HasPrefix(rerr.Message, "Running the page script") {
			t.Errorf("%v: message %q", c.err, rerr.Message)
		}
	}
	// A reason passes through; nil stays nil.
	if r := reason.New(reason.StaleRef, "", "x"); Failure("x", r) != r {
		t.Error("a *reason.Error was rewritten")
	}
	if Failure("x", nil) != nil {
		t.Error("nil error mapped to a failure")
	}
}
