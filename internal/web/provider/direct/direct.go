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
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/andybalholm/brotli"

	"github.com/gatehouse-dev/gatehouse/internal/content"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
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
}

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
	return &Direct{o: o, client: o.Guard.Client(co)}
}

// Name returns "direct".
func (d *Direct) Name() string { return Name }

// Extract fetches urls concurrently (at most Options.Parallel at once) and
// emits each page as soon as it is done (provider.Extractor).
func (d *Direct) Extract(ctx context.Context, urls []string, emit func(int, Page)) {
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
			emit(i, d.Fetch(ctx, u))
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

// Fetch fetches and converts one page. Errors are *reason.Error: the egress codes
// (ssrf_*, dns_*, too_many_redirects, fetch_failed, fetch_timeout), http_status,
// and content's unsupported_content_type / binary_payload / empty_content.
func (d *Direct) Fetch(ctx context.Context, rawURL string) Page {
	p := Page{URL: rawURL}
	ctx = traceHandshake(ctx) // requestError names a server that does not speak TLS
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		p.Err = reason.Wrap(reason.InvalidURL, reason.GateParse, "Blocked: the URL could not be turned into a request.", err)
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
	if err != nil {
		p.Err = requestError(ctx, rawURL, err)
		return p
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	p.FinalURL = final.String()
	if resp.StatusCode >= 400 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		p.Err = reason.Newf(reason.HTTPStatus, "", "The server answered HTTP %s for %s. Check the URL, or try again later if the site is down.", resp.Status, p.FinalURL)
		return p
	}
	body, capped, short, err := readBody(resp, d.o.MaxBodyBytes)
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
	doc, err := content.Convert(body, resp.Header.Get("Content-Type"), final)
	if err != nil {
		p.Err = err
		return p
	}
	p.Title, p.Content = doc.Title, doc.Markdown
	return p
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
		return nil, false, false, reason.Newf(reason.UnsupportedContentType, "", "The server used an unsupported Content-Encoding %q.", enc)
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
	}
	return "network error."
}
