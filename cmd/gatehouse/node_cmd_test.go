package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
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
// own); SIGTERM stops the node with no Chromium left.
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

	node := exec.Command(bin, "browser-node", "--listen", "127.0.0.1:0", "--max-sessions", "2")
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

	u := startHTTP(t, bin, mcpHome(t))
	c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: u, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
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
	cs.Close()

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
