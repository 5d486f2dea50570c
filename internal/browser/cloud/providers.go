package cloud

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Session is one cloud browser session (spec §B4 record shape): the
// provider's id (bb_session_id), the CDP URL to connect to, an optional live
// view URL and expiry, and the provider's feature flags.
type Session struct {
	Provider  string          `json:"provider"`
	Name      string          `json:"session_name"`
	ID        string          `json:"bb_session_id"`
	CDPURL    string          `json:"cdp_url"`
	LiveURL   string          `json:"live_url,omitempty"`
	ExpiresAt float64         `json:"expires_at,omitempty"` // epoch seconds; 0 with HasExpiry false = none
	HasExpiry bool            `json:"-"`
	Features  map[string]bool `json:"features"`
}

// Expired reports whether the provider's expiry has passed at now.
func (s Session) Expired(now time.Time) bool { return Expired(s.ExpiresAt, s.HasExpiry, now) }

// Provider creates and releases cloud browser sessions (spec §B11).
type Provider interface {
	// Name is the browser.cloud_provider name: browserbase, browser-use, firecrawl.
	Name() string
	// Configured reports whether the credentials it needs are set.
	Configured() bool
	// Create starts a session for task and returns its CDP URL.
	Create(ctx context.Context, task string) (Session, error)
	// Release ends the session (best effort by the caller on failure).
	Release(ctx context.Context, s Session) error
}

// APIError is a provider API failure: the HTTP status (0 for a transport
// error) and up to 300 bytes of the body. It never carries the API key.
type APIError struct {
	Provider string
	Op       string
	Status   int
	Body     string
	Err      error
}

func (e *APIError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s %s: %v", e.Provider, e.Op, e.Err)
	}
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Provider, e.Op, e.Status, e.Body)
}

func (e *APIError) Unwrap() error { return e.Err }

// call sends one JSON request and decodes a 2xx JSON answer into out.
func call(ctx context.Context, hc *http.Client, provider, op, method, url string, hdr map[string]string, body, out any, timeout time.Duration) error {
	if hc == nil { // every provider call dials through internal/egress
		return &APIError{Provider: provider, Op: op, Err: fmt.Errorf("no HTTP client (build one with egress.Guard.Client)")}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return &APIError{Provider: provider, Op: op, Err: err}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return &APIError{Provider: provider, Op: op, Err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return &APIError{Provider: provider, Op: op, Err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		s := strings.TrimSpace(string(b))
		if len(s) > 300 {
			s = s[:300]
		}
		return &APIError{Provider: provider, Op: op, Status: resp.StatusCode, Body: s}
	}
	if out != nil && len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return &APIError{Provider: provider, Op: op, Status: resp.StatusCode, Err: fmt.Errorf("not the documented JSON: %w", err)}
		}
	}
	return nil
}

func hex4() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Browserbase is the Browserbase provider (spec §B11): POST /v1/sessions with
// X-BB-API-Key, release with status REQUEST_RELEASE.
type Browserbase struct {
	APIKey, ProjectID string
	BaseURL           string       // BROWSERBASE_BASE_URL; default https://api.browserbase.com
	KeepAlive         bool         // BROWSERBASE_KEEP_ALIVE, default true
	Proxies           bool         // BROWSERBASE_PROXIES, default true
	AdvancedStealth   bool         // BROWSERBASE_ADVANCED_STEALTH, default false
	Timeout           int          // BROWSERBASE_SESSION_TIMEOUT (seconds); 0 = provider default
	Client            *http.Client // required: from egress.Guard.Client
}

func (b *Browserbase) Name() string     { return "browserbase" }
func (b *Browserbase) Configured() bool { return b.APIKey != "" && b.ProjectID != "" }

func (b *Browserbase) base() string {
	if b.BaseURL != "" {
		return strings.TrimRight(b.BaseURL, "/")
	}
	return "https://api.browserbase.com"
}

