package main

import (
	"bufio"
	"encoding/json"
	"fmt"
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

// stdioProc is a running `gatehouse mcp` over stdio: send writes one line,
// next reads one reply line as JSON.
type stdioProc struct {
	t      *testing.T
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
	cmd    *exec.Cmd
}

func startStdio(t *testing.T) *stdioProc {
	t.Helper()
	bin := gatehouseBinary(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+mcpHome(t))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	p := &stdioProc{t: t, stdin: stdin, lines: make(chan string, 16), stderr: &lockedBuffer{}, cmd: cmd}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 32<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p
}

func (p *stdioProc) send(s string) {
	if _, err := io.WriteString(p.stdin, s+"\n"); err != nil {
		p.t.Fatalf("write %.80q: %v; stderr:\n%s", s, err, p.stderr.String())
	}
}

func (p *stdioProc) next(what string) map[string]any {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("%s: stdout closed (the session ended); stderr:\n%s", what, p.stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			p.t.Fatalf("%s: reply is not a JSON object: %.300q", what, l)
		}
		return m
	case <-time.After(30 * time.Second):
		p.t.Fatalf("%s: no reply; stderr:\n%s", what, p.stderr.String())
	}
	return nil
}

// wantRPCError checks a JSON-RPC error reply's code and id (nil for null).
func wantRPCError(t *testing.T, m map[string]any, what string, code float64, id any) map[string]any {
	t.Helper()
	e, _ := m["error"].(map[string]any)
	if m["jsonrpc"] != "2.0" || e == nil || e["code"] != code || m["id"] != id {
		t.Fatalf("%s: got %v, want error code %v id %v", what, m, code, id)
	}
	if _, ok := m["id"]; !ok {
		t.Fatalf("%s: reply has no id member (JSON-RPC 2.0 §5 requires it, null when unknown): %v", what, m)
	}
	return e
}

// initLine is an initialize request for protocol version pv with id id.
func initLine(id int, pv string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, id, pv)
}

// TestMCPStdioNothingEndsTheSession drives the built binary with what the
// SDK's transport would end the session on, or answer wrongly, and checks
// each gets a JSON-RPC error reply with a standard code while the session
// goes on (a ping after each is answered): a batch after initialize in
// 2025-06-18 and in a version that negotiates 2025-11-25, a 17 MiB line
// (streamed and dropped), a message without method, ids null and 1.5,
// deep nesting, a method before initialize, a second initialize.
func TestMCPStdioNothingEndsTheSession(t *testing.T) {
	for _, pv := range []string{"2025-06-18", "2099-01-01"} {
		t.Run(pv, func(t *testing.T) {
			p := startStdio(t)
			ping := func(id int) {
				t.Helper()
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
				if m := p.next("ping"); m["id"] != float64(id) || m["result"] == nil {
					t.Fatalf("ping %d: %v", id, m)
				}
			}
			// Before initialize: a call other than ping is an Invalid Request.
			p.send(`{"jsonrpc":"2.0","id":90,"method":"tools/list"}`)
			e := wantRPCError(t, p.next("tools/list before initialize"), "tools/list before initialize", -32600, 90.0)
			if !strings.Contains(e["message"].(string), "initialize") {
				t.Fatalf("message does not name the fix: %v", e)
			}
			p.send(initLine(1, pv))
			m := p.next("initialize")
			res, _ := m["result"].(map[string]any)
			if res == nil || (pv == "2099-01-01" && res["protocolVersion"] != "2025-11-25") {
				t.Fatalf("initialize: %v", m)
			}
			p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			ping(2)

			p.send(`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
			e = wantRPCError(t, p.next("batch"), "batch", -32600, nil)
			if !strings.Contains(e["message"].(string), "batch") {
				t.Fatalf("batch message: %v", e)
			}
			ping(4)

			// 17 MiB of params: more than the 16 MiB line cap.
			big := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"` + strings.Repeat("x", 17<<20) + `"}}`
			// Written from another goroutine: the server reads while the pipe
			// fills. The write's error comes back here, since only the test's
			// own goroutine may call t.Fatal.
			wrote := make(chan error, 1)
			go func() {
				_, err := io.WriteString(p.stdin, big+"\n")
				wrote <- err
			}()
			e = wantRPCError(t, p.next("17 MiB line"), "17 MiB line", -32600, nil)
			if !strings.Contains(e["message"].(string), "16777216") {
				t.Fatalf("cap not named: %v", e)
			}
			// The rest of the line is read and dropped before the next one.
			if err := <-wrote; err != nil {
				t.Fatalf("write 17 MiB line: %v; stderr:\n%s", err, p.stderr.String())
			}
			ping(6)

			p.send(`{"jsonrpc":"2.0","id":7}`)
			wantRPCError(t, p.next("no method"), "no method", -32600, 7.0)
			p.send(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
			wantRPCError(t, p.next("id 1.5"), "id 1.5", -32600, nil)
			p.send(`{"jsonrpc":"2.0","id":null,"method":"ping"}`)
			wantRPCError(t, p.next("id null"), "id null", -32600, nil)
			p.send(`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`)
			wantRPCError(t, p.next("id 1e400"), "id 1e400", -32600, nil)
			p.send(`{"jsonrpc":"2.0","id":8,"method":"ping","params":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}`)
			wantRPCError(t, p.next("deep nesting"), "deep nesting", -32600, nil)
			p.send(`   {"jsonrpc":"2.0","id":9,"method":"ping"}   `)
			if m := p.next("padded line"); m["id"] != 9.0 || m["result"] == nil {
				t.Fatalf("padded line: %v", m)
			}
			p.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`) // dropped: never answer a response
			p.send(`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":"nope"}`)
			wantRPCError(t, p.next("params not an object"), "params not an object", -32602, "s")
			p.send(initLine(10, pv))
			wantRPCError(t, p.next("second initialize"), "second initialize", -32600, 10.0)
			ping(11)
			if s := p.stderr.String(); strings.Contains(s, "batching") || strings.Contains(s, "exceeded") {
				t.Fatalf("server reported a fatal transport error:\n%s", s)
			}
		})
	}
}

// TestMCPStdioBatch2025_03_26: in a 2025-03-26 session a batch is still
// served (that version has JSON-RPC batching) and answered as an array; a
// batch repeating an id is refused without ending the session.
func TestMCPStdioBatch2025_03_26(t *testing.T) {
	p := startStdio(t)
	p.send(initLine(1, "2025-03-26"))
	if m := p.next("initialize"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	wantRPCError(t, p.next("repeated id"), "repeated id", -32600, nil)
	p.send(`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`)
	select {
	case l := <-p.lines:
		var arr []map[string]any
		if err := json.Unmarshal([]byte(l), &arr); err != nil || len(arr) != 2 {
			t.Fatalf("batch reply: %q", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no batch reply")
	}
}
