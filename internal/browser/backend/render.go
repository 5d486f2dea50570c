package backend

import (
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// RenderOptions configures PrepareRender.
type RenderOptions struct {
	// BlockTypes are the resource types the tab refuses before they leave
	// the browser (they never reach the egress proxy), failed with
	// BlockedByClient. The document, its scripts and their fetch/XHR are
	// never listed by the render step.
	BlockTypes []network.ResourceType
	// DocumentScript is JavaScript run in Gatehouse's isolated world (see
	// WorldName) of every new document of the main frame and its frames,
	// before the page's own scripts (Page.addScriptToEvaluateOnNewDocument).
	DocumentScript string
}

// RenderWatch reports what a tab prepared by PrepareRender loaded.
type RenderWatch struct {
	mu      sync.Mutex
	url     string
	status  int64
	expired chan struct{} // a virtual time budget ran out (FastForward)
}

// Document returns the URL and HTTP status of the main frame's last
// document response (after redirects); status 0 when none was received
// (nothing loaded yet, a data: or about: URL, or a load error).
func (w *RenderWatch) Document() (url string, status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.url, int(w.status)
}

// PrepareRender sets up a tab for loading one page for its content: the
// resource types of o.BlockTypes are refused (CDP Fetch interception at the
// request stage, so a refused request costs one CDP round trip and no
// network), and o.DocumentScript runs at the start of every document. The
// returned watch reports the main frame's document responses. Call it
// before the tab's first navigation. Errors are browser_failed or
// command_timeout.
func (t *Tab) PrepareRender(ctx context.Context, o RenderOptions) (*RenderWatch, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	w := &RenderWatch{expired: make(chan struct{}, 1)}
	tctx := t.ctx
	if err := chromedp.Listen(tctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventResponseReceived:
			if e.Type == network.ResourceTypeDocument && e.FrameID == t.frame && e.Response != nil {
				w.mu.Lock()
				w.url, w.status = e.Response.URL, e.Response.Status
				w.mu.Unlock()
			}
		case *emulation.EventVirtualTimeBudgetExpired:
			select {
			case w.expired <- struct{}{}:
			default:
			}
		case *fetch.EventRequestPaused:
			// The listener runs on the tab's message loop: answer from
			// another goroutine.
			go func() {
				fctx, fcancel := context.WithTimeout(tctx, 5*time.Second)
				defer fcancel()
				chromedp.Call(fctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient}) //nolint:errcheck // the tab may be gone
			}()
		}
	}); err != nil {
		return nil, t.cdpErr(ctx, "Preparing the render tab", err)
	}
	if len(o.BlockTypes) > 0 {
		var pats []*fetch.RequestPattern
		for _, rt := range o.BlockTypes {
			pats = append(pats, &fetch.RequestPattern{URLPattern: "*", ResourceType: rt, RequestStage: fetch.RequestStageRequest})
		}
		if _, err := chromedp.Call(rctx, fetch.Enable, fetch.EnableParams{Patterns: pats}); err != nil {
			return nil, t.cdpErr(ctx, "Preparing the render tab", err)
		}
	}
	if o.DocumentScript != "" {
		yes := true
		if _, err := chromedp.Call(rctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: o.DocumentScript, WorldName: WorldName, RunImmediately: &yes,
		}); err != nil {
			return nil, t.cdpErr(ctx, "Preparing the render tab", err)
		}
	}
	return w, nil
}

// FastForward lets the page run budget of virtual time
// (Emulation.setVirtualTimePolicy, pauseIfNetworkFetchesPending): the
// page's timers fire as soon as nothing else is left to do instead of at
// their wall-clock time, and virtual time stands still while a network
// fetch is pending, so the budget runs out as soon as the page is idle for
// budget of its own time. Virtual time then stays paused (the page is
// frozen for reading). expired is false when ctx ended first. Errors are
// browser_failed (a browser without virtual time) or command_timeout.
func (t *Tab) FastForward(ctx context.Context, w *RenderWatch, budget time.Duration) (expired bool, err error) {
	if err := t.check(); err != nil {
		return false, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	select {
	case <-w.expired:
	default:
	}
	ms := float64(budget.Milliseconds())
	if _, err := chromedp.Call(rctx, emulation.SetVirtualTimePolicy, emulation.SetVirtualTimePolicyParams{
		Policy: emulation.VirtualTimePolicyPauseIfNetworkFetchesPending, Budget: &ms,
	}); err != nil {
		return false, t.cdpErr(ctx, "Fast-forwarding the page", err)
	}
	select {
	case <-w.expired:
		return true, nil
	case <-rctx.Done():
		return false, nil
	}
}
