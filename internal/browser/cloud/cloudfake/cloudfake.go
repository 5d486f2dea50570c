// Package cloudfake is what the cloud-browser tests share: a local fake of a
// provider's REST API (Browserbase, Browser Use, Firecrawl) that records every
// request, and the Chromium a provider would run (its own profile, a loopback
// debugging port). Tests never reach a real provider.
package cloudfake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
)

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string // the URL path, with "?query" when there is one
	Header http.Header
	Body   map[string]any // the JSON body; nil when there is none
}

// Server is a provider API fake on a loopback httptest server.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Request
}

// New starts a fake whose answer to each request is h's status code and
// JSON body; it is closed when the test ends.
func New(t testing.TB, h func(r Request) (int, any)) *Server {
	f := &Server{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rq := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
		if r.URL.RawQuery != "" {
			rq.Path += "?" + r.URL.RawQuery
		}
		json.Unmarshal(b, &rq.Body) //nolint:errcheck // a body that is not JSON stays nil
		f.mu.Lock()
		f.reqs = append(f.reqs, rq)
		f.mu.Unlock()
		code, out := h(rq)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(out) //nolint:errcheck
	}))
	t.Cleanup(f.Close)
	return f
}

// All returns the requests received so far, oldest first.
func (f *Server) All() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// Count returns how many requests had this method and a path starting with
// pathPrefix.
func (f *Server) Count(method, pathPrefix string) int {
	n := 0
	for _, r := range f.All() {
		if r.Method == method && strings.HasPrefix(r.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// Chromium starts the headless Chromium a provider would run (its own
// profile, a loopback debugging port, extraArgs such as
// --host-resolver-rules) and returns its WebSocket debugger URL (from
// DevToolsActivePort) and its http root (for /json/list). It is killed when
// the test ends. Without Chromium the test is skipped, or fails when CI is
// set.
func Chromium(t testing.TB, extraArgs ...string) (ws, root string) {
	t.Helper()
	path, err := backend.FindChromium("")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Chromium missing: %v", err)
		}
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"}, extraArgs...)
	args = append(args, "--user-data-dir="+dir, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank")
	cmd := exec.Command(path, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck
		cmd.Wait()         //nolint:errcheck
		backend.KillLeftovers(dir)
	})
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if l := strings.Split(strings.TrimSpace(string(b)), "\n"); err == nil && len(l) == 2 {
			return "ws://127.0.0.1:" + l[0] + l[1], "http://127.0.0.1:" + l[0]
		}
	}
	t.Fatal("Chromium did not write DevToolsActivePort")
	return "", ""
}
