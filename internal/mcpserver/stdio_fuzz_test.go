package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzCheckLine: for any line, checkLine either answers it with one
// JSON-RPC error line (valid JSON, code set, id member present) or passes on
// a line the SDK's reader accepts (jsonrpc.DecodeMessage of it or of each
// batch member succeeds), never both; so no line can end the session.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":3}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","method":5}`,
		`[]`, `[1]`, `}{`, `  {"jsonrpc":"2.0","method":"notifications/initialized"}  `,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, line []byte, after bool) {
		if i := bytes.IndexByte(line, '\n'); i >= 0 && i != len(line)-1 {
			return // filterLines splits at newlines: a line has at most a final one
		}
		st := &lineState{batchIDs: map[jsonrpc.ID]bool{}, pending: map[jsonrpc.ID]string{}}
		if after {
			st.version = "2025-06-18"
		}
		reply, pass := checkLine(line, st)
		if reply != nil && pass != nil {
			t.Fatalf("both a reply and a pass for %q", line)
		}
		if reply != nil {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if !bytes.HasSuffix(reply, []byte("\n")) || bytes.Count(reply, []byte("\n")) != 1 ||
				json.Unmarshal(reply, &m) != nil || m.JSONRPC != "2.0" || m.ID == nil || m.Error == nil || m.Error.Code == 0 {
				t.Fatalf("bad reply %q for %q", reply, line)
			}
		}
		if pass == nil {
			return
		}
		if bytes.ContainsAny(pass, "\n") || !json.Valid(pass) {
			t.Fatalf("passed %q", pass)
		}
		if pass[0] == '[' {
			if after {
				t.Fatalf("batch passed after 2025-06-18: %q", pass)
			}
			var batch []json.RawMessage
			if json.Unmarshal(pass, &batch) != nil || len(batch) == 0 {
				t.Fatalf("passed bad batch %q", pass)
			}
			for _, m := range batch {
				if _, err := jsonrpc.DecodeMessage(m); err != nil {
					t.Fatalf("passed batch member the SDK refuses: %q: %v", m, err)
				}
			}
			return
		}
		msg, err := jsonrpc.DecodeMessage(pass)
		if err != nil {
			t.Fatalf("passed a line the SDK refuses: %q: %v", pass, err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && bytes.Contains(pass, []byte(`"id"`)) && !req.IsCall() {
			var m map[string]json.RawMessage
			if json.Unmarshal(pass, &m) == nil && m["id"] != nil {
				t.Fatalf("a request with an id passed as a notification: %q", pass)
			}
		}
	})
}
