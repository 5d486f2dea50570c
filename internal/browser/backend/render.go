package backend

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
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
	// ServeDocuments pauses the document requests of the tab (its main
	// frame and its frames; CDP Fetch, request stage) so that the main
	// frame's document can be answered from a response the caller already
	// has (RenderWatch.Serve); every other document request continues to
	// the network (the egress proxy) unchanged.
	ServeDocuments bool
}

// Response is an HTTP response the caller already has, served to the
// browser as a document's (RenderWatch.Serve).
type Response struct {
	URL    string // the request URL it answers (a fragment is ignored)
	Status int
	// Header lists the response header fields given to the browser (the
	// caller chooses them: no Content-Encoding, as Body is decoded).
	Header [][2]string
	Body   []byte
}

// RenderWatch reports what a tab prepared by PrepareRender loaded.
type RenderWatch struct {
	mu      sync.Mutex
	url     string
	status  int64
	expired chan struct{} // a virtual time budget ran out (FastForward)
	serve   *Response     // answers the main frame's next document request (Serve)
	served  bool          // serve was used
}

// Serve makes r the answer to the main frame's next document request for
// r.URL (GET, with RenderOptions.ServeDocuments), once: the browser then
// does not fetch it. Call it before navigating to r.URL. Served reports
// whether it was used.
func (w *RenderWatch) Serve(r *Response) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.serve, w.served = r, false
}

// Served reports whether the response given to Serve answered the
// document request.
func (w *RenderWatch) Served() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.served
}

// take returns the response to serve to a paused request, if it is the
// one.
func (w *RenderWatch) take(e *fetch.EventRequestPaused, mainFrame cdp.FrameID) *Response {
	if e.ResourceType != network.ResourceTypeDocument || e.FrameID != mainFrame || e.Request == nil || e.Request.Method != "GET" {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.serve
	if r == nil || stripFragment(e.Request.URL) != stripFragment(r.URL) {
		return nil
	}
	w.serve, w.served = nil, true
	return r
}

func stripFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
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
	blocked := map[network.ResourceType]bool{}
	for _, rt := range o.BlockTypes {
		blocked[rt] = true
	}
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
			if e.ResourceType == network.ResourceTypeDocument && !blocked[network.ResourceTypeDocument] {
				r := w.take(e, t.frame)
				// The listener runs on the tab's message loop: answer from
				// another goroutine.
				go func() {
					fctx, fcancel := context.WithTimeout(tctx, 5*time.Second)
					defer fcancel()
					if r == nil {
						chromedp.Call(fctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID}) //nolint:errcheck // the tab may be gone
						return
					}
					hs := make([]*fetch.HeaderEntry, 0, len(r.Header))
					for _, h := range r.Header {
						hs = append(hs, &fetch.HeaderEntry{Name: h[0], Value: h[1]})
					}
					chromedp.Call(fctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: int64(r.Status), ResponseHeaders: hs, Body: r.Body}) //nolint:errcheck // the tab may be gone
				}()
				return
			}
			go func() {
				fctx, fcancel := context.WithTimeout(tctx, 5*time.Second)
				defer fcancel()
				chromedp.Call(fctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient}) //nolint:errcheck // the tab may be gone
			}()
		}
	}); err != nil {
		return nil, t.cdpErr(ctx, "Preparing the render tab", err)
	}
	// chromedp enables the CSS, DOM and Log domains on every tab; a render
	// tab uses none of them, and with them on the browser tracks every
	// node and style sheet of the page and reports them to us.
	if _, err := chromedp.Call(rctx, css.Disable, cdp.Empty{}); err != nil {
		return nil, t.cdpErr(ctx, "Preparing the render tab", err)
	}
	if _, err := chromedp.Call(rctx, dom.Disable, cdp.Empty{}); err != nil {
		return nil, t.cdpErr(ctx, "Preparing the render tab", err)
	}
	if _, err := chromedp.Call(rctx, log.Disable, cdp.Empty{}); err != nil {
		return nil, t.cdpErr(ctx, "Preparing the render tab", err)
	}
	var pats []*fetch.RequestPattern
	for _, rt := range o.BlockTypes {
		pats = append(pats, &fetch.RequestPattern{URLPattern: "*", ResourceType: rt, RequestStage: fetch.RequestStageRequest})
	}
	if o.ServeDocuments && !blocked[network.ResourceTypeDocument] {
		pats = append(pats, &fetch.RequestPattern{URLPattern: "*", ResourceType: network.ResourceTypeDocument, RequestStage: fetch.RequestStageRequest})
	}
	if len(pats) > 0 {
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

// RenderBlockTypes are the resource types a render context of web_extract's
// render step (internal/browser/renderstep) refuses inside
// the browser (CDP Fetch, for what the render CSP does not cover: a document
// not served from the fetched page, frames): text extraction needs none of
// them. Documents (frames too), style sheets, scripts and their
// fetch/XHR/WebSocket/EventSource traffic load as usual, through the
// egress proxy, which stays the security boundary for every request.
// (Chromium's Fetch filter rejects the TextTrack, Manifest, Prefetch,
// SignedExchange and FedCM types as unknown: those load, rarely and small.)
var RenderBlockTypes = []network.ResourceType{
	network.ResourceTypeImage, network.ResourceTypeMedia, network.ResourceTypeFont,
	network.ResourceTypePing, network.ResourceTypeCSPViolationReport,
}
