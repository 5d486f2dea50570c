package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes caps one stdio message (one line, not counting its line
// ending) in bytes: the SDK's mcp.DefaultMaxLineLength, 16 MiB. A longer
// line is read through and discarded without being buffered whole, and
// answered with an Invalid Request error.
const MaxLineBytes = mcp.DefaultMaxLineLength

// maxDepth bounds the nesting of a message (objects and arrays). The SDK's
// decoder refuses more than 1000 levels by ending the session, so deeper
// lines are answered here instead.
const maxDepth = 512

// NewLineTransport returns the stdio transport of MCP (2025-06-18 and
// 2025-11-25 basic/transports §stdio: newline-delimited JSON-RPC messages)
// over r and w, built on the SDK's mcp.IOTransport. Nothing a client sends
// ends the session; only the end of r (or a failed write to w) does, once
// the calls already read are answered (at most DrainTimeout later). The
// SDK's transport ends the session on the first line it cannot use
// (malformed JSON, a message that is not JSON-RPC, a batch in protocol
// 2025-06-18 or later, a line over 16 MiB, an id it cannot represent);
// JSON-RPC 2.0 §5 and §6 ask for an error reply instead. So each line is
// checked before it reaches the SDK, and answered when it would not be
// usable:
//
//   - not valid JSON → -32700 "Parse error", id null;
//   - longer than MaxLineBytes → -32600, id null, message naming the cap
//     (the line is streamed through and dropped, never held in memory);
//   - JSON but not a JSON-RPC 2.0 request, notification or response → -32600
//     "Invalid Request" with the line's id when it has a valid one, else id
//     null. That includes a request without "method" that is no response
//     either ({"jsonrpc":"2.0","id":3}), a request with "id":null (JSON-RPC
//     2.0 §4: null ids are discouraged and the SDK would run it as a
//     notification, so no reply would ever come), and an id that is not a
//     string or an integer (1.5 would be echoed as 1; §4 says numbers SHOULD
//     NOT contain fractional parts);
//   - a batch (JSON array) once the session negotiated 2025-06-18 or later
//     (MCP 2025-06-18 changelog: JSON-RPC batching removed) → -32600, id
//     null; the version is known from the initialize request (as the SDK
//     negotiates it, expectedVersion), so a batch sent before the answer
//     or before notifications/initialized is refused too; an empty batch, a batch with an invalid member or a repeated id
//     → -32600, id null (the whole batch is refused with one reply). Batches
//     in 2025-03-26 sessions are passed on and answered as a batch;
//   - a call to initialize, tools/call or resources/read whose params are
//     missing, null, or hold a field of the wrong type → -32602 "Invalid
//     params" naming the field and the JSON type expected (checkParams);
//   - a response whose id is null or missing is dropped (JSON-RPC 2.0 §5: a
//     response is never answered);
//   - blank lines are skipped; a line with leading or trailing blanks is
//     passed on trimmed; every other line is passed on unchanged.
//
// Errors the SDK sends with code 0 (a method before initialize, a second
// initialize, undecodable params) are given a standard code on the way out
// (rpcError). Replies are written to w between the SDK's own writes (one
// Write per line), never interleaved. Neither r nor w is closed.
func NewLineTransport(r io.Reader, w io.Writer) mcp.Transport {
	return &lineTransport{r: r, w: w}
}

type lineTransport struct {
	r io.Reader
	w io.Writer
}

// Connect starts the line filter and connects the SDK's IOTransport to its
// output.
func (t *lineTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	sw := &syncWriter{w: t.w}
	pr, pw := io.Pipe()
	// The filter enforces MaxLineBytes itself; the SDK's cap is set above it
	// so that it can never be the one to end the session.
	inner, err := (&mcp.IOTransport{Reader: pr, Writer: sw, MaxLineLength: 2 * MaxLineBytes}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	st := &lineState{batchIDs: map[jsonrpc.ID]bool{}, pending: map[jsonrpc.ID]string{}, cancelled: map[jsonrpc.ID]bool{}}
	go filterLines(t.r, pw, sw, st)
	return &lineConn{Connection: inner, st: st, w: sw}, nil
}

// lineState is what the filter and the connection share: the negotiated
// protocol version, the ids of batch calls not yet answered, and the method
// of every call not yet answered.
type lineState struct {
	mu          sync.Mutex
	initID      jsonrpc.ID // id of the first initialize call
	initSeen    bool
	initialized bool   // initialize answered with a result
	version     string // negotiated protocol version ("" before initialize)
	// requested is the version the first initialize request will
	// negotiate (expectedVersion), known as soon as the filter reads it,
	// before the SDK answers: lines that follow it are judged by it.
	requested  string
	batchIDs   map[jsonrpc.ID]bool
	pending    map[jsonrpc.ID]string // call id → method
	cancelled  map[jsonrpc.ID]bool   // pending calls the client cancelled
	inputEnded bool                  // the client closed its end (EOF on r)
	closed     bool                  // the connection was closed (session end)
}

// DrainTimeout bounds how long the line transport, once the client closed
// its input, waits for the replies of calls still running before it ends
// the session (each tool bounds its own work well within it: fetches,
// browser commands and vendor calls have their own timeouts).
const DrainTimeout = 3 * time.Minute

// drainPoll is how often the drain looks at the calls still running.
const drainPoll = 10 * time.Millisecond

func (st *lineState) protocolVersion() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.version == "" {
		return st.requested
	}
	return st.version
}

// legacyInit is the first protocol version without the initialize
// handshake (the SDK answers initialize with an older one).
const legacyInit = "2026-07-28"

// expectedVersion is the version an initialize request asking for
// requested negotiates (MCP basic/lifecycle §Version Negotiation, as the
// SDK does it): requested when the SDK supports it, else the newest
// version it supports that has the initialize handshake.
func expectedVersion(requested string) string {
	supported := mcp.SupportedProtocolVersions()
	if slices.Contains(supported, requested) && requested < legacyInit {
		return requested
	}
	for _, v := range supported {
		if v < legacyInit {
			return v
		}
	}
	return requested
}

// sawInitialize records the version the first initialize request (line t)
// will negotiate, so that a batch sent before its answer is judged by it
// (breaker7 D15).
func (st *lineState) sawInitialize(t []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(t, &m) != nil || m.Method != "initialize" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.requested == "" && !st.initialized {
		st.requested = expectedVersion(m.Params.ProtocolVersion)
	}
}

// lineConn is the SDK's connection with the bookkeeping of lineState: it
// learns the negotiated version from the initialize result it writes, and
// gives code-0 errors a standard code.
type lineConn struct {
	mcp.Connection
	st *lineState
	w  io.Writer // for replies the SDK would not send
}

// Read returns the next message for the session. A call whose id is that of
// a call still in flight is answered here with -32600, id null (JSON-RPC
// 2.0 §4: the id identifies one request; replying with it would be read as
// the answer to the first one), because the SDK drops it without a reply.
//
// When the client has closed its input, the end of input is reported to the
// SDK (which ends the session) only once every call read is answered, or
// after DrainTimeout: a client that writes its calls and closes stdin still
// gets every reply (breaker7 D14).
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.drain(ctx)
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if ok && req.Method == "notifications/cancelled" {
			c.forget(req.Params)
		}
		if !ok || !req.IsCall() {
			return msg, err
		}
		c.st.mu.Lock()
		_, dup := c.st.pending[req.ID]
		if !dup {
			c.st.pending[req.ID] = req.Method
			if req.Method == "initialize" && !c.st.initSeen {
				c.st.initSeen, c.st.initID = true, req.ID
			}
		}
		c.st.mu.Unlock()
		if !dup {
			return msg, nil
		}
		b, _ := json.Marshal(req.ID.Raw())
		if _, err := c.w.Write(errorReply(nil, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("Invalid Request: id %s is already in use by a request in flight; give each request its own id", b), nil)); err != nil {
			return nil, err
		}
	}
}

