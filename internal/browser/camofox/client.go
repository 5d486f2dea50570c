// Package camofox is a client of the Camofox browser server's REST API (the
// anti-detect Firefox-based browser at CAMOFOX_URL, spec §B1, §B11): tabs
// are created per user id and session key, then navigated, snapshotted
// (accessibility tree with element refs e1, e2, …), clicked, typed into,
// scrolled and closed by tab id. Camofox has no CDP endpoint, so it is
// driven only through these calls.
//
// Request and response shapes follow camofox-browser's documented API
// (openapi.json: POST /tabs, POST /tabs/{tabId}/navigate, GET
// /tabs/{tabId}/snapshot, POST /tabs/{tabId}/click|type|scroll|press|back|
// evaluate, GET /tabs/{tabId}/stats, GET /tabs/{tabId}/screenshot, DELETE
// /tabs/{tabId}, GET /health). Every call carries userId (in the JSON body,
// or the query for GET and DELETE) and, when an API key is set,
// "Authorization: Bearer <key>".
package camofox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/safetext"
)

// Client talks to one Camofox server.
type Client struct {
	// BaseURL is CAMOFOX_URL, e.g. http://localhost:9377.
	BaseURL string
	// APIKey is CAMOFOX_API_KEY ("" = none), sent as a Bearer token.
	APIKey string
	// HTTP is required: a client from egress.Guard.Client, so every call
	// passes the egress decision.
	HTTP *http.Client
	// Timeout bounds one call; 0 means 30 s.
	Timeout time.Duration
}