// Create starts a session (30 s). On HTTP 402 (plan limits) it retries
// without keepAlive, then without proxies, and reports what it dropped in the
// features.
func (b *Browserbase) Create(ctx context.Context, task string) (Session, error) {
	keep, prox := b.KeepAlive, b.Proxies
	for {
		body := map[string]any{"projectId": b.ProjectID, "browserSettings": map[string]any{"advancedStealth": b.AdvancedStealth}}
		if keep {
			body["keepAlive"] = true
		}
		if prox {
			body["proxies"] = true
		}
		if b.Timeout > 0 {
			body["timeout"] = b.Timeout
		}
		var out struct {
			ID         string `json:"id"`
			ConnectURL string `json:"connectUrl"`
			ExpiresAt  any    `json:"expiresAt"`
		}
		err := call(ctx, b.Client, "browserbase", "create session", http.MethodPost, b.base()+"/v1/sessions",
			map[string]string{"X-BB-API-Key": b.APIKey}, body, &out, 30*time.Second)
		if ae, ok := err.(*APIError); ok && ae.Status == http.StatusPaymentRequired && (keep || prox) {
			if keep {
				keep = false
			} else {
				prox = false
			}
			continue
		}
		if err != nil {
			return Session{}, err
		}
		if out.ID == "" || out.ConnectURL == "" {
			return Session{}, &APIError{Provider: "browserbase", Op: "create session", Status: 200, Err: fmt.Errorf("answer without id or connectUrl")}
		}
		exp, has := ParseExpiry(out.ExpiresAt)
		return Session{Provider: b.Name(), Name: "gatehouse_" + task + "_" + hex4(), ID: out.ID, CDPURL: out.ConnectURL, ExpiresAt: exp, HasExpiry: has,
			Features: map[string]bool{"basic_stealth": true, "proxies": prox, "advanced_stealth": b.AdvancedStealth, "keep_alive": keep, "custom_timeout": b.Timeout > 0}}, nil
	}
}

// Release asks Browserbase to end the session (10 s).
func (b *Browserbase) Release(ctx context.Context, s Session) error {
	return call(ctx, b.Client, "browserbase", "release session", http.MethodPost, b.base()+"/v1/sessions/"+s.ID,
		map[string]string{"X-BB-API-Key": b.APIKey}, map[string]any{"projectId": b.ProjectID, "status": "REQUEST_RELEASE"}, nil, 10*time.Second)
}

// BrowserUse is the Browser Use cloud provider (spec §B11), direct-key mode:
// POST /browsers with X-Browser-Use-API-Key, stop with PATCH {action:"stop"}.
type BrowserUse struct {
	APIKey  string
	BaseURL string // default https://api.browser-use.com/api/v3
	Client  *http.Client
}

func (u *BrowserUse) Name() string     { return "browser-use" }
func (u *BrowserUse) Configured() bool { return u.APIKey != "" }

func (u *BrowserUse) base() string {
	if u.BaseURL != "" {
		return strings.TrimRight(u.BaseURL, "/")
	}
	return "https://api.browser-use.com/api/v3"
}

// Create starts a browser; its timeoutAt is the session's expiry.
func (u *BrowserUse) Create(ctx context.Context, task string) (Session, error) {
	var out struct {
		ID         string `json:"id"`
		CDPURL     string `json:"cdpUrl"`
		ConnectURL string `json:"connectUrl"`
		LiveURL    string `json:"liveUrl"`
		TimeoutAt  any    `json:"timeoutAt"`
	}
	err := call(ctx, u.Client, "browser-use", "create browser", http.MethodPost, u.base()+"/browsers",
		map[string]string{"X-Browser-Use-API-Key": u.APIKey}, map[string]any{}, &out, 30*time.Second)
	if err != nil {
		return Session{}, err
	}
	cdp := out.CDPURL
	if cdp == "" {
		cdp = out.ConnectURL
	}
	if out.ID == "" || cdp == "" {
		return Session{}, &APIError{Provider: "browser-use", Op: "create browser", Status: 200, Err: fmt.Errorf("answer without id or cdpUrl")}
	}
	exp, has := ParseExpiry(out.TimeoutAt)
	return Session{Provider: u.Name(), Name: "gatehouse_" + task + "_" + hex4(), ID: out.ID, CDPURL: cdp, LiveURL: out.LiveURL,
		ExpiresAt: exp, HasExpiry: has, Features: map[string]bool{"browser_use": true}}, nil
}

