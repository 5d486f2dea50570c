// Package cloud holds the browser backends that are not a local Chromium:
// a user-supplied CDP endpoint (spec §B12) and the cloud browser providers
// Browserbase, Browser Use and Firecrawl (spec §B4, §B11), each behind the
// Provider interface, plus their shared helpers (CDP URL discovery, provider
// expiry parsing).
package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DiscoveryURL says how a CDP override value is resolved (spec §B12): URLs
// containing /devtools/browser/ pass through (passthrough true); http(s)
// URLs and bare ws(s)://host:port are resolved through
// <http(s) root>/json/version (returned); other ws(s) URLs pass through; ""
// stays "". An unparseable value passes through.
func DiscoveryURL(raw string) (discovery string, passthrough bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", false
	}
	if strings.Contains(raw, "/devtools/browser/") {
		return "", true
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", true
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return strings.ToLower(u.Scheme) + "://" + u.Host + "/json/version", false
	case "ws", "wss":
		if u.Path != "" && u.Path != "/" {
			return "", true
		}
		sc := "http"
		if strings.EqualFold(u.Scheme, "wss") {
			sc = "https"
		}
		return sc + "://" + u.Host + "/json/version", false
	}
	return "", true
}

// DiscoveryTimeout bounds the /json/version request (spec §B12).
const DiscoveryTimeout = 10 * time.Second

// ResolveCDPURL turns a CDP override (or a provider's connect URL) into the
// browser's WebSocket debugger URL: DiscoveryURL, then GET /json/version
// (10 s) → webSocketDebuggerUrl. On any failure the raw value is returned
// with the error (spec §B12: failure → raw value). hc is required (passthrough
// values need none): a client from egress.Guard.Client, so the discovery
// request passes the egress decision like every other dial.
func ResolveCDPURL(ctx context.Context, raw string, hc *http.Client) (string, error) {
	disc, pass := DiscoveryURL(raw)
	if pass || disc == "" {
		return strings.TrimSpace(raw), nil
	}
	if hc == nil {
		return raw, errors.New("CDP discovery: no HTTP client (build one with egress.Guard.Client)")
	}
	ctx, cancel := context.WithTimeout(ctx, DiscoveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, disc, nil)
	if err != nil {
		return raw, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return raw, fmt.Errorf("CDP discovery %s: %w", disc, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return raw, fmt.Errorf("CDP discovery %s: HTTP %d", disc, resp.StatusCode)
	}
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil {
		return raw, fmt.Errorf("CDP discovery %s: %w", disc, err)
	}
	if v.WS == "" {
		return raw, errors.New("CDP discovery " + disc + ": no webSocketDebuggerUrl")
	}
	return v.WS, nil
}

// ParseExpiry reads a provider's expires_at (spec §B4): a JSON number (not a
// bool) is epoch seconds as-is; an ISO-8601 string with Z or an offset is
// that instant, a naive one is UTC; anything else (bool, "", malformed) means
// no expiry (ok false).
func ParseExpiry(v any) (epoch float64, ok bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return 0, false
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
			if t, err := time.Parse(layout, s); err == nil {
				return float64(t.UnixNano()) / 1e9, true
			}
		}
	}
	return 0, false
}

// Expired reports whether a session with expiry epoch (ok from ParseExpiry)
// has expired at now (now ≥ expiry).
func Expired(epoch float64, ok bool, now time.Time) bool {
	return ok && float64(now.UnixNano())/1e9 >= epoch
}