// forget marks the call a notifications/cancelled names as one a drain
// does not wait for: the SDK may send no reply (MCP
// basic/utilities/cancellation). It stays pending (its id in use) until
// answered.
func (c *lineConn) forget(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	c.st.mu.Lock()
	if _, ok := c.st.pending[id]; ok {
		c.st.cancelled[id] = true
	}
	c.st.mu.Unlock()
}

// drain waits, when the client's input ended (not when the session is being
// closed), until no call read is unanswered, at most DrainTimeout or until
// ctx ends.
func (c *lineConn) drain(ctx context.Context) {
	deadline := time.Now().Add(DrainTimeout)
	for {
		c.st.mu.Lock()
		wait := c.st.inputEnded && !c.st.closed && len(c.st.pending) > len(c.st.cancelled)
		c.st.mu.Unlock()
		if !wait || time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(drainPoll):
		}
	}
}

// Close marks the connection closed (a drain in progress stops) and closes
// the SDK's connection.
func (c *lineConn) Close() error {
	c.st.mu.Lock()
	c.st.closed = true
	c.st.mu.Unlock()
	return c.Connection.Close()
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	c.st.mu.Lock()
	method := c.st.pending[resp.ID]
	delete(c.st.pending, resp.ID)
	delete(c.st.cancelled, resp.ID)
	if c.st.initSeen && !c.st.initialized && resp.ID == c.st.initID && resp.Error != nil {
		c.st.requested = "" // refused: the next initialize negotiates
	}
	if c.st.initSeen && !c.st.initialized && resp.ID == c.st.initID && resp.Error == nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &r) == nil {
			c.st.initialized, c.st.version = true, r.ProtocolVersion
		}
	}
	initialized := c.st.initialized
	c.st.mu.Unlock()
	if resp.Error != nil {
		if e := rpcError(method, initialized, resp.Error); e != resp.Error {
			cp := *resp
			cp.Error = e
			resp = &cp
		}
	}
	err := c.Connection.Write(ctx, resp)
	// Forget a batch id only once the SDK has, so the filter never lets a
	// repeated id through to the SDK (which would end the session).
	c.st.mu.Lock()
	delete(c.st.batchIDs, resp.ID)
	c.st.mu.Unlock()
	return err
}

