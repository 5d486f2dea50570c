// Tab navigation: Navigate, NavigateUntil, Current and Back.

package backend

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// currentRetryWait bounds Current's wait for a page between two documents.
const currentRetryWait = 200 * time.Millisecond

// NavResult is the outcome of Navigate or Back.
type NavResult struct {
	URL       string // final URL after redirects
	Title     string
	ErrorText string // Chromium's net error (net::ERR_…) when the load failed
}

// Navigate loads url in the tab and waits for its load event (bounded by ctx).
// A load error (net::ERR_…, e.g. the proxy refused the tunnel) is returned in
// NavResult.ErrorText with a nil error; err is for CDP failures and timeouts.
func (t *Tab) Navigate(ctx context.Context, url string) (NavResult, error) {
	return t.NavigateUntil(ctx, url, "load")
}

// NavigateUntil is Navigate waiting for the lifecycle event named event of
// the new document ("DOMContentLoaded", "load", …) instead of the load
// event. Same results and errors as Navigate.
func (t *Tab) NavigateUntil(ctx context.Context, url, event string) (NavResult, error) {
	if err := t.check(); err != nil {
		return NavResult{}, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	res, err := chromedp.Call(rctx, page.Navigate, page.NavigateParams{URL: url})
	if err != nil {
		return NavResult{}, t.cdpErr(ctx, "Navigation", err)
	}
	if res.ErrorText != "" {
		cur, _ := t.Current(ctx)
		cur.ErrorText = res.ErrorText
		return cur, nil
	}
	if res.LoaderID != "" {
		if err := t.waitLifecycle(rctx, res.LoaderID, event); err != nil {
			if _, open := t.PendingDialog(); open {
				return t.Current(ctx) // a dialog blocks the load: report it, don't wait
			}
			return NavResult{}, t.cdpErr(ctx, "Waiting for the page to load", err)
		}
	}
	return t.Current(ctx)
}

func (t *Tab) waitLifecycle(ctx context.Context, loader cdp.LoaderID, name string) error {
	for {
		t.mu.Lock()
		// Done when this loader fired the event, or when a later document
		// replaced it (a script redirect) and that one fired it.
		done := t.lifecycle[name] && (t.loaderID == loader || t.seen[loader])
		ch := t.changed
		crashed := t.crashed || t.closed
		t.mu.Unlock()
		if done {
			return nil
		}
		if crashed {
			return t.check()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Current returns the URL and title of the tab's current history entry.
// While the page is between two documents (Chromium swapping its renderer
// for a navigation) the browser answers "not attached to an active page":
// Current then waits for the next navigation event (at most
// currentRetryWait) and asks once more.
func (t *Tab) Current(ctx context.Context) (NavResult, error) {
	rctx, cancel := t.runAny(ctx)
	defer cancel()
	h, err := chromedp.Call(rctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil && faultOf(err) == faultNavigated {
		wait := time.NewTimer(currentRetryWait)
		select {
		case <-t.Activity().Changed:
		case <-wait.C:
		case <-rctx.Done():
		}
		wait.Stop()
		h, err = chromedp.Call(rctx, page.GetNavigationHistory, cdp.Empty{})
	}
	if err != nil {
		return NavResult{}, t.cdpErr(ctx, "Reading the page URL", err)
	}
	if h.CurrentIndex < 0 || int(h.CurrentIndex) >= len(h.Entries) {
		return NavResult{URL: "about:blank"}, nil
	}
	e := h.Entries[h.CurrentIndex]
	return NavResult{URL: e.URL, Title: e.Title}, nil
}

// Back goes back to the previous page of the tab's history and waits for the
// load (bounded by ctx). about:blank entries (the blank page a session starts
// on, a tab reset after a refusal) are not pages and are skipped. No earlier
// page → no_history, and the tab is left as it was.
func (t *Tab) Back(ctx context.Context) (NavResult, error) {
	if err := t.check(); err != nil {
		return NavResult{}, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	h, err := chromedp.Call(rctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return NavResult{}, t.cdpErr(ctx, "Reading history", err)
	}
	to := -1
	for i := min(int(h.CurrentIndex), len(h.Entries)) - 1; i >= 0; i-- {
		if h.Entries[i].URL != "about:blank" {
			to = i
			break
		}
	}
	if to < 0 {
		return NavResult{}, reason.New(reason.NoHistory, "", "There is no earlier page in this tab's history (this is the first page of the session); the page was left as it is. Use browser_navigate to open another page.")
	}
	before := t.Activity().DocSeq
	if _, err := chromedp.Call(rctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[to].ID}); err != nil {
		return NavResult{}, t.cdpErr(ctx, "Going back", err)
	}
	// Wait for the committed document (bfcache restores fire no load event).
	for {
		a := t.Activity()
		if a.DocSeq > before && !a.Loading {
			break
		}
		select {
		case <-a.Changed:
		case <-rctx.Done():
			return NavResult{}, t.cdpErr(ctx, "Going back", rctx.Err())
		}
	}
	return t.Current(ctx)
}
