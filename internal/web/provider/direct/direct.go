// Package direct is Gatehouse's embedded extract backend: it fetches pages itself
// through the egress guard (every connection and redirect hop judged for SSRF) and
// converts them to markdown with internal/content. It needs no API key.
package direct

import (
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/andybalholm/brotli"

	"github.com/gatehouse-dev/gatehouse/internal/content"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/render"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// Name is the backend name of this provider in config (web.extract_backend: direct).
const Name = "direct"

// Defaults for Options fields left zero.
const (
	DefaultTimeout      = 30 * time.Second // total per page, including redirects and body
	DefaultMaxBodyBytes = 10 << 20         // decompressed body bytes kept per page
	DefaultUserAgent    = "Gatehouse/0.1 (web-access layer for AI agents; +https://github.com/gatehouse-dev/gatehouse)"
	DefaultParallel     = 5 // pages fetched at once
)

// Options configures the direct backend.
type Options struct {
	Guard        *egress.Guard // required: the only way out
	Timeout      time.Duration // total per page; 0 → DefaultTimeout
	MaxBodyBytes int64         // decompressed bytes kept; 0 → DefaultMaxBodyBytes. Longer bodies are cut there (not an error).
	UserAgent    string        // "" → DefaultUserAgent
	Parallel     int           // 0 → DefaultParallel
	// ClientOptions passes TLS settings etc. to the egress client (tests).
	ClientOptions egress.ClientOptions
	// Render is web.extract_render (provider.RenderAuto, RenderAlways,
	// RenderNever); "" means RenderAuto. A call's ExtractOptions.Render
	// overrides it.
	Render string
	// Renderer loads pages in the local browser (the render step); nil
	// means rendering is unavailable.
	Renderer Renderer
}

// Renderer, Fetched and Rendered are the render step's contract, defined in
// internal/render so that the browser (which implements Renderer) need not
// import this package.
type (
	Renderer = render.Renderer
	Fetched  = render.Fetched
	Rendered = render.Rendered
)

// Direct implements provider.Extractor. Safe for concurrent use.
type Direct struct {
	o      Options
	client *http.Client
}

// New returns a Direct backend. It panics if o.Guard is nil (programming error).
func New(o Options) *Direct {
	if o.Guard == nil {
		panic("direct: Options.Guard is required")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	co := o.ClientOptions
	co.Timeout = o.Timeout
	co.SensitiveParams = true // every hop passes web_extract's URL gates (egress.ClientOptions)
	return &Direct{o: o, client: o.Guard.Client(co)}
}

// Name returns "direct".
func (d *Direct) Name() string { return Name }

// Extract fetches urls concurrently (at most Options.Parallel at once) and
// emits each page as soon as it is done (provider.Extractor).
func (d *Direct) Extract(ctx context.Context, urls []string, emit func(int, Page)) {
	d.ExtractWith(ctx, urls, provider.ExtractOptions{}, emit)
}

// ExtractWith is Extract with per-call options (provider.OptionsExtractor).
func (d *Direct) ExtractWith(ctx context.Context, urls []string, o provider.ExtractOptions, emit func(int, Page)) {
	mode := o.Render
	if mode == "" {
		mode = d.o.Render
	}
	sem := make(chan struct{}, d.o.Parallel)
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				emit(i, Page{URL: u, Err: ctxErr(ctx, u)})
				return
			}
			defer func() { <-sem }()
			emit(i, d.FetchMode(ctx, u, mode))
		}()
	}
	wg.Wait()
}

// Page is provider.Page (re-exported for brevity).
type Page = provider.Page

func ctxErr(ctx context.Context, u string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return reason.Wrap(reason.FetchTimeout, "", fmt.Sprintf("Fetching %s timed out.", u), ctx.Err())
	}
	return reason.Wrap(reason.Interrupted, "", fmt.Sprintf("Interrupted before %s was fetched.", u), ctx.Err())
}