// rpcError returns err with a standard JSON-RPC 2.0 code (§5.1) when it has
// none (code 0, which the SDK sends for some of its own refusals): -32600
// Invalid Request for a call before initialize (MCP basic/lifecycle: only
// ping may precede it) or a repeated initialize, -32602 Invalid params for
// params the SDK could not decode, else -32603 Internal error. An error that
// carries a code is returned unchanged.
func rpcError(method string, initialized bool, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		return err
	}
	msg := err.Error()
	code := int64(jsonrpc.CodeInternalError)
	switch {
	case method == "initialize" && initialized:
		code = jsonrpc.CodeInvalidRequest
		msg += ": the session is already initialized (MCP basic/lifecycle: initialize is sent once)"
	case !initialized && method != "initialize" && method != "ping":
		code = jsonrpc.CodeInvalidRequest
		msg += ": send initialize first (MCP basic/lifecycle: only ping may precede it)"
	case strings.HasPrefix(msg, "handling '"):
		code = jsonrpc.CodeInvalidParams
	}
	out := &jsonrpc.Error{Code: code, Message: msg}
	if we != nil {
		out.Data = we.Data
	}
	return out
}

// syncWriter serializes writes of the SDK and of filterLines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) Close() error { return nil }

// filterLines copies the usable lines of r to pw and answers the others on
// w; it closes pw when r ends (EOF for the SDK, which ends the session). A
// line is read in chunks: past MaxLineBytes the rest of it is read and
// dropped, so memory stays bounded by the cap.
func filterLines(r io.Reader, pw *io.PipeWriter, w io.Writer, st *lineState) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(line)+len(bytes.TrimRight(chunk, "\r\n")) > MaxLineBytes {
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		var reply, pass []byte
		if over {
			reply = errorReply(nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Invalid Request: line longer than %d bytes (16 MiB), the stdio message cap; it was discarded", MaxLineBytes),
				map[string]any{"max_line_bytes": MaxLineBytes})
		} else {
			reply, pass = checkLine(line, st)
		}
		if reply != nil {
			if _, werr := w.Write(reply); werr != nil {
				pw.CloseWithError(werr)
				return
			}
		}
		if pass != nil {
			if _, werr := pw.Write(append(pass, '\n')); werr != nil {
				return // the session closed its end
			}
		}
		over = false
		if cap(line) > 1<<20 {
			line = nil // do not keep a 16 MiB buffer for the next short lines
		} else {
			line = line[:0]
		}
		if err != nil {
			st.mu.Lock()
			st.inputEnded = true
			st.mu.Unlock()
			if errors.Is(err, io.EOF) {
				pw.Close()
			} else {
				pw.CloseWithError(err)
			}
			return
		}
	}
}

