package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewLineTransport returns a newline-delimited JSON-RPC transport over r and
// w (mcp.IOTransport) that survives bad input lines. The SDK's IOTransport
// ends the session on the first line that is not JSON or not a JSON-RPC
// message; JSON-RPC 2.0 §5 and §6 ask for an error reply instead. So each
// line is checked before it reaches the SDK:
//
//   - not valid JSON → {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}};
//   - JSON but not a JSON-RPC message (or an empty batch "[]") →
//     code -32600 "Invalid Request", with the line's id when it has one;
//   - blank lines are skipped; every other line is passed on unchanged.
//
// Replies are written to w between the SDK's own writes (one Write per
// line), never interleaved. Neither r nor w is closed.
func NewLineTransport(r io.Reader, w io.Writer) mcp.Transport {
	sw := &syncWriter{w: w}
	pr, pw := io.Pipe()
	go filterLines(r, pw, sw)
	return &mcp.IOTransport{Reader: pr, Writer: sw}
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

// filterLines copies the valid lines of r to pw and answers the others on
// w; it closes pw when r ends (EOF for the SDK, which ends the session).
func filterLines(r io.Reader, pw *io.PipeWriter, w io.Writer) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if reply := checkLine(line); reply != nil {
				if _, werr := w.Write(reply); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else if len(bytes.TrimSpace(line)) > 0 {
				if line[len(line)-1] != '\n' {
					line = append(line, '\n')
				}
				if _, werr := pw.Write(line); werr != nil {
					return // the session closed its end
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				pw.Close()
			} else {
				pw.CloseWithError(err)
			}
			return
		}
	}
}

// checkLine returns the error reply for a line the SDK would reject, nil for
// a line to pass on (or a blank one). Lines longer than
// mcp.DefaultMaxLineLength are passed on for the SDK to refuse.
func checkLine(line []byte) []byte {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || len(line) > mcp.DefaultMaxLineLength {
		return nil
	}
	if !json.Valid(t) {
		return errorReply(nil, jsonrpc.CodeParseError, "Parse error")
	}
	if t[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) != nil || len(batch) == 0 {
			return errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request")
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request")
			}
		}
		return nil
	}
	if _, err := jsonrpc.DecodeMessage(t); err != nil {
		return errorReply(lineID(t), jsonrpc.CodeInvalidRequest, "Invalid Request")
	}
	return nil
}

// lineID is the line's "id" when it is a string or a number, else nil
// (JSON-RPC 2.0 §5: null when it cannot be determined).
func lineID(t []byte) any {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(t, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var id any
	if json.Unmarshal(m.ID, &id) != nil {
		return nil
	}
	switch id.(type) {
	case string, float64:
		return json.RawMessage(m.ID)
	}
	return nil
}

func errorReply(id any, code int64, msg string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}
