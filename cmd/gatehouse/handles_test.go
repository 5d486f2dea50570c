package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/state/redistest"
)

// proc is a gatehouse process a test started: SIGKILL or SIGTERM it, wait
// for it with done.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// startProc runs bin with args (GATEHOUSE_HOME home) and returns it once a
// stderr line matches re (its first group is returned).
func startProc(t *testing.T, bin, home string, re *regexp.Regexp, args ...string) (*proc, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+home)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case v := <-found:
		return p, v
	case <-p.done:
		t.Fatalf("%s exited at start", strings.Join(args, " "))
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start", strings.Join(args, " "))
	}
	return nil, ""
}

func connectAs(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{tok: token, rt: &http.Transport{}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	// A 2026-07-28 client mirrors x-mcp-header arguments into headers by
	// the tools' schemas: it lists them first.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return cs
}

// browserResult is the part of a browser tool's result the test reads.
type browserResult struct {
	Success     bool   `json:"success"`
	Reason      string `json:"reason"`
	Error       string `json:"error"`
	URL         string `json:"url"`
	Session     string `json:"session"`
	BrowserNode string `json:"browser_node"`
	Snapshot    string `json:"snapshot"`
	Delta       string `json:"delta"`
	Result      any    `json:"result"`
	Messages    []struct {
		Text string `json:"text"`
	} `json:"console_messages"`
	text string
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) browserResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var r browserResult
	r.text = res.Content[0].(*mcp.TextContent).Text
	json.Unmarshal([]byte(r.text), &r)
	return r
}

