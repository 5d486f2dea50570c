package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMCPStdioBadLines: over stdio a line that is not JSON gets the JSON-RPC
// 2.0 Parse error reply (id null), one that is JSON but no JSON-RPC message
// gets Invalid Request, and the session goes on: initialize and tools/list
// sent after them are answered (the SDK's own transport would close on the
// first bad line).
func TestMCPStdioBadLines(t *testing.T) {
	bin := gatehouseBinary(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+mcpHome(t))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr lockedBuffer // written by the process's stderr copier while the test reads it
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) { io.WriteString(stdin, s+"\n") }
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s: stdout closed; stderr:\n%s", what, stderr.String())
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s: reply is not JSON: %q", what, l)
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no reply; stderr:\n%s", what, stderr.String())
		}
		return nil
	}
	parseErr := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`
	wantErr := func(m map[string]any, what string, code float64, id any) {
		t.Helper()
		e, _ := m["error"].(map[string]any)
		if m["jsonrpc"] != "2.0" || e == nil || e["code"] != code || m["id"] != id {
			t.Fatalf("%s: got %v", what, m)
		}
	}

	send("garbage")
	wantErr(next("garbage"), "garbage", -32700, nil)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next("initialize"); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"half": `)
	wantErr(next("truncated JSON"), "truncated JSON", -32700, nil)
	send(`{"id":7}`)
	wantErr(next("not JSON-RPC"), "not JSON-RPC", -32600, 7.0)
	send("[]")
	wantErr(next("empty batch"), "empty batch", -32600, nil)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	m := next("tools/list")
	res, _ := m["result"].(map[string]any)
	if tl, _ := res["tools"].([]any); m["id"] != 2.0 || len(tl) < 3 {
		t.Fatalf("tools/list: %v", m)
	}
	// The exact Parse error line, as JSON-RPC 2.0 §5.1 shows it.
	send("}{")
	select {
	case l := <-lines:
		if l != parseErr {
			t.Fatalf("parse error line %q, want %q", l, parseErr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no reply to }{")
	}
	if strings.Contains(stderr.String(), "invalid character") {
		t.Fatalf("server reported a fatal parse error:\n%s", stderr.String())
	}
}
