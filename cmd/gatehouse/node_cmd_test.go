package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

// TestBrowserNodeBehindMCPReplica: `gatehouse mcp --http` with
// GATEHOUSE_REDIS_URL places browser_navigate's session on a registered
// `gatehouse browser-node` (real processes, a redis-server of the test's
// own); with the node's one slot taken, another client's browser_navigate
// is browser_capacity with retry_after_s and the replica's /readyz answers
// 200 naming "no browser node has room" (advisory: the web tools still
// serve), until the session ends; SIGTERM stops
// the node with no Chromium left.
func TestBrowserNodeBehindMCPReplica(t *testing.T) {
	if _, err := os.Stat(backend.DefaultHeadlessShellPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium-headless-shell missing (CI=true)")
		}
		t.Skip("chromium-headless-shell missing")
	}
	rs := redistest.Start(t)
	t.Setenv("GATEHOUSE_REDIS_URL", rs.URL())
	t.Setenv("GATEHOUSE_NODE_TOKEN", "")
	bin := gatehouseBinary(t)
	page := testPage(t)

	node := exec.Command(bin, "browser-node", "--listen", "127.0.0.1:0", "--max-sessions", "1")
	node.Env = append(os.Environ(), "GATEHOUSE_HOME="+mcpHome(t))
	stderr, _ := node.StderrPipe()
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { node.Wait(); close(done) }()
	t.Cleanup(func() { node.Process.Kill(); <-done })
	ids := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "gatehouse browser-node "); ok {
				id, _, _ := strings.Cut(rest, " ")
				ids <- id
			}
		}
	}()
	var id string
	select {
	case id = <-ids:
	case <-done:
		t.Fatal("browser-node exited at start")
	case <-time.After(60 * time.Second):
		t.Fatal("browser-node did not start")
	}

	// Two principals: each has its own browser session.
	home := mcpHome(t)
	toks := filepath.Join(t.TempDir(), "tokens")
	line := func(name, tok string) string {
		h := sha256.Sum256([]byte(tok))
		return name + ":" + hex.EncodeToString(h[:]) + "\n"
	}
	if err := os.WriteFile(toks, []byte(line("alice", "tok-a")+line("bob", "tok-b")), 0o600); err != nil {
		t.Fatal(err)
	}
	u := startHTTP(t, bin, home, "--tokens", toks)
	c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	connect := func(tok string) *mcp.ClientSession {
		hc := &http.Client{Transport: bearer{tok: tok, rt: &http.Transport{}}}
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: u, DisableStandaloneSSE: true, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	cs := connect("tok-a")
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": page.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Success     bool   `json:"success"`
		Backend     string `json:"backend"`
		BrowserNode string `json:"browser_node"`
		Snapshot    string `json:"snapshot"`
	}
	text := res.Content[0].(*mcp.TextContent).Text
	json.Unmarshal([]byte(text), &v)
	if !v.Success || v.Backend != "node" || v.BrowserNode != id || !strings.Contains(v.Snapshot, "Gatehouse MCP test page") {
		t.Fatalf("browser_navigate through the replica = %s", text)
	}

	// The node's one slot is taken: the replica's /readyz says so (and stays
	// 200: it still serves the web tools), and another client's new session
	// is refused with browser_capacity.
	ready := func() (int, string) {
		ru, _ := url.Parse(u)
		ru.Path = "/readyz"
		hc := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
		defer hc.CloseIdleConnections()
		resp, err := hc.Get(ru.String())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := ready(); st != http.StatusOK || !strings.Contains(body, "ready; browser: no browser node has room") {
		t.Errorf("/readyz with every node full = %d %q, want 200 naming it", st, body)
	}
	cs2 := connect("tok-b")
	defer cs2.Close()
	res, err = cs2.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": page.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var refused struct {
		Success     bool   `json:"success"`
		Reason      string `json:"reason"`
		RetryAfterS int    `json:"retry_after_s"`
	}
	text = res.Content[0].(*mcp.TextContent).Text
	json.Unmarshal([]byte(text), &refused)
	if refused.Success || refused.Reason != "browser_capacity" || refused.RetryAfterS < 1 || !res.IsError {
		t.Errorf("browser_navigate with the node full = %s, want browser_capacity with retry_after_s", text)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "browser_close", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, body := ready()
		if st == http.StatusOK && body == "ready\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after the session ended = %d %q, want 200 \"ready\"", st, body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	pid := node.Process.Pid
	node.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("browser-node did not stop on SIGTERM")
	}
	if rs.Do("EXISTS", "gatehouse:browser-node:"+id) != ":0" {
		t.Error("the node's record survived SIGTERM")
	}
	if left := backend.MarkedProcesses(pid); len(left) > 0 {
		t.Errorf("Chromium left after the node's SIGTERM: %v", left)
	}
}

// bearer sends a principal's token (gatehouse mcp --tokens).
type bearer struct {
	tok string
	rt  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.rt.RoundTrip(r)
}

// A browser node refuses to start without Redis, and on an address that is
// not loopback without a node token.
func TestBrowserNodeRefusesToStart(t *testing.T) {
	t.Setenv("GATEHOUSE_REDIS_URL", "")
	t.Setenv("GATEHOUSE_NODE_TOKEN", "")
	if code, _, errs := cli(t, t.TempDir(), "browser-node", "--listen", "127.0.0.1:0"); code == 0 || !strings.Contains(errs, "GATEHOUSE_REDIS_URL") {
		t.Errorf("without Redis: exit %d: %s", code, errs)
	}
	if code, _, errs := cli(t, t.TempDir(), "browser-node"); code != 2 || !strings.Contains(errs, "--listen") {
		t.Errorf("without --listen: exit %d: %s", code, errs)
	}
	t.Setenv("GATEHOUSE_REDIS_URL", "redis://127.0.0.1:1/0")
	if code, _, errs := cli(t, t.TempDir(), "browser-node", "--listen", "0.0.0.0:0"); code == 0 || !strings.Contains(errs, "GATEHOUSE_NODE_TOKEN") {
		t.Errorf("non-loopback without a token: exit %d: %s", code, errs)
	}
}

// breaker10 F4: browser-node refuses out-of-range flags as usage_error
// naming the range (it used to run with a capacity nobody asked for), and
// a missing GATEHOUSE_REDIS_URL is a usage_error too.
func TestBrowserNodeFlagsChecked(t *testing.T) {
	t.Setenv("GATEHOUSE_REDIS_URL", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-sessions", "-3"}, "--max-sessions -3 is outside 1–"},
		{[]string{"--max-sessions", "100000"}, "--max-sessions 100000 is outside 1–"},
		{[]string{"--spares", "-1"}, "0 or more"},
		{[]string{"--spares", "5", "--max-spares", "2"}, "--spares 5 is above --max-spares 2"},
		{nil, "GATEHOUSE_REDIS_URL"},
	} {
		code, _, errs := cli(t, t.TempDir(), append([]string{"browser-node", "--listen", "127.0.0.1:0"}, c.args...)...)
		if code != 2 || !strings.HasPrefix(errs, "FAILED [usage_error]: ") || !strings.Contains(errs, c.want) {
			t.Errorf("browser-node %v: exit %d, %q; want usage_error naming %q", c.args, code, errs, c.want)
		}
	}
}