// chromiumOf lists the Chromium processes descending from pid (by /proc
// parent links).
func chromiumOf(pid int) []int {
	parent := map[int]int{}
	var chrome []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(st[i+1:]))
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
		if comm := string(st[bytes.IndexByte(st, '(')+1 : i]); strings.Contains(comm, "chrom") || strings.Contains(comm, "headless") {
			chrome = append(chrome, p)
		}
	}
	var out []int
	for _, c := range chrome {
		for p := parent[c]; p > 1; p = parent[p] {
			if p == pid {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func tokenLine(name, token string) string {
	sum := sha256.Sum256([]byte(token))
	return name + ":" + hex.EncodeToString(sum[:]) + "\n"
}

// TestSessionHandlesAcrossReplicas is issue 19's first done-when test, on
// real processes: a redis-server, two `gatehouse browser-node`s and two
// `gatehouse mcp --http` replicas A and B (own homes, one Redis, two
// principals X and Y). browser_navigate through A returns a handle;
// browser_snapshot through B with it shows the same page and refs; A is
// SIGKILLed and browser_click through B with a ref of that snapshot works;
// X's handle used by Y is session_not_found, and Y's session sees none of
// X's page, cookies or console; SIGKILL of the node holding X's session
// makes the next call session_lost, and a new navigation lands on the
// surviving node; after everything stops no Chromium is left.
func TestSessionHandlesAcrossReplicas(t *testing.T) {
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
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		who := strings.TrimPrefix(r.URL.Path, "/")
		if who == "x" {
			http.SetCookie(w, &http.Cookie{Name: "who", Value: "x-cookie", Path: "/"})
		}
		w.Write([]byte(`<!doctype html><title>Page ` + who + `</title><h1>Page ` + who + `</h1>` +
			`<button onclick="document.getElementById('out').textContent='clicked-` + who + `'">Press</button><p id=out>waiting</p>` +
			`<script>console.log("console-of-` + who + `")</script>`))
	}))
	defer page.Close()

	tokens := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(tokens, []byte(tokenLine("x", "token-x")+tokenLine("y", "token-y")), 0o600)
	nodeRe := regexp.MustCompile(`^gatehouse browser-node (\S+) `)
	var nodes []*proc
	byID := map[string]*proc{}
	for range 2 {
		p, id := startProc(t, bin, mcpHome(t), nodeRe, "browser-node", "--listen", "127.0.0.1:0", "--max-sessions", "4", "--heartbeat-ttl", "1500ms")
		nodes = append(nodes, p)
		byID[id] = p
	}
	httpRe := regexp.MustCompile(`MCP streamable HTTP on (\S+)`)
	replA, urlA := startProc(t, bin, mcpHome(t), httpRe, "mcp", "--http", "127.0.0.1:0", "--tokens", tokens)
	_, urlB := startProc(t, bin, mcpHome(t), httpRe, "mcp", "--http", "127.0.0.1:0", "--tokens", tokens)

	xa, xb, yb := connectAs(t, urlA, "token-x"), connectAs(t, urlB, "token-x"), connectAs(t, urlB, "token-y")
	tl, err := xa.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tl.Tools {
		if strings.HasPrefix(tool.Name, "browser_") {
			b, _ := json.Marshal(tool.InputSchema)
			if !strings.Contains(string(b), `"session":{`) || !strings.Contains(string(b), `"x-mcp-header":"Session"`) {
				t.Errorf("%s: no session argument declared as x-mcp-header: %s", tool.Name, b)
			}
		}
	}

	nav := callTool(t, xa, "browser_navigate", map[string]any{"url": page.URL + "/x"})
	if !nav.Success || len(nav.Session) != 32 || byID[nav.BrowserNode] == nil || !strings.Contains(nav.Snapshot, `button "Press"`) {
		t.Fatalf("browser_navigate through A: %s", nav.text)
	}
	h := nav.Session
	press := regexp.MustCompile(`button "Press" \[ref=(\w+)\]`).FindStringSubmatch(nav.Snapshot)[1]

	sn := callTool(t, xb, "browser_snapshot", map[string]any{"session": h})
	if !sn.Success || !strings.Contains(sn.Snapshot, `button "Press" [ref=`+press+`]`) || !strings.HasSuffix(sn.URL, "/x") {
		t.Fatalf("browser_snapshot through B with the handle (ref %s): %s", press, sn.text)
	}

	// The Mcp-Param-Session header must mirror the argument.
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"browser_snapshot","arguments":{"session":"` + h + `"}}}`
	req, _ := http.NewRequest(http.MethodPost, urlB, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Param-Session", "0123456789abcdef0123456789abcdef")
	resp, err := bearer{tok: "token-x", rt: &http.Transport{}}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	var rpc struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&rpc)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || rpc.Error.Code != -32602 {
		t.Errorf("a Mcp-Param-Session header unlike the argument: HTTP %d, code %d", resp.StatusCode, rpc.Error.Code)
	}

	replA.kill()
	cl := callTool(t, xb, "browser_click", map[string]any{"session": h, "ref": press})
	if !cl.Success || !strings.Contains(cl.Delta+cl.Snapshot, "clicked-x") {
		t.Fatalf("browser_click through B after A's SIGKILL: %s", cl.text)
	}

	// Y: X's handle is not found; Y's own session sees nothing of X's.
	if r := callTool(t, yb, "browser_snapshot", map[string]any{"session": h}); r.Success || r.Reason != "session_not_found" || strings.Contains(r.text, "Page x") {
		t.Errorf("X's handle used by Y: %s", r.text)
	}
	ny := callTool(t, yb, "browser_navigate", map[string]any{"url": page.URL + "/y"})
	if !ny.Success || ny.Session == h || strings.Contains(ny.Snapshot, "clicked-x") {
		t.Fatalf("Y's navigate: %s", ny.text)
	}
	if r := callTool(t, yb, "browser_console", map[string]any{"session": ny.Session}); !r.Success || strings.Contains(r.text, "console-of-x") || !strings.Contains(r.text, "console-of-y") {
		t.Errorf("Y's console: %s", r.text)
	}
	if r := callTool(t, yb, "browser_console", map[string]any{"expression": "document.cookie"}); !r.Success || strings.Contains(r.text, "x-cookie") {
		t.Errorf("Y's cookies: %s", r.text)
	}

	// The node holding X's session dies: session_lost, then a new session
	// lands on the surviving node.
	byID[nav.BrowserNode].kill()
	if r := callTool(t, xb, "browser_snapshot", map[string]any{"session": h}); r.Success || r.Reason != "session_lost" || !strings.Contains(r.Error, "browser_navigate") {
		t.Fatalf("a call on a session whose node died: %s", r.text)
	}
	if r := callTool(t, xb, "browser_snapshot", map[string]any{"session": h}); r.Reason != "session_lost" {
		t.Errorf("a lost handle again: %s", r.text)
	}
	// browser_navigate with the lost handle starts over: a new session
	// (a new handle) on the surviving node.
	again := callTool(t, xb, "browser_navigate", map[string]any{"url": page.URL + "/x", "session": h})
	if !again.Success || again.Session == h || again.BrowserNode == nav.BrowserNode || byID[again.BrowserNode] == nil {
		t.Fatalf("navigate after the node died: %s", again.text)
	}
	if r := callTool(t, xb, "browser_snapshot", map[string]any{"session": again.Session}); !r.Success || !strings.Contains(r.Snapshot, "Press") {
		t.Errorf("the new session: %s", r.text)
	}

	var pids []int
	for _, n := range nodes {
		pids = append(pids, n.cmd.Process.Pid)
		n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.done:
		case <-time.After(20 * time.Second):
			t.Fatal("a browser node did not stop on SIGTERM")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := chromiumOf(os.Getpid())
		for _, pid := range pids {
			left = append(left, backend.MarkedProcesses(pid)...)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chromium left after every node stopped: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
