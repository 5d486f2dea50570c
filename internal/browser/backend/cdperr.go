package backend

import (
	"context"
	"errors"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// What a failed CDP call means for the agent. The protocol's own text
// ("Cannot find context with specified id (-32000)", "Inspected target
// navigated or closed", "channel closed") never reaches a result (issue 16
// item 6): Failure is the one place that turns a CDP or chromedp error into a
// reason, and its messages say what happened and what to do instead.

// fault is the kind of a CDP call failure.
type fault int

const (
	faultOther     fault = iota // an error Gatehouse has no better name for
	faultNavigated              // the document (its execution context, its frame) went away under the call
	faultGone                   // the tab, its target or the connection to the browser is gone
)

// navigatedTexts are CDP error messages (lower case) of a call whose
// document was replaced while it ran: a redirect, a meta refresh or a script
// navigated the page, or Chromium swapped the page's renderer.
var navigatedTexts = []string{
	"cannot find context with specified id",
	"inspected target navigated or closed",
	"execution context was destroyed",
	"cannot find default execution context",
	"not attached to an active page",
	"no frame for given id",
	"no frame with given id",
	"frame with the given id was not found",
	"frame not found",
	"could not find node with given id",
	"node with given id does not belong to the document",
}

// goneTexts are CDP error messages (lower case) of a call whose target is
// gone: the tab closed or crashed, or its session was detached.
var goneTexts = []string{
	"target closed",
	"target crashed",
	"session with given id not found",
	"no target with given id",
	"no session with given id",
}

// faultOf classifies err, a failure of a CDP call made through chromedp.
func faultOf(err error) fault {
	if errors.Is(err, chromedp.ErrChannelClosed) || errors.Is(err, chromedp.ErrTargetDetached) ||
		errors.Is(err, chromedp.ErrInvalidContext) || errors.Is(err, chromedp.ErrInvalidTarget) || errors.Is(err, chromedp.ErrNoTarget) {
		return faultGone
	}
	var cerr *cdproto.Error
	if !errors.As(err, &cerr) {
		return faultOther
	}
	msg := strings.ToLower(cerr.Message)
	for _, s := range navigatedTexts {
		if strings.Contains(msg, s) {
			return faultNavigated
		}
	}
	for _, s := range goneTexts {
		if strings.Contains(msg, s) {
			return faultGone
		}
	}
	return faultOther
}

// Failure is the reason for err, a failed CDP call (or chromedp step) that
// did what (a capitalised gerund phrase: "Reading the page URL"):
//
//   - the page navigated while the call ran (its execution context or frame
//     was replaced: a redirect, a meta refresh, a script) → page_navigated,
//     whose message says to take a new browser_snapshot;
//   - the tab, its target or the browser connection is gone (closed,
//     crashed, detached) → browser_failed, the session is replaced;
//   - the call's deadline passed (outside cdpErr, which makes that
//     command_timeout) → browser_failed, the browser did not answer in time;
//   - anything else → browser_failed naming what failed.
//
// The message never carries the protocol's text; the returned error wraps
// err for logs and errors.Is. A *reason.Error passes through unchanged. nil
// for nil.
func Failure(what string, err error) error {
	if err == nil {
		return nil
	}
	if rerr := reason.As(err); rerr != nil {
		return rerr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return reason.Wrap(reason.BrowserFailed, "",
			what+" failed: the browser did not answer in time; retry the call, or call browser_navigate to start again on a fresh page.", err)
	}
	switch faultOf(err) {
	case faultNavigated:
		return reason.Wrap(reason.PageNavigated, "",
			what+" was interrupted: the page navigated meanwhile (a redirect, a meta refresh or a script replaced the document). Take a new browser_snapshot and act on the page it shows.", err)
	case faultGone:
		return reason.Wrap(reason.BrowserFailed, "",
			what+" failed: the tab or its connection to the browser is gone (closed or crashed); the session will be replaced by a fresh one on the next call.", err)
	}
	return reason.Wrap(reason.BrowserFailed, "",
		what+" failed: the browser refused the command (an internal error of the browser session); retry the call, or call browser_navigate to start again on a fresh page.", err)
}

// IsNavigated reports whether err is page_navigated: the call ran while the
// page was replaced, and may succeed once on the new document.
func IsNavigated(err error) bool { return reason.Of(err) == reason.PageNavigated }
