// Package vendors holds Gatehouse's clients of the web vendors' documented HTTP
// APIs (spec §A4.1, §A5.1, §A11): firecrawl, tavily, exa, parallel, keenable,
// perplexity, searxng, brave-free, ddgs and xai. The keyless exa and parallel
// endpoints are MCP servers and are called with the MCP Go SDK's client.
//
// Every request goes through an *http.Client made by internal/egress, so vendor
// calls meet the same SSRF gate as page fetches. API failures become
// *reason.Error values with a vendor_* code (vendor_auth for 401/403,
// vendor_quota for 402 and caps, vendor_rate_limited for 429,
// vendor_unavailable for 5xx and connection failures, vendor_timeout,
// vendor_bad_response for truncated or malformed bodies, vendor_error for other
// 4xx), which the keyless ring classifies without string matching. Messages name
// the vendor and the variable to check; API key values are scrubbed from every
// message and never logged.
package vendors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// maxBody caps a vendor response body (bytes). A larger body is a
// vendor_bad_response rather than a memory problem.
const maxBody = 16 << 20

// UserAgent identifies Gatehouse to vendor APIs.
const UserAgent = "gatehouse/0.1"

// api is one vendor endpoint: base URL, credential and client.
type api struct {
	vendor string // backend name, for messages
	label  string
	base   string // no trailing slash
	key    string // "" = no credential
	keyEnv string // variable named in fix hints
	client *http.Client
	// auth sets the credential on a request (nil: no credential header).
	auth func(h http.Header, key string)
	// header adds fixed vendor headers.
	header func(h http.Header)
}

func bearer(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) }

// request is one API call.
type request struct {
	method string
	path   string // appended to base; may carry a query
	body   any    // JSON-encoded when non-nil and form is nil
	form   string // urlencoded form body when non-empty
	accept string
}

// joinEndpoint appends path (which may carry a query) to a configured base
// URL. A base may carry a query of its own (SEARXNG_URL=https://searx.lan/?
// token=…, for an instance behind a proxy that wants it): path goes before
// it and the two queries are joined, base first, instead of being glued
// after the base's query (".../?token=x/search?q=…"). A base that does not
// parse, or has no query, is concatenated as it is.
func joinEndpoint(base, path string) string {
	i := strings.IndexAny(base, "?#")
	if i < 0 {
		return base + path
	}
	u, err := url.Parse(base)
	if err != nil {
		return base + path
	}
	p, q, _ := strings.Cut(path, "?")
	u.Path = strings.TrimRight(u.Path, "/") + p
	u.RawPath = ""
	switch {
	case u.RawQuery == "":
		u.RawQuery = q
	case q != "":
		u.RawQuery += "&" + q
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// do sends req and returns the body of a 2xx answer. Status and transport
// failures are *reason.Error (see the package doc).
func (a *api) do(ctx context.Context, req request) ([]byte, error) {
	var rd io.Reader
	ctype := ""
	switch {
	case req.form != "":
		rd, ctype = strings.NewReader(req.form), "application/x-www-form-urlencoded"
	case req.body != nil:
		b, err := json.Marshal(req.body)
		if err != nil {
			return nil, reason.Wrap(reason.VendorError, "", a.label+": could not encode the request.", err)
		}
		rd, ctype = bytes.NewReader(b), "application/json"
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, joinEndpoint(a.base, req.path), rd)
	if err != nil {
		return nil, reason.Wrap(reason.VendorError, "", a.label+": invalid endpoint URL; check "+a.endpointHint()+".", err)
	}
	if ctype != "" {
		hr.Header.Set("Content-Type", ctype)
	}
	hr.Header.Set("Accept", orStr(req.accept, "application/json"))
	hr.Header.Set("User-Agent", UserAgent)
	if a.header != nil {
		a.header(hr.Header)
	}
	if a.key != "" && a.auth != nil {
		a.auth(hr.Header, a.key)
	}
	resp, err := a.client.Do(hr)
	if err != nil {
		return nil, a.transportError(ctx, err)
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, a.statusError(resp.StatusCode, body)
	}
	if rerr != nil {
		if ctx.Err() != nil {
			return nil, a.transportError(ctx, rerr)
		}
		var ne net.Error
		if errors.As(rerr, &ne) && ne.Timeout() {
			return nil, reason.Wrap(reason.VendorTimeout, "", a.label+" API did not finish sending its answer in time. Try again later.", rerr)
		}
		return nil, reason.Wrap(reason.VendorBadResponse, "", a.label+" API answer was truncated (the connection closed before the body was complete). Try again later.", rerr)
	}
	if len(body) > maxBody {
		return nil, reason.Newf(reason.VendorBadResponse, "", "%s API answer exceeds %d bytes; refused.", a.label, maxBody)
	}
	return body, nil
}

// getJSON runs req and decodes a JSON answer into out.
func (a *api) json(ctx context.Context, req request, out any) error {
	body, err := a.do(ctx, req)
	if err != nil {
		return err
	}
	return a.decode(body, out)
}

func (a *api) decode(body []byte, out any) error {
	if err := json.Unmarshal(body, out); err != nil {
		return reason.Wrap(reason.VendorBadResponse, "", reason.QuoteRemote(
			fmt.Sprintf("%s API answered with a body that is not valid JSON (%s).", a.label, jsonWhy(err)), a.snippet(body)), err)
	}
	return nil
}

func jsonWhy(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON") {
		return "the body ends early"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q has the wrong type", te.Field)
	}
	return "undecodable"
}

func (a *api) endpointHint() string {
	if a.keyEnv != "" {
		return a.keyEnv + " and the endpoint"
	}
	return "the endpoint"
}

// transportError maps a failed round trip.
func (a *api) transportError(ctx context.Context, err error) error {
	if rerr := reason.As(err); rerr != nil && rerr.Gate != "" {
		// An egress gate refused the endpoint (SSRF, scheme): say which.
		return reason.Wrap(rerr.Code, rerr.Gate, a.label+" endpoint refused: "+rerr.Message, err)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return reason.Wrap(reason.Interrupted, "", a.label+" call was cancelled.", err)
	}
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) || reason.Of(err) == reason.FetchTimeout {
		return reason.Wrap(reason.VendorTimeout, "", a.label+" API did not answer in time (timeout). Try again later.", err)
	}
	return reason.Wrap(reason.VendorUnavailable, "", a.label+" API could not be reached (connection failed). Check the network, or try again later.", err)
}

