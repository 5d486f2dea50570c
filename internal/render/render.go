// Package render is the contract of web_extract's render step: the direct
// backend (internal/web/provider/direct) asks a Renderer to load a page in a
// browser, and the browser Manager (internal/browser) implements it. It sits
// below both so that the browser does not import the web tools.
package render

import (
	"context"
	"net/http"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
)

// Renderer loads a page in a browser for the render step.
type Renderer interface {
	// Available returns nil when pages can be rendered in this process, else
	// why not (a *reason.Error, chromium_missing). It must be cheap.
	Available() error
	// Render loads rawURL once in a fresh, isolated, cookie-less browser
	// context whose every request (navigations, redirects, sub-resources,
	// fetch/XHR, WebSockets, workers) is judged by guard on its dialed IP and
	// by the website policy, waits a bounded time for the page to go quiet,
	// and returns the rendered DOM as HTML. A load refused by the gates, or a
	// page that ends on a refused URL, is an error carrying the refusal's
	// reason code (redirect_private, policy_blocked, …); other failures are
	// navigation_failed or browser_failed. fetched, when not nil, is the
	// page as the direct backend already fetched it from rawURL through
	// guard (its final hop): the renderer may answer the browser's request
	// for the document with it instead of fetching the page a second time;
	// every other request still goes through guard.
	Render(ctx context.Context, rawURL string, guard *egress.Guard, fetched *Fetched) (Rendered, error)
}

// Fetched is a page as the direct backend fetched it (after redirects).
type Fetched struct {
	URL    string      // the final URL
	Status int         // its HTTP status (< 400)
	Header http.Header // its response header fields
	Body   []byte      // the body, Content-Encoding decoded, at most MaxBodyBytes
}

// Rendered is a page rendered by a Renderer.
type Rendered struct {
	HTML     string // the serialised rendered DOM (open shadow roots flattened, same-origin iframes inlined)
	FinalURL string // the page's URL when it was serialised
	// Done, when not nil, is called once the caller is done with the
	// result (after converting HTML): the renderer holds its background
	// work (discarding the used browser context, preparing the next one)
	// until then, so that it does not compete with the conversion.
	Done func()
}
