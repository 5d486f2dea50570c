package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpProc is a running `gatehouse mcp --http` subprocess.
type mcpProc struct {
	cmd    *exec.Cmd
	url    string
	lines  chan string // stderr lines after the address line
	mu     sync.Mutex
	stderr strings.Builder
	exited chan error
}

// startMCPProc runs the real binary with --http 127.0.0.1:0 and extra
// flags, and returns once it reported its address.
func startMCPProc(t *testing.T, home string, extra ...string) *mcpProc {
	t.Helper()
	cmd := exec.Command(gatehouseBinary(t), append([]string{"mcp", "--http", "127.0.0.1:0"}, extra...)...)
	cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+home)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &mcpProc{cmd: cmd, lines: make(chan string, 64), exited: make(chan error, 1)}
	found := make(chan string, 1)
	re := regexp.MustCompile(`MCP streamable HTTP on (\S+)`)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			l := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(l + "\n")
			p.mu.Unlock()
			if m := re.FindStringSubmatch(l); m != nil {
				found <- m[1]
				continue
			}
			select {
			case p.lines <- l:
			default:
			}
		}
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	select {
	case p.url = <-found:
	case <-time.After(20 * time.Second):
		t.Fatal("gatehouse mcp --http did not report its address")
	}
	return p
}

// waitLine waits for a stderr line containing s.
func (p *mcpProc) waitLine(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-deadline:
			t.Fatalf("no stderr line with %q", s)
		}
	}
}

// exit waits for the process to end and returns its exit status.
func (p *mcpProc) exit(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatal("gatehouse mcp did not exit after the signal")
	}
	return -1
}

func (p *mcpProc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// gatedPage serves an article that is held until release is closed;
// arrived receives one value per request (the call fetching it is in
// flight).
func gatedPage(t *testing.T) (srv *httptest.Server, arrived chan struct{}, release chan struct{}) {
	arrived, release = make(chan struct{}, 8), make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html><head><title>Drained page</title></head><body><article><h1>Drained page</h1><p>This call was in flight when the server was told to stop, and it still finished.</p></article></body></html>`))
	}))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		srv.Close()
	})
	return srv, arrived, release
}

func waitArrived(t *testing.T, arrived chan struct{}) {
	t.Helper()
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the tool call never fetched the page")
	}
}

// TestMCPDrainOnSIGTERM runs the real binary: SIGTERM while a web_extract
// is in flight closes the listener (new connections are refused), lets the
// call finish and deliver its page, then the process exits 0; its --audit
// file (mode 0600) holds the call's gate and call lines. With SIGINT and a
// call that outlives --drain, the call is cancelled at the deadline and the
// exit status is 1.
func TestMCPDrainOnSIGTERM(t *testing.T) {
	t.Run("finishes", func(t *testing.T) {
		page, arrived, release := gatedPage(t)
		auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
		p := startMCPProc(t, mcpHome(t), "--drain", "30s", "--audit", auditPath)
		cs := httpClient(t, p.url)
		type answer struct {
			res *mcp.CallToolResult
			err error
		}
		done := make(chan answer, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "web_extract", Arguments: map[string]any{"urls": []string{page.URL + "/held"}}})
			done <- answer{res, err}
		}()
		waitArrived(t, arrived)
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		p.waitLine(t, "draining running tool calls")
		u, _ := url.Parse(p.url)
		if c, err := net.DialTimeout("tcp", u.Host, 5*time.Second); err == nil {
			c.Close()
			t.Fatal("the listener still accepts connections while draining")
		}
		close(release)
		a := <-done
		if a.err != nil || a.res.IsError || !strings.Contains(a.res.Content[0].(*mcp.TextContent).Text, "still finished") {
			t.Fatalf("the in-flight call: %v %+v", a.err, a.res)
		}
		if code := p.exit(t); code != 0 {
			t.Fatalf("exit status %d after a complete drain, want 0\n%s", code, p.stderrText())
		}
		fi, err := os.Stat(auditPath)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("audit file: %v %v", err, fi)
		}
		b, _ := os.ReadFile(auditPath)
		var kinds []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e map[string]any
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("audit line %q: %v", l, err)
			}
			if e["tool"] != "web_extract" || e["decision"] != "allow" || e["principal"] != "default" {
				t.Fatalf("audit line: %s", l)
			}
			kinds = append(kinds, e["event"].(string))
		}
		if strings.Join(kinds, ",") != "gate,call" {
			t.Fatalf("audit lines %v, want gate,call:\n%s", kinds, b)
		}
	})
	t.Run("cut off at the deadline", func(t *testing.T) {
		page, arrived, _ := gatedPage(t)
		p := startMCPProc(t, mcpHome(t), "--drain", "300ms")
		cs := httpClient(t, p.url)
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "web_extract", Arguments: map[string]any{"urls": []string{page.URL + "/held"}}})
			done <- err
		}()
		waitArrived(t, arrived)
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := p.exit(t); code != 1 {
			t.Fatalf("exit status %d when --drain cut a call off, want 1\n%s", code, p.stderrText())
		}
		if s := p.stderrText(); !strings.Contains(s, "1 cancelled") {
			t.Fatalf("stderr does not say a call was cancelled:\n%s", s)
		}
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the cut-off call never returned to the client")
		}
	})
}

func httpClient(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