// Error is a failed Camofox call: the operation, the HTTP status (0 for a
// transport error) and the server's error text (up to 300 bytes).
type Error struct {
	Op     string
	Status int
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("camofox %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("camofox %s: HTTP %d: %s", e.Op, e.Status, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Unsupported reports whether err says the server lacks the endpoint (HTTP
// 404 without a tab error, 405 or 501; spec §B11 evaluate rule).
func Unsupported(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Status == http.StatusMethodNotAllowed || e.Status == http.StatusNotImplemented ||
		e.Status == http.StatusNotFound && !strings.Contains(strings.ToLower(e.Msg), "tab"))
}

// TabGone reports whether err says the tab no longer exists (HTTP 404
// naming the tab).
func TabGone(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound && strings.Contains(strings.ToLower(e.Msg), "tab")
}

func (c *Client) do(ctx context.Context, op, method, path string, query url.Values, body, out any) error {
	if c.HTTP == nil {
		return &Error{Op: op, Err: errors.New("no HTTP client (build one with egress.Guard.Client)")}
	}
	to := c.Timeout
	if to <= 0 {
		to = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return &Error{Op: op, Err: err}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return &Error{Op: op, Err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return &Error{Op: op, Err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return &Error{Op: op, Status: resp.StatusCode, Msg: msg}
	}
	switch o := out.(type) {
	case nil:
	case *[]byte:
		*o = b
	default:
		if err := json.Unmarshal(b, out); err != nil {
			return &Error{Op: op, Status: resp.StatusCode, Err: fmt.Errorf("not the documented JSON: %w", err)}
		}
	}
	return nil
}

func user(id string) url.Values { return url.Values{"userId": {id}} }

// Health is GET /health (5 s): nil when the server answers 2xx.
func (c *Client) Health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.do(ctx, "health", http.MethodGet, "/health", nil, nil, nil)
}

// Page is a tab's location as Camofox reports it.
type Page struct {
	TabID string `json:"tabId"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

// CreateTab is POST /tabs {userId, sessionKey}: a new tab in the user's
// session (its own cookies), grouped under sessionKey.
func (c *Client) CreateTab(ctx context.Context, userID, sessionKey string) (Page, error) {
	var p Page
	err := c.do(ctx, "create tab", http.MethodPost, "/tabs", nil, map[string]any{"userId": userID, "sessionKey": sessionKey}, &p)
	if err == nil && p.TabID == "" {
		err = &Error{Op: "create tab", Status: 200, Err: errors.New("answer without tabId")}
	}
	return p, err
}

// Navigate is POST /tabs/{tabId}/navigate {userId, url}; it returns where
// the tab ended up (after redirects).
func (c *Client) Navigate(ctx context.Context, tabID, userID, u string) (Page, error) {
	var p Page
	err := c.do(ctx, "navigate", http.MethodPost, "/tabs/"+url.PathEscape(tabID)+"/navigate", nil, map[string]any{"userId": userID, "url": u}, &p)
	return p, err
}

// Snapshot is a tab's accessibility snapshot.
type Snapshot struct {
	URL       string
	Text      string // the tree, e.g. "[link e1] More information..."
	Refs      int    // refsCount
	Truncated bool   // cut at MaxSnapshotChars here
}

// MaxSnapshotChars caps the pages fetched of one snapshot (spec §B9 store cap).
const MaxSnapshotChars = 2_000_000

// Snapshot is GET /tabs/{tabId}/snapshot?userId=…, following the server's
// pagination (Camofox pages at 80,000 chars: hasMore, nextOffset) up to
// MaxSnapshotChars.
func (c *Client) Snapshot(ctx context.Context, tabID, userID string) (Snapshot, error) {
	var s Snapshot
	var b strings.Builder
	offset := 0
	for page := 0; ; page++ {
		q := user(userID)
		if offset > 0 {
			q.Set("offset", strconv.Itoa(offset))
		}
		var r struct {
			URL        string `json:"url"`
			Snapshot   string `json:"snapshot"`
			RefsCount  int    `json:"refsCount"`
			HasMore    bool   `json:"hasMore"`
			NextOffset int    `json:"nextOffset"`
		}
		if err := c.do(ctx, "snapshot", http.MethodGet, "/tabs/"+url.PathEscape(tabID)+"/snapshot", q, nil, &r); err != nil {
			return s, err
		}
		if page == 0 {
			s.URL, s.Refs = r.URL, r.RefsCount
		}
		b.WriteString(r.Snapshot)
		if !r.HasMore || r.NextOffset <= offset {
			break
		}
		if b.Len() >= MaxSnapshotChars {
			s.Truncated = true
			break
		}
		offset = r.NextOffset
	}
	s.Text = b.String()
	if len(s.Text) > MaxSnapshotChars {
		s.Text = strings.ToValidUTF8(s.Text[:MaxSnapshotChars], "")
	}
	return s, nil
}

// Click is POST /tabs/{tabId}/click {userId, ref}.
func (c *Client) Click(ctx context.Context, tabID, userID, ref string) (Page, error) {
	var p Page
	err := c.do(ctx, "click", http.MethodPost, "/tabs/"+url.PathEscape(tabID)+"/click", nil, map[string]any{"userId": userID, "ref": ref}, &p)
	return p, err
}

// Type is POST /tabs/{tabId}/type {userId, ref, text, clear: true}: the
// field's content is replaced (spec §B2 browser_type fills).
func (c *Client) Type(ctx context.Context, tabID, userID, ref, text string) error {
	return c.do(ctx, "type", http.MethodPost, "/tabs/"+url.PathEscape(tabID)+"/type", nil,
		map[string]any{"userId": userID, "ref": ref, "text": text, "clear": true}, nil)
}

// Scroll is POST /tabs/{tabId}/scroll {userId, direction, amount} (pixels).
func (c *Client) Scroll(ctx context.Context, tabID, userID, direction string, amount int) error {
	return c.do(ctx, "scroll", http.MethodPost, "/tabs/"+url.PathEscape(tabID)+"/scroll", nil,
		map[string]any{"userId": userID, "direction": direction, "amount": amount}, nil)
}

// Press is POST /tabs/{tabId}/press {userId, key}.
func (c *Client) Press(ctx context.Context, tabID, userID, key string) error {
	return c.do(ctx, "press", http.MethodPost, "/tabs/"+url.PathEscape(tabID)+"/press", nil, map[string]any{"userId": userID, "key": key}, nil)
}

// Back is POST /tabs/{tabId}/back {userId}; it returns the new URL.
func (c *Client) Back(ctx context.Context, tabID, userID string) (Page, error) {
	var p Page
	err := c.do(ctx, "back", http.MethodPost, "/tabs/"+url.PathEscape(tabID)+"/back", nil, map[string]any{"userId": userID}, &p)
	return p, err
}

// Evaluate is POST /tabs/{tabId}/evaluate {userId, expression}; it returns
// the JSON result, lone UTF-16 surrogates of its strings as U+FFFD
// (safetext.JSON). A server without the endpoint fails with an error for
// which Unsupported is true.
func (c *Client) Evaluate(ctx context.Context, tabID, userID, expression string) (json.RawMessage, error) {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	err := c.do(ctx, "evaluate", http.MethodPost, "/tabs/"+url.PathEscape(tabID)+"/evaluate", nil, map[string]any{"userId": userID, "expression": expression}, &r)
	if len(r.Result) > 0 {
		r.Result = safetext.JSON(r.Result)
	}
	return r.Result, err
}

// Stats is GET /tabs/{tabId}/stats?userId=…: the tab's current URL (the page
// gate's probe).
func (c *Client) Stats(ctx context.Context, tabID, userID string) (Page, error) {
	var p Page
	err := c.do(ctx, "stats", http.MethodGet, "/tabs/"+url.PathEscape(tabID)+"/stats", user(userID), nil, &p)
	return p, err
}

// Screenshot is GET /tabs/{tabId}/screenshot?userId=…: PNG bytes.
func (c *Client) Screenshot(ctx context.Context, tabID, userID string) ([]byte, error) {
	var b []byte
	err := c.do(ctx, "screenshot", http.MethodGet, "/tabs/"+url.PathEscape(tabID)+"/screenshot", user(userID), nil, &b)
	return b, err
}

// CloseTab is DELETE /tabs/{tabId}?userId=….
func (c *Client) CloseTab(ctx context.Context, tabID, userID string) error {
	return c.do(ctx, "close tab", http.MethodDelete, "/tabs/"+url.PathEscape(tabID), user(userID), nil, nil)
}