// Release stops the browser (10 s).
func (u *BrowserUse) Release(ctx context.Context, s Session) error {
	return call(ctx, u.Client, "browser-use", "stop browser", http.MethodPatch, u.base()+"/browsers/"+s.ID,
		map[string]string{"X-Browser-Use-API-Key": u.APIKey}, map[string]any{"action": "stop"}, nil, 10*time.Second)
}

// Firecrawl is the Firecrawl browser provider (spec §B11; explicit selection
// only): POST /v2/browser {ttl} with a Bearer key, DELETE /v2/browser/<id>.
type Firecrawl struct {
	APIKey  string
	BaseURL string // FIRECRAWL_API_URL; default https://api.firecrawl.dev
	TTL     int    // FIRECRAWL_BROWSER_TTL seconds; 0 = 300
	Client  *http.Client
}

func (f *Firecrawl) Name() string     { return "firecrawl" }
func (f *Firecrawl) Configured() bool { return f.APIKey != "" }

func (f *Firecrawl) base() string {
	if f.BaseURL != "" {
		return strings.TrimRight(f.BaseURL, "/")
	}
	return "https://api.firecrawl.dev"
}

// Create starts a browser session with its TTL; the expiry is now + TTL
// unless the answer names one.
func (f *Firecrawl) Create(ctx context.Context, task string) (Session, error) {
	ttl := f.TTL
	if ttl <= 0 {
		ttl = 300
	}
	var out struct {
		ID        string `json:"id"`
		CDPURL    string `json:"cdpUrl"`
		ExpiresAt any    `json:"expiresAt"`
		Data      *struct {
			ID        string `json:"id"`
			CDPURL    string `json:"cdpUrl"`
			ExpiresAt any    `json:"expiresAt"`
		} `json:"data"`
	}
	start := time.Now()
	err := call(ctx, f.Client, "firecrawl", "create browser", http.MethodPost, f.base()+"/v2/browser",
		map[string]string{"Authorization": "Bearer " + f.APIKey}, map[string]any{"ttl": ttl}, &out, 30*time.Second)
	if err != nil {
		return Session{}, err
	}
	if out.Data != nil && out.ID == "" {
		out.ID, out.CDPURL, out.ExpiresAt = out.Data.ID, out.Data.CDPURL, out.Data.ExpiresAt
	}
	if out.ID == "" || out.CDPURL == "" {
		return Session{}, &APIError{Provider: "firecrawl", Op: "create browser", Status: 200, Err: fmt.Errorf("answer without id or cdpUrl")}
	}
	exp, has := ParseExpiry(out.ExpiresAt)
	if !has {
		exp, has = float64(start.Add(time.Duration(ttl)*time.Second).Unix()), true
	}
	return Session{Provider: f.Name(), Name: "gatehouse_" + task + "_" + hex4(), ID: out.ID, CDPURL: out.CDPURL,
		ExpiresAt: exp, HasExpiry: has, Features: map[string]bool{"firecrawl": true}}, nil
}

// Release deletes the browser session (10 s).
func (f *Firecrawl) Release(ctx context.Context, s Session) error {
	return call(ctx, f.Client, "firecrawl", "delete browser", http.MethodDelete, f.base()+"/v2/browser/"+s.ID,
		map[string]string{"Authorization": "Bearer " + f.APIKey}, nil, nil, 10*time.Second)
}