// checkLine decides one line (at most MaxLineBytes): the error reply to
// write, or the trimmed line to pass on to the SDK; both nil for a blank
// line or a dropped response.
func checkLine(line []byte, st *lineState) (reply, pass []byte) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil, nil
	}
	if !json.Valid(t) {
		return errorReply(nil, jsonrpc.CodeParseError, "Parse error", nil), nil
	}
	if depth(t) > maxDepth {
		return errorReply(nil, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("Invalid Request: JSON nested deeper than %d levels", maxDepth), nil), nil
	}
	if t[0] != '[' {
		id, why := checkMessage(t)
		switch {
		case why == dropResponse:
			return nil, nil
		case why != "":
			return errorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+why, nil), nil
		}
		if msg := checkParams(t); msg != "" {
			return errorReply(id, jsonrpc.CodeInvalidParams, msg, nil), nil
		}
		st.sawInitialize(t)
		return nil, t
	}
	if v := st.protocolVersion(); v >= noBatches {
		return errorReply(nil, jsonrpc.CodeInvalidRequest, batchRefusal(v, "line"), nil), nil
	}
	var batch []json.RawMessage
	if json.Unmarshal(t, &batch) != nil || len(batch) == 0 {
		return errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: empty batch", nil), nil
	}
	ids := map[jsonrpc.ID]bool{}
	for i, m := range batch {
		if _, why := checkMessage(m); why != "" {
			if why == dropResponse {
				why = "a response without an id"
			}
			return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: batch member %d: %s", i, why), nil), nil
		}
		msg, _ := jsonrpc.DecodeMessage(m)
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if ids[req.ID] {
				return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: batch member %d repeats id %v", i, req.ID.Raw()), nil), nil
			}
			ids[req.ID] = true
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for id := range ids {
		if st.batchIDs[id] {
			return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: id %v is still in use by an earlier batch", id.Raw()), nil), nil
		}
	}
	for id := range ids {
		st.batchIDs[id] = true
	}
	return nil, t
}

// noBatches is the first protocol version without JSON-RPC batches (MCP
// 2025-06-18 changelog).
const noBatches = "2025-06-18"

// batchRefusal is the message of the -32600 error answering a batch in a
// session of protocol v (≥ noBatches); unit names what carries one message
// ("line", "POST").
func batchRefusal(v, unit string) string {
	return "Invalid Request: JSON-RPC batching is not supported in protocol " + v + " (removed in MCP 2025-06-18); send one message per " + unit
}

// dropResponse is checkMessage's verdict for a response that cannot be
// matched (id null or missing): JSON-RPC 2.0 never answers a response.
const dropResponse = "\x00drop"

// checkMessage validates one JSON-RPC 2.0 message (§4 request and
// notification, §5 response) and returns its id (for the reply; nil when
// missing or invalid) and why it is not a valid message ("" when it is, or
// dropResponse).
func checkMessage(raw []byte) (id any, why string) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "not a JSON object"
	}
	rawID, hasID := m["id"]
	idOK := false
	if hasID {
		id, idOK = validID(rawID)
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return id, `"jsonrpc" must be "2.0"`
	}
	_, hasMethod := m["method"]
	switch {
	case hasMethod && hasID && !idOK && string(bytes.TrimSpace(rawID)) == "null":
		return nil, `"id" must not be null (JSON-RPC 2.0 §4); omit it for a notification`
	case hasMethod && hasID && !idOK:
		return nil, `"id" must be a string or an integer (JSON-RPC 2.0 §4)`
	case !hasMethod:
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if !hasResult && !hasError {
			return id, `"method" is missing (a request needs one; a response needs "result" or "error")`
		}
		if hasResult && hasError {
			return id, `a response has "result" or "error", not both`
		}
		if !idOK {
			return nil, dropResponse // id null (§5: the request was unreadable), missing or invalid
		}
	}
	if _, err := jsonrpc.DecodeMessage(raw); err != nil {
		return id, err.Error()
	}
	return id, ""
}

// validID reports whether raw is a usable id: a string, or an integer that
// fits in 64 bits (JSON-RPC 2.0 §4). It returns the id as it appears on the
// line (echoed unchanged in the reply).
func validID(raw json.RawMessage) (any, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return json.RawMessage(raw), true
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
		return nil, false
	}
	return json.RawMessage(raw), true
}

// depth returns the deepest nesting of objects and arrays in valid JSON t.
func depth(t []byte) int {
	d, max := 0, 0
	inStr, esc := false, false
	for _, b := range t {
		if inStr {
			switch {
			case esc:
				esc = false
			case b == '\\':
				esc = true
			case b == '"':
				inStr = false
			}
			continue
		}
		switch b {
		case '"':
			inStr = true
		case '{', '[':
			if d++; d > max {
				max = d
			}
		case '}', ']':
			d--
		}
	}
	return max
}

// errorReply is one JSON-RPC 2.0 error response line (§5.1); data is
// omitted when nil.
func errorReply(id any, code int64, msg string, data any) []byte {
	type rpcErr struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   rpcErr `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: rpcErr{code, msg, data}})
	return append(b, '\n')
}
