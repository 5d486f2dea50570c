package vendors

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// KeylessMCPTimeout bounds one keyless MCP tool call, handshake included
// (spec §A5.1: 30 s).
const KeylessMCPTimeout = 30 * time.Second

// mcpTool calls tools on a vendor's hosted MCP server (streamable HTTP) with
// the MCP Go SDK's client: initialize → notifications/initialized →
// tools/call, then the session is closed. The SDK echoes Mcp-Session-Id when
// the server issues one. No standalone SSE stream is opened and the SDK's
// reconnect retries are off: a failure moves the keyless ring on instead.
type mcpTool struct {
	label    string
	keyEnv   string // suggested in errors ("set EXA_API_KEY to use your own key")
	endpoint string
	client   *http.Client
	key      string // Authorization: Bearer when set (keyed MCP); "" keyless
}

// statusRecorder remembers the last HTTP status the MCP transport saw, so an
// HTTP 429 or 403 from the server becomes a vendor code rather than SDK text.
type statusRecorder struct {
	rt     http.RoundTripper
	status atomic.Int32
	key    string
}

func (s *statusRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set("User-Agent", UserAgent)
	if s.key != "" {
		r2.Header.Set("Authorization", "Bearer "+s.key)
	}
	resp, err := s.rt.RoundTrip(r2)
	if err == nil {
		s.status.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// call runs one tool and returns its text content (the first text item) and
// structured content.
func (m *mcpTool) call(ctx context.Context, tool string, args map[string]any) (string, json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, KeylessMCPTimeout)
	defer cancel()
	rt := m.client.Transport
	if rt == nil {
		return "", nil, errors.New("vendors: MCP client needs an egress transport")
	}
	rec := &statusRecorder{rt: rt, key: m.key}
	hc := *m.client
	hc.Transport = rec
	c := mcp.NewClient(&mcp.Implementation{Name: "gatehouse", Version: "0.1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: m.endpoint, HTTPClient: &hc, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return "", nil, m.failure(ctx, "connect", rec, err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", nil, m.failure(ctx, tool, rec, err)
	}
	text := ""
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = t.Text
			break
		}
	}
	var structured json.RawMessage
	if res.StructuredContent != nil {
		structured, _ = json.Marshal(res.StructuredContent)
	}
	if res.IsError {
		msg := strings.TrimSpace(text)
		code := reason.VendorError
		switch {
		case provider429(msg):
			code = reason.VendorRateLimited
		case capMarked(msg):
			code = reason.VendorQuota
		}
		return "", nil, reason.New(code, "", reason.QuoteRemote(
			fmt.Sprintf("Keyless %s %s failed. Set %s to use your own key.", m.label, tool, m.keyEnv), clip(scrub(msg, m.key), 300)))
	}
	return text, structured, nil
}

func provider429(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "rate limit") || strings.Contains(m, "too many requests") || strings.Contains(m, "429")
}

func (m *mcpTool) failure(ctx context.Context, step string, rec *statusRecorder, err error) error {
	if rerr := reason.As(err); rerr != nil && rerr.Gate != "" {
		return reason.Wrap(rerr.Code, rerr.Gate, m.label+" MCP endpoint refused: "+rerr.Message, err)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return reason.Wrap(reason.Interrupted, "", "Keyless "+m.label+" call was cancelled.", err)
	}
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return reason.Wrap(reason.VendorTimeout, "", "Keyless "+m.label+" did not answer in time (timeout).", err)
	}
	st := int(rec.status.Load())
	msg := fmt.Sprintf("Keyless %s %s failed", m.label, step)
	if st >= 400 {
		msg += fmt.Sprintf(": HTTP %d %s", st, http.StatusText(st))
	}
	msg += ". Set " + m.keyEnv + " to use your own key."
	code := reason.VendorUnavailable
	switch {
	case st == 401 || st == 403:
		code = reason.VendorAuth
	case st == 402:
		code = reason.VendorQuota
	case st == 429:
		code = reason.VendorRateLimited
	case st >= 400 && st < 500:
		code = reason.VendorError
	case st >= 200 && st < 300:
		// The server answered 2xx but the SDK could not use the answer.
		code = reason.VendorBadResponse
		msg = reason.QuoteRemote(fmt.Sprintf("Keyless %s %s: the MCP answer could not be read. Set %s to use your own key.", m.label, step, m.keyEnv),
			clip(scrub(err.Error(), m.key), 200))
	}
	return reason.Wrap(code, "", msg, err)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// newSessionID returns a random hex id (Parallel's keyless session_id, one
// per process, spec §A5.1).
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
