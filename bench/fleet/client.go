package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sharedTransport carries every client's requests (one connection pool, as
// an agent host would have); never a proxy from the environment.
var sharedTransport = &http.Transport{Proxy: nil, MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second}

// Client opens MCP sessions as one principal with the Go SDK's streamable
// HTTP client. Version "" lets the SDK choose (2026-07-28, sessionless, when
// the server answers server/discover; else the session flow of 2025-11-25).
type Client struct {
	Endpoint  string
	Principal Principal
	Version   string
	// Answered429 counts HTTP 429 answers the client waited out
	// (Retry-After) and sent again; may be nil.
	Answered429 *atomic.Int64

	last atomic.Pointer[HTTPFailure]
}

// HTTPFailure is an HTTP error answer (status ≥ 400, not a 429 waited out)
// as the server sent it: the SDK reports only the status text, while
// Gatehouse puts the reason code in the JSON-RPC error's data.
type HTTPFailure struct {
	Status int
	Body   string
}

// Reason returns the reason code and message of the JSON-RPC error in the
// body (error.data.reason, error.message); "" when there is none.
func (h *HTTPFailure) Reason() (code, msg string) {
	var v struct {
		Error struct {
			Message string `json:"message"`
			Data    struct {
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	json.Unmarshal([]byte(h.Body), &v)
	return v.Error.Data.Reason, v.Error.Message
}

// LastHTTPFailure returns the last HTTP error answer this client's sessions
// received, or nil.
func (c *Client) LastHTTPFailure() *HTTPFailure { return c.last.Load() }

// Connect opens a session. The SDK's own reconnects are off
// (MaxRetries -1): a failed call is the caller's to retry.
func (c *Client) Connect(ctx context.Context) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: &bearer{token: c.Principal.Token, base: sharedTransport, n429: c.Answered429, last: &c.last}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench-fleet", Version: "1"}, nil)
	var opts *mcp.ClientSessionOptions
	if c.Version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: c.Version}
	}
	return cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.Endpoint, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, opts)
}

// bearer adds the principal's token to every request and waits out an
// HTTP 429 (a replica at its call cap, mcp.replica_max_calls, or a
// principal over its limits: Retry-After, at most 5 s per wait) before
// sending the request again, as a client honouring Retry-After does, for
// as long as the request's context allows.
type bearer struct {
	token string
	base  http.RoundTripper
	n429  *atomic.Int64
	last  *atomic.Pointer[HTTPFailure]
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
		if attempt > 0 {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		resp, err := b.base.RoundTrip(r)
		if err == nil && resp.StatusCode >= 400 && resp.StatusCode != http.StatusTooManyRequests && b.last != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			b.last.Store(&HTTPFailure{Status: resp.StatusCode, Body: string(body)})
		}
		if err != nil || resp.StatusCode != http.StatusTooManyRequests || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		wait := time.Second
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			wait = time.Duration(s) * time.Second
		}
		wait = min(max(wait, 50*time.Millisecond), 5*time.Second)
		resp.Body.Close()
		if b.n429 != nil {
			b.n429.Add(1)
		}
		select {
		case <-time.After(wait):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

// callTool calls a tool and returns the text of its result (the tool's JSON).
// err is a protocol or transport failure; a tool's own refusal is a result.
func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, nil
		}
	}
	return "", fmt.Errorf("%s: result without text content", name)
}

// ExtractOut is web_extract's result, the fields the fleet reads.
type ExtractOut struct {
	Success *bool  `json:"success"`
	Error   string `json:"error"`
	Reason  string `json:"reason"`
	Results []struct {
		URL     string  `json:"url"`
		Content string  `json:"content"`
		Error   *string `json:"error"`
		Reason  string  `json:"reason"`
		Meta    *struct {
			Cached     bool   `json:"cached"`
			Truncated  bool   `json:"truncated"`
			StoredPath string `json:"stored_path"`
		} `json:"meta"`
	} `json:"results"`
}

// failure returns the first result row's outcome: "" when it succeeded, else its
// reason code (or the whole call's).
func (o *ExtractOut) failure() string {
	if o.Success != nil && !*o.Success {
		return orStr(o.Reason, "refused")
	}
	if len(o.Results) == 0 {
		return "no_results"
	}
	if r := o.Results[0]; r.Error != nil {
		return orStr(r.Reason, "error")
	}
	return ""
}

// ReadOut is web_read's result.
type ReadOut struct {
	Success *bool  `json:"success"`
	Error   string `json:"error"`
	Reason  string `json:"reason"`
	Content string `json:"content"`
	Lines   int    `json:"lines"`
}

func (o *ReadOut) failure() string {
	if o.Success != nil && !*o.Success {
		return orStr(o.Reason, "refused")
	}
	if o.Lines == 0 || o.Content == "" {
		return "empty_read"
	}
	return ""
}

// SearchOut is web_search's result.
type SearchOut struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Reason  string `json:"reason"`
	Data    *struct {
		Web []struct {
			URL string `json:"url"`
		} `json:"web"`
	} `json:"data"`
	Meta *struct {
		Cached bool `json:"cached"`
	} `json:"meta"`
}

func (o *SearchOut) failure() string {
	if !o.Success {
		return orStr(o.Reason, "refused")
	}
	if o.Data == nil || len(o.Data.Web) == 0 {
		return "no_rows"
	}
	return ""
}

func orStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// decode parses a tool's JSON text into out; a result that is not JSON is
// reported with its first characters.
func decode(text string, out any) error {
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return fmt.Errorf("result is not the tool's JSON (%v): %.200s", err, strings.TrimSpace(text))
	}
	return nil
}