// Fetch fetches and converts one page with the configured render mode (see
// FetchMode).
func (d *Direct) Fetch(ctx context.Context, rawURL string) Page {
	return d.FetchMode(ctx, rawURL, d.o.Render)
}

// FetchMode fetches and converts one page; mode is the render mode
// (provider.RenderAuto when ""). Errors are *reason.Error: the egress codes
// (ssrf_*, dns_*, too_many_redirects, fetch_failed, fetch_timeout), http_status,
// content's unsupported_content_type / binary_payload / empty_content, and
// the render step's (see render). A short meta refresh on an interstitial
// page is followed as one more redirect hop (refreshHop).
func (d *Direct) FetchMode(ctx context.Context, rawURL, mode string) Page {
	p := Page{URL: rawURL}
	ctx = traceHandshake(ctx) // requestError names a server that does not speak TLS
	// A stray '%' in the path is a valid URL (WHATWG leaves it as is, and
	// check allows it) that net/url refuses: it is sent as %25.
	reqURL := urlsafe.RequestHref(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, reqURL, nil)
	if err != nil {
		p.Err = reason.Wrap(reason.InvalidURL, reason.GateParse,
			"The URL could not be turned into an HTTP request (Go's URL parser refuses it, although it is a valid URL). Percent-encode unusual characters of the path (for example % as %25) and try again.", err)
		return p
	}
	// The direct fetcher never authenticates: a user name in the URL (a password
	// is refused earlier, credentials_in_url) must not become an Authorization header.
	req.URL.User = nil
	req.Header.Set("User-Agent", d.o.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,text/markdown;q=0.8,application/json;q=0.8,application/pdf;q=0.7,*/*;q=0.5")
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	req.Header.Set("Accept-Language", "en;q=0.9, *;q=0.5")
	resp, err := d.client.Do(req)
	var body []byte
	var final *url.URL
	for hop := req; ; {
		if err != nil {
			p.Err = requestError(ctx, rawURL, err)
			return p
		}
		defer resp.Body.Close()
		final = resp.Request.URL
		p.FinalURL = final.String()
		if reqURL != rawURL && p.FinalURL == reqURL {
			p.FinalURL = rawURL // not redirected: the URL as asked, not its request form
		}
		if resp.StatusCode >= 400 {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			p.Err = reason.Newf(reason.HTTPStatus, "", "The server answered HTTP %s for %s. Check the URL, or try again later if the site is down.", statusLine(resp.StatusCode), p.FinalURL)
			return p
		}
		var capped, short bool
		body, capped, short, err = readBody(resp, d.o.MaxBodyBytes)
		if err != nil {
			p.Err = requestError(ctx, rawURL, err)
			return p
		}
		if capped {
			p.Notes = append(p.Notes, fmt.Sprintf("body capped at %d bytes", d.o.MaxBodyBytes))
		}
		if short {
			p.Notes = append(p.Notes, fmt.Sprintf("transfer incomplete: the server closed the connection after %d bytes; the page may be cut short", len(body)))
			p.NoCache = true
		}
		next, note := d.refreshHop(hop, resp, body)
		if next == nil {
			if note != "" {
				p.Notes = append(p.Notes, note)
			}
			break
		}
		// Followed as a redirect hop: judged by the client's own
		// CheckRedirect (scheme, SSRF, secrets, website policy, the
		// redirect count over the whole chain) before anything is sent,
		// and at dial time by the transport like an HTTP hop.
		if rerr := d.client.CheckRedirect(next, chain(resp)); rerr != nil {
			p.Err = rerr // named like a refused HTTP hop (egress hopError)
			return p
		}
		resp, err = d.client.Do(next)
		hop = next
	}
	var doc content.Document
	ct := resp.Header.Get("Content-Type")
	f := &Fetched{URL: p.FinalURL, Status: resp.StatusCode, Header: resp.Header, Body: body}
	if mode == provider.RenderAlways && declaredHTML(ct) {
		// The fetched page is converted while the browser renders it: the
		// rendering is compared with it (see PreferFetched), and it is the
		// result when rendering fails.
		type converted struct {
			doc content.Document
			err error
		}
		fc := make(chan converted, 1)
		go func() {
			d, e := content.Convert(body, ct, final)
			fc <- converted{d, e}
		}()
		var once sync.Once
		var fetched converted
		doc, err = d.render(ctx, &p, mode, f, func() (content.Document, error) {
			once.Do(func() { fetched = <-fc })
			return fetched.doc, fetched.err
		})
	} else {
		doc, err = content.Convert(body, ct, final)
		if needsRender(mode, doc, err) {
			fdoc, ferr := doc, err
			doc, err = d.render(ctx, &p, mode, f, func() (content.Document, error) { return fdoc, ferr })
		}
	}
	if err != nil {
		p.Err = err
		return p
	}
	p.Title, p.Content = doc.Title, doc.Markdown
	p.Meta = provider.PageMeta{Description: doc.Meta.Description, Author: doc.Meta.Author, Published: doc.Meta.Published,
		Language: doc.Meta.Language, CanonicalURL: doc.Meta.CanonicalURL, SiteName: doc.Meta.SiteName, Pages: doc.Pages}
	p.LinksTotal = doc.LinksTotal
	for _, l := range doc.Links {
		p.Links = append(p.Links, provider.Link{URL: l.URL, Text: l.Text, Main: l.Main})
	}
	return p
}

// refreshHop returns the request for the target of a page's
// <meta http-equiv="refresh"> when the direct backend follows it as a
// redirect hop, as browsers do: an HTML page (declaredHTML) whose refresh
// delay is at most maxRefreshDelay seconds and whose own text is under
// minOwnContent characters (an interstitial: "Redirecting…", or nothing).
// Otherwise it returns nil and, when the page has a refresh target, a note
// naming it. The request is the previous one's (hop) headers, marked as a
// redirect hop (Response set) so that the client's transport judges it as
// one; the caller runs CheckRedirect on it.
func (d *Direct) refreshHop(hop *http.Request, resp *http.Response, body []byte) (*http.Request, string) {
	ct := resp.Header.Get("Content-Type")
	if !declaredHTML(ct) {
		return nil, ""
	}
	delay, target, ok := metaRefresh(body, resp.Request.URL)
	if !ok {
		return nil, ""
	}
	why := ""
	if delay > maxRefreshDelay {
		why = fmt.Sprintf("its delay is over %d s", maxRefreshDelay)
	} else if doc, err := content.Convert(body, ct, resp.Request.URL); err == nil && textSize(doc.Markdown) >= minOwnContent {
		why = "the page has content of its own"
	}
	if why != "" {
		return nil, fmt.Sprintf("the page asks to be replaced by %s after %d s (meta refresh), not followed: %s; fetch that URL to read it", urlsafe.Redact(target.String()), delay, why)
	}
	next := hop.Clone(hop.Context())
	next.URL, next.Host, next.Response = target, "", resp
	next.URL.User = nil
	return next, ""
}

// declaredHTML reports whether a Content-Type value declares HTML or XHTML.
func declaredHTML(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// needsRender reports whether the render step applies to a converted page:
// never with RenderNever; for HTML pages only (and XHTML); with RenderAlways
// every one; with RenderAuto a page that converted to nothing although it has
// scripts, or that looks like an application shell (content.Shell.AppShell:
// scripts, little visible text, an empty mount point or a <noscript> asking
// for JavaScript) — judged by the page's structure.
func needsRender(mode string, doc content.Document, err error) bool {
	if mode == provider.RenderNever || doc.Kind != content.KindHTML {
		return false
	}
	if mode == provider.RenderAlways {
		return true
	}
	if e := reason.As(err); err != nil && (e == nil || e.Code != reason.EmptyContent) {
		return false
	}
	return (err != nil && doc.Shell.Scripts) || doc.Shell.AppShell()
}

// render runs the render step for p (see Renderer) and returns the
// conversion of the rendered DOM, or the fetched page's (fetched returns
// its conversion) when PreferFetched prefers it, which
// p.RenderDiscarded and a note then say. A render refused by the gates
// fails the page with that refusal. When no browser is usable
// (chromium_missing), RenderAuto keeps the fetched result and says so in
// p.RenderUnavailable and a note, and RenderAlways fails the page with that
// error. Another render failure (the page could not be loaded, timed out or
// ended on an HTTP error in the browser) keeps the fetched result in both
// modes, with p.RenderUnavailable and a note.
func (d *Direct) render(ctx context.Context, p *Page, mode string, page *Fetched, fetched func() (content.Document, error)) (content.Document, error) {
	var why error
	if d.o.Renderer == nil {
		why = reason.New(reason.ChromiumMissing, "", "Rendering is not set up in this process (no browser).")
	} else {
		why = d.o.Renderer.Available()
	}
	if why == nil {
		start := time.Now()
		// The render ends before the call's own deadline (web.extract_timeout)
		// by renderReserve (at most a quarter of the time left), so that a
		// page whose script never yields still comes back as fetched
		// instead of blanking its row (breaker6 D13).
		rctx := ctx
		if dl, ok := ctx.Deadline(); ok {
			reserve := min(renderReserve, time.Until(dl)/4)
			var cancel context.CancelFunc
			rctx, cancel = context.WithDeadline(ctx, dl.Add(-reserve))
			defer cancel()
		}
		r, err := d.o.Renderer.Render(rctx, orURL(p.FinalURL, p.URL), d.o.Guard, page)
		if err == nil {
			if r.Done != nil {
				defer r.Done()
			}
			took := time.Since(start)
			finalURL := orURL(r.FinalURL, orURL(p.FinalURL, p.URL))
			base, perr := url.Parse(finalURL)
			if perr != nil {
				base = nil
			}
			tc := time.Now()
			rdoc, rerr := content.Convert([]byte(r.HTML), "text/html; charset=utf-8", base)
			tw := time.Now()
			fdoc, ferr := fetched()
			slog.Default().Debug("web_extract render convert", "render_ms", took.Milliseconds(), "convert_ms", tw.Sub(tc).Milliseconds(), "wait_fetched_ms", time.Since(tw).Milliseconds())
			if code, note := PreferFetched(fdoc, ferr, rdoc, rerr); code != "" {
				p.RenderDiscarded, p.RenderTime = code, took
				p.Notes = append(p.Notes, note+"; the page is shown as fetched")
				return fdoc, ferr
			}
			p.Rendered, p.RenderTime = true, took
			p.FinalURL = finalURL
			return rdoc, rerr
		}
		if e := reason.As(err); e != nil && e.Gate != "" {
			return content.Document{}, err // refused: like a refused fetch
		}
		if ctx.Err() != nil {
			return content.Document{}, ctxErr(ctx, p.URL)
		}
		why = err
		if rctx.Err() != nil {
			why = reason.Wrap(reason.ExtractTimeout, "", fmt.Sprintf("the render did not finish in the %.1f s that web.extract_timeout left for it", time.Since(start).Seconds()), err)
		}
	}
	e := reason.As(why)
	if e == nil {
		e = reason.Wrap(reason.BrowserFailed, "", why.Error(), why)
	}
	if mode == provider.RenderAlways && e.Code == reason.ChromiumMissing {
		return content.Document{}, reason.Newf(e.Code, e.Gate, "Rendering was asked for (render: always) but no browser is available: %s", e.Message)
	}
	p.RenderUnavailable = string(e.Code)
	p.Notes = append(p.Notes, "rendering unavailable ("+string(e.Code)+"): "+e.Message+"; the page is shown as fetched")
	fdoc, ferr := fetched()
	if fe := reason.As(ferr); fe != nil && e.Code != reason.ChromiumMissing {
		// The page fails as fetched: its error is all the row shows, so it
		// says that the render was tried and why it failed (instead of
		// advising the browser tools, which meet the same page).
		msg, _, _ := strings.Cut(fe.Message, "; try the browser tools")
		return fdoc, reason.Wrap(fe.Code, fe.Gate, fmt.Sprintf("%s; rendering the page in the browser was attempted and failed (%s): %s", msg, e.Code, e.Message), ferr)
	}
	return fdoc, ferr
}

// renderReserve is how long before the call's deadline (web.extract_timeout)
// the render step is stopped, so that the fetched page can still be
// returned; at most a quarter of the time left when the render starts.
const renderReserve = time.Second

// Values of Page.RenderDiscarded (see PreferFetched).
const (
	// DiscardedNoContent: the rendered DOM has no readable main content
	// while the fetched page has.
	DiscardedNoContent = "no_content"
	// DiscardedLessText: the rendered DOM's main content has less than
	// half the text of the fetched page's.
	DiscardedLessText = "less_text"
)

// PreferFetched compares the conversion of a rendered DOM with that of the
// same page as fetched, and returns a Page.RenderDiscarded code and a note
// when the fetched one is the better reading of the page, else "".
// The rendering is discarded when the fetched page converted to readable
// content and the rendered one did not (DiscardedNoContent), or when the
// rendered main content has less than half the letters and digits of the
// fetched one's (DiscardedLessText): a rendering that lost most of the text
// the server sent shows something else than the page — a bot check's
// interstitial whose own requests failed, an anti-ad-block or consent page a
// script replaced the article with — while a page that builds its content
// by script renders to more text than its fetched shell, never less. Text
// is counted on the markdown's visible text (link and image targets left
// out), in letters and digits so that scripts without spaces count alike.
func PreferFetched(fetched content.Document, fetchedErr error, rendered content.Document, renderedErr error) (code, note string) {
	if fetchedErr != nil {
		return "", ""
	}
	fc := textSize(fetched.Markdown)
	if fc == 0 {
		return "", ""
	}
	if renderedErr != nil {
		return DiscardedNoContent, "rendering discarded (" + DiscardedNoContent + "): the rendered page has no readable main content (" + string(reason.Of(renderedErr)) + ") but the fetched page has"
	}
	if rc := textSize(rendered.Markdown); rc*2 < fc {
		return DiscardedLessText, fmt.Sprintf("rendering discarded (%s): the rendered page's main content has %d letters and digits, less than half the fetched page's %d", DiscardedLessText, rc, fc)
	}
	return "", ""
}

// textSize counts the letters and digits of markdown's visible text: the
// targets of links and images ("](…)") are skipped.
func textSize(md string) int {
	n := 0
	for i := 0; i < len(md); {
		if strings.HasPrefix(md[i:], "](") {
			if j := strings.IndexByte(md[i:], ')'); j > 0 {
				i += j + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(md[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
		i += size
	}
	return n
}

func orURL(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readBody decodes Content-Encoding (gzip, deflate, br) and reads at most max
// decompressed bytes. capped reports that the body was longer and was cut at max
// (at a UTF-8 boundary when the cut would split a sequence); short reports that
// the transfer ended early (the server closed before the promised length), in
// which case the bytes received are returned.
func readBody(resp *http.Response, max int64) (body []byte, capped, short bool, err error) {
	var r io.Reader = resp.Body
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		gz, gerr := gzip.NewReader(resp.Body)
		if gerr != nil {
			return nil, false, false, reason.Wrap(reason.FetchFailed, "", "The server sent a corrupt gzip body.", gerr)
		}
		defer gz.Close()
		r = gz
	case "deflate":
		// RFC 9110 says zlib-wrapped; some servers send raw DEFLATE. Peek to tell.
		br := newPeekReader(resp.Body)
		if hdr, _ := br.peek(2); len(hdr) == 2 && hdr[0]&0x0f == 8 && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 {
			zr, zerr := zlib.NewReader(br)
			if zerr != nil {
				return nil, false, false, reason.Wrap(reason.FetchFailed, "", "The server sent a corrupt deflate body.", zerr)
			}
			defer zr.Close()
			r = zr
		} else {
			fr := flate.NewReader(br)
			defer fr.Close()
			r = fr
		}
	case "br":
		r = brotli.NewReader(resp.Body)
	default:
		if !content.HeaderToken(enc, false) {
			enc = "that is no token" // the server's words are not quoted (issue 16 item 4)
		}
		return nil, false, false, reason.Newf(reason.UnsupportedContentType, "", "The server used an unsupported Content-Encoding %s.", enc)
	}
	buf, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil && !(errors.Is(err, io.ErrUnexpectedEOF) && len(buf) > 0) {
		return nil, false, false, err
	}
	short = err != nil // the server closed the connection before the promised end
	if int64(len(buf)) > max {
		return cutRuneBoundary(buf[:max]), true, short, nil
	}
	return buf, false, short, nil
}

// cutRuneBoundary drops a trailing incomplete UTF-8 sequence (at most 3 bytes), so
// a capped body never ends in half a character. For other encodings it drops at
// most 3 bytes of the cut-off tail, which is harmless.
func cutRuneBoundary(b []byte) []byte {
	for back := 1; back <= utf8.UTFMax && back <= len(b); back++ {
		i := len(b) - back
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

type peekReader struct {
	r   io.Reader
	buf []byte
}

func newPeekReader(r io.Reader) *peekReader { return &peekReader{r: r} }

func (p *peekReader) peek(n int) ([]byte, error) {
	for len(p.buf) < n {
		b := make([]byte, n-len(p.buf))
		m, err := p.r.Read(b)
		p.buf = append(p.buf, b[:m]...)
		if err != nil {
			return p.buf, err
		}
	}
	return p.buf[:n], nil
}

func (p *peekReader) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// ReadByte lets flate use the reader without adding its own buffering.
func (p *peekReader) ReadByte() (byte, error) {
	var b [1]byte
	n, err := p.Read(b[:])
	if n == 1 {
		return b[0], nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return 0, err
}

// requestError maps a client error to a *reason.Error.
func requestError(ctx context.Context, rawURL string, err error) error {
	if rerr := reason.As(err); rerr != nil {
		return rerr
	}
	if ctx.Err() != nil {
		return ctxErr(ctx, rawURL)
	}
	// A timeout while connecting, waiting for headers or reading a slow body
	// (a server that trickles bytes) is a timeout, whichever layer noticed it.
	var ne net.Error
	if (errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, context.DeadlineExceeded) {
		return reason.Wrap(reason.FetchTimeout, "", fmt.Sprintf("Fetching %s timed out (no complete answer within web.direct.timeout). The site may be slow or down; raise web.direct.timeout or try again later.", rawURL), err)
	}
	if cause := noTLSCause(ctx, err); cause != "" {
		return reason.Wrap(reason.FetchFailed, "", fmt.Sprintf("Fetching %s failed: %s", rawURL, cause), err)
	}
	return reason.Wrap(reason.FetchFailed, "", fmt.Sprintf("Fetching %s failed: %s", rawURL, safeCause(err)), err)
}

// safeCause renders a transport error without addresses (never reveal a resolved IP).
func safeCause(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "connection refused"):
		return "connection refused."
	case strings.Contains(s, "connection reset"):
		return "connection reset by the server."
	case strings.Contains(s, "EOF"):
		return "the server closed the connection without a complete answer."
	case strings.Contains(s, "certificate"), strings.Contains(s, "tls:"):
		return "TLS handshake failed (certificate or protocol problem)."
	case strings.Contains(s, "failed to parse Location header"):
		// net/http refuses some Locations a browser would follow (a
		// percent-encoded host such as evil%2eexample): nothing is dialed.
		return "the server redirected to a Location that cannot be parsed (for example a percent-encoded host name); the redirect was not followed and nothing was sent to its target."
	}
	return "network error."
}

// statusLine is an HTTP status as the agent sees it: the code and the
// standard text (RFC 9110) for it, never the reason phrase the server
// sent, which is the server's own words (page-derived text outside any
// content boundary; issue 16 item 4).
func statusLine(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return strconv.Itoa(code)
}
