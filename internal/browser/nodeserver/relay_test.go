package nodeserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
)

// testClient talks to an in-process node through an egress guard allowing
// only the node's address (as a replica does).
type testClient struct {
	t     *testing.T
	addr  string
	g     *egress.Guard
	hc    *http.Client
	relay string
	token string
}

func newTestClient(t *testing.T, s *nodeserver.Server, relay, token string) *testClient {
	ap := netip.MustParseAddrPort(s.Addr())
	g := node.Guard(ap, nil)
	return &testClient{t: t, addr: s.Addr(), g: g, hc: g.Client(egress.ClientOptions{Timeout: 10 * time.Second}), relay: relay, token: token}
}

func (c *testClient) header() http.Header {
	h := http.Header{}
	if c.relay != "" {
		h.Set(node.HeaderRelay, c.relay)
	}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	return h
}

func (c *testClient) dial() (*websocket.Conn, int) {
	d := websocket.Dialer{NetDialContext: c.g.DialContext}
	ws, resp, err := d.Dial("ws://"+c.addr+node.PathCDP, c.header())
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			return nil, resp.StatusCode
		}
		c.t.Fatal(err)
	}
	return ws, http.StatusSwitchingProtocols
}

func (c *testClient) open() int {
	st, _ := c.openWith(node.Policy{Version: node.PolicyVersion, Active: true})
	return st
}

// openWith opens a session proxy judged by pol; body is the answer's.
func (c *testClient) openWith(pol node.Policy) (status int, body []byte) {
	b, _ := json.Marshal(node.OpenRequest{Name: "t", Policy: &pol})
	return c.openRaw(b)
}

// openRaw POSTs body to the node's open endpoint.
func (c *testClient) openRaw(body []byte) (status int, answer []byte) {
	req, _ := http.NewRequest(http.MethodPost, "http://"+c.addr+node.PathSessions, bytes.NewReader(body))
	req.Header = c.header()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, answer
}

func cdpCall(t *testing.T, ws *websocket.Conn, id int, method string, params any) json.RawMessage {
	t.Helper()
	if err := ws.WriteJSON(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		t.Fatal(err)
	}
	for {
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := ws.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		if m.ID == id {
			if m.Error != nil {
				t.Fatalf("%s: %s", method, m.Error)
			}
			return m.Result
		}
	}
}

// TestRelayLifetime: a session proxy needs the live CDP relay of its
// client; when the relay closes (the replica is gone), the node closes its
// proxies (the slot is free) and Chromium disposes the BrowserContexts
// created with disposeOnDetach. The token guards both endpoints; a request
// from a web page (Origin) is refused.
func TestRelayLifetime(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Listen: "127.0.0.1:0", Registry: node.NewRegistry(rdb),
		MaxSessions: 2, Token: "sekret", Spares: -1, MaxSpares: -1}) // spares: TestNodeSpares
	if err != nil {
		t.Fatal(err)
	}
	pid := s.ChromiumPID()
	defer func() {
		s.Close(context.Background())
		if left := leftovers(pidOwner()); len(left) > 0 || pid == 0 {
			t.Errorf("Chromium left after Close: %v (pid %d)", left, pid)
		}
	}()
	rid := strings.Repeat("ab", 16)
	c := newTestClient(t, s, rid, "sekret")

	if _, st := newTestClient(t, s, rid, "").dial(); st != http.StatusUnauthorized {
		t.Errorf("relay without the token: HTTP %d, want 401", st)
	}
	if st := newTestClient(t, s, rid, "wrong").open(); st != http.StatusUnauthorized {
		t.Errorf("open with a wrong token: HTTP %d, want 401", st)
	}
	if st := c.open(); st != http.StatusConflict {
		t.Errorf("open with no live relay: HTTP %d, want 409", st)
	}
	ws, _ := c.dial()
	if st := c.open(); st != http.StatusOK || s.Sessions() != 1 {
		t.Fatalf("open with the relay live: HTTP %d, sessions %d", st, s.Sessions())
	}
	disp := true
	cdpCall(t, ws, 1, "Target.createBrowserContext", map[string]any{"disposeOnDetach": disp})
	ws.Close()
	waitFor(t, 5*time.Second, "the relay's session to close", func() bool { return s.Sessions() == 0 })

	other, _ := newTestClient(t, s, strings.Repeat("cd", 16), "sekret").dial()
	defer other.Close()
	var bc struct {
		IDs []string `json:"browserContextIds"`
	}
	waitFor(t, 5*time.Second, "Chromium to dispose the context", func() bool {
		json.Unmarshal(cdpCall(t, other, 2, "Target.getBrowserContexts", map[string]any{}), &bc)
		return len(bc.IDs) == 0
	})

	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+node.PathSessions, strings.NewReader(`{}`))
	req.Header = c.header()
	req.Header.Set("Origin", "http://evil.example")
	if resp, err := c.hc.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a request with Origin: %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}
}

// TestChromiumDeathDeregisters: a node whose Chromium dies deregisters at
// once (no replica places a session on it) and reports Dead.
func TestChromiumDeathDeregisters(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Listen: "127.0.0.1:0", Registry: node.NewRegistry(rdb),
		Heartbeat: 3 * time.Second}) // the record would outlive the check by TTL alone
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if err := syscall.Kill(s.ChromiumPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Dead():
	case <-time.After(10 * time.Second):
		t.Fatal("the node did not notice its Chromium died")
	}
	if rdb.Exists(context.Background(), node.KeyPrefix+s.ID()).Val() != 0 {
		t.Error("a node without Chromium is still registered")
	}
}