// statusError maps a non-2xx status to a vendor code.
func (a *api) statusError(status int, body []byte) error {
	snip := a.snippet(body)
	msg := fmt.Sprintf("%s API: HTTP %d %s", a.label, status, http.StatusText(status))
	code := reason.VendorError
	fix := "Check the request and try again."
	switch {
	case status == 401 || status == 403:
		code = reason.VendorAuth
		if a.key != "" {
			fix = "Check that " + a.keyEnv + " is correct and active."
		} else if a.keyEnv != "" {
			fix = "The free tier refused this machine; set " + a.keyEnv + " to use your own key."
		} else {
			fix = "The endpoint refused the request; check its access settings."
		}
	case status == 402:
		code, fix = reason.VendorQuota, "The account is out of credits; top it up or select another backend."
	case status == 429:
		code, fix = reason.VendorRateLimited, "The vendor is rate limiting; wait and retry, or use your own key."
	case status >= 500:
		code, fix = reason.VendorUnavailable, "The vendor's service failed; try again later."
	}
	if code == reason.VendorError && capMarked(snip) {
		code, fix = reason.VendorQuota, "A plan or daily cap was reached; wait for it to reset or select another backend."
	}
	// The body is the server's text: quoted last, after RemoteLead, so that
	// surfaces show it as untrusted (breaker7 D12).
	return reason.New(code, "", reason.QuoteRemote(msg+". "+fix, snip))
}

func capMarked(s string) bool {
	m := strings.ToLower(s)
	for _, k := range []string{"daily_cap", "daily cap", "quota", "insufficient credit", "out of credits"} {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

// snippet is the first 300 characters of a body, one line, with the key and
// any credential-shaped token scrubbed. It is the server's text: messages
// quote it with reason.QuoteRemote, never inline.
func (a *api) snippet(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return scrub(s, a.key)
}

// scrub removes key (and credential-shaped tokens, spec §A7) from s.
func scrub(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	for range 8 {
		m, ok := urlsafe.MatchPrefix(s)
		if !ok || m == "" {
			break
		}
		s = strings.ReplaceAll(s, m, "[redacted]")
	}
	return s
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// clampLimit bounds a vendor request to [1, provider.VendorLimitCap].
func clampLimit(n int) int {
	return min(max(n, 1), provider.VendorLimitCap)
}

// Options are what every vendor client needs.
type Options struct {
	Client *http.Client // from egress.Guard.Client
	Key    string       // API key ("" = none)
	Base   string       // base URL override ("" = the vendor's cloud endpoint)
	// Timeout bounds one call (0 = the vendor default).
	Timeout time.Duration
}

func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// rows turns parallel title/url/description fields into Rows with positions.
func numbered(rows []provider.Row) []provider.Row {
	out := rows[:0]
	for _, r := range rows {
		if strings.TrimSpace(r.URL) == "" {
			continue
		}
		r.Position = len(out) + 1
		out = append(out, r)
	}
	return out
}
