package nodeserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// call sends method path with body (JSON of v; nil: none) and returns the
// status and the answer.
func (c *testClient) call(method, path string, v any) (int, []byte) {
	var body io.Reader
	if v != nil {
		b, _ := json.Marshal(v)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+c.addr+path, body)
	req.Header = c.header()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// reserve reserves a spare (POST /v1/spares); or is the answer when 200.
func (c *testClient) reserve() (status int, or node.OpenResponse) {
	st, b := c.call(http.MethodPost, node.PathSpares, struct{}{})
	if st == http.StatusOK {
		if err := json.Unmarshal(b, &or); err != nil {
			c.t.Fatalf("reserve answer %s: %v", b, err)
		}
	}
	return st, or
}

// bind opens a session on reserved spare id with pol.
func (c *testClient) bind(id string, pol node.Policy) (status int, or node.OpenResponse) {
	st, b := c.call(http.MethodPost, node.PathSessions, node.OpenRequest{Name: "t", Policy: &pol, Spare: id})
	if st == http.StatusOK {
		json.Unmarshal(b, &or)
	}
	return st, or
}

// through GETs u through the proxy or answered (its credential); the
// status and the refusal reason (egress.ProxyReasonHeader).
func through(t *testing.T, or node.OpenResponse, u string) (int, string) {
	t.Helper()
	pu, _ := url.Parse(or.Proxy)
	pu.User = url.UserPassword(or.User, or.Pass)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 20 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(egress.ProxyReasonHeader)
}

// contexts returns the BrowserContexts of the node's Chromium.
func contexts(t *testing.T, cdp *websocket.Conn) map[string]bool {
	t.Helper()
	var bc struct {
		IDs []string `json:"browserContextIds"`
	}
	json.Unmarshal(cdpCall(t, cdp, 1, "Target.getBrowserContexts", map[string]any{}), &bc)
	out := map[string]bool{}
	for _, id := range bc.IDs {
		out[id] = true
	}
	return out
}

// TestReservedSpares: the node's side of held spares (reserve.go). A
// reservation needs a live relay, belongs to it (another relay can neither
// bind, renew nor release it), refuses every request until bound, is
// bound once (the session keeps its id, context and target; a second bind
// is 409, an unknown id 404), ends when not renewed within its TTL and
// when its relay closes (its context disposed). Capacity stays honest: a
// reservation is not a session in the record, the node never holds more
// contexts than --max-sessions, and an open that needs a reserved slot
// reclaims it instead of answering browser_capacity.
func TestReservedSpares(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	reg := node.NewRegistry(rdb)
	const capacity = 3
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Config: config.Default(), Home: t.TempDir(), Listen: "127.0.0.1:0",
		Registry: reg, Resolver: testResolver{}, MaxSessions: capacity, Spares: 2, MaxSpares: 2, ReserveTTL: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer site.Close()
	su, _ := url.Parse(site.URL)
	pageURL := "http://page.test:" + su.Port() + "/"
	ctx := context.Background()
	recordSessions := func() int {
		rec, ok, _ := reg.Get(ctx, s.ID())
		if !ok {
			return -1
		}
		return rec.Sessions
	}
	pol := node.Policy{Version: node.PolicyVersion, AllowPrivateURLs: true} // the open guard: loopback pages allowed, metadata never
	a := newTestClient(t, s, strings.Repeat("a1", 16), "")
	wsA, _ := a.dial()
	defer wsA.Close()
	b := newTestClient(t, s, strings.Repeat("b2", 16), "")
	wsB, _ := b.dial()
	defer wsB.Close()
	cdp, _ := newTestClient(t, s, strings.Repeat("cd", 16), "").dial()
	defer cdp.Close()
	ready := func(n int) {
		t.Helper()
		waitFor(t, 60*time.Second, fmt.Sprintf("%d ready spares", n), func() bool { return s.SpareStats().Ready >= n })
	}

	// A live relay is required.
	if st, _ := newTestClient(t, s, strings.Repeat("0f", 16), "").reserve(); st != http.StatusConflict {
		t.Fatalf("reserve without a live relay: HTTP %d, want 409", st)
	}
	ready(2)
	st, r1 := a.reserve()
	if st != http.StatusOK || r1.Context == "" || r1.Target == "" || r1.TTLMS != 4000 {
		t.Fatalf("reserve: HTTP %d %+v", st, r1)
	}
	if ss := s.SpareStats(); ss.Reserved != 1 || s.Sessions() != 0 || recordSessions() != 0 {
		t.Fatalf("after a reservation: %+v, %d sessions (record %d); a reservation is not a session", ss, s.Sessions(), recordSessions())
	}
	// Unbound: its proxy refuses every request.
	if code, why := through(t, r1, pageURL); code == http.StatusOK || why != string(reason.PolicyBlocked) {
		t.Fatalf("a reserved spare's proxy before the bind: %d %q, want policy_blocked", code, why)
	}
	// Another relay can neither bind, renew nor release it.
	if st, _ := b.bind(r1.ID, pol); st != http.StatusForbidden {
		t.Fatalf("bind by another relay: HTTP %d, want 403", st)
	}
	if st, _ := b.call(http.MethodPost, node.PathSpares+"/"+r1.ID, struct{}{}); st != http.StatusForbidden {
		t.Fatalf("renew by another relay: HTTP %d, want 403", st)
	}
	if st, _ := b.call(http.MethodDelete, node.PathSpares+"/"+r1.ID, nil); st != http.StatusForbidden {
		t.Fatalf("release by another relay: HTTP %d, want 403", st)
	}
	// Its own relay binds it, once: the session is the spare.
	st, o1 := a.bind(r1.ID, pol)
	if st != http.StatusOK || o1.ID != r1.ID || o1.Context != r1.Context || o1.Target != r1.Target || o1.Proxy != r1.Proxy || o1.User != r1.User {
		t.Fatalf("bind: HTTP %d %+v, want the reserved spare %+v", st, o1, r1)
	}
	if ss := s.SpareStats(); ss.Reserved != 0 || ss.Binds != 1 || s.Sessions() != 1 {
		t.Fatalf("after the bind: %+v, %d sessions", ss, s.Sessions())
	}
	waitFor(t, 5*time.Second, "the record to count the session", func() bool { return recordSessions() == 1 })
	if code, why := through(t, o1, pageURL); code != http.StatusOK {
		t.Fatalf("the bound session's proxy: %d %q, want the page", code, why)
	}
	if code, why := through(t, o1, "http://metadata-rebind.test/"); code == http.StatusOK || why == "" {
		t.Fatalf("the bound session's proxy to a metadata address: %d %q, want refused (the floor)", code, why)
	}
	if st, _ := a.bind(r1.ID, pol); st != http.StatusConflict {
		t.Fatalf("a second bind: HTTP %d, want 409", st)
	}
	if st, _ := a.bind(strings.Repeat("9e", 16), pol); st != http.StatusNotFound {
		t.Fatalf("bind of an id never reserved: HTTP %d, want 404", st)
	}

	// Expiry: renewed, it lives on; left alone past its TTL, it is closed.
	ready(1)
	t0 := time.Now()
	st, r2 := a.reserve()
	if st != http.StatusOK {
		t.Fatalf("reserve: HTTP %d", st)
	}
	time.Sleep(2 * time.Second)
	if st, _ := a.call(http.MethodPost, node.PathSpares+"/"+r2.ID, struct{}{}); st != http.StatusOK {
		t.Fatalf("renew: HTTP %d", st)
	}
	time.Sleep(time.Until(t0.Add(4500 * time.Millisecond))) // past the first TTL, within the renewed one
	s.ExpireReservations()
	if ss := s.SpareStats(); ss.Reserved != 1 || ss.Expired != 0 {
		t.Fatalf("a renewed reservation expired: %+v", ss)
	}
	waitFor(t, 20*time.Second, "the unrenewed reservation to expire", func() bool {
		s.ExpireReservations()
		return s.SpareStats().Reserved == 0
	})
	if ss := s.SpareStats(); ss.Expired != 1 {
		t.Fatalf("an unrenewed reservation past its TTL: %+v, want expired", ss)
	}
	if st, _ := a.bind(r2.ID, pol); st != http.StatusNotFound {
		t.Fatalf("bind of an expired reservation: HTTP %d, want 404", st)
	}
	if st, _ := a.call(http.MethodPost, node.PathSpares+"/"+r2.ID, struct{}{}); st != http.StatusNotFound {
		t.Fatalf("renew of an expired reservation: HTTP %d, want 404", st)
	}
	waitFor(t, 10*time.Second, "the expired spare's context to be disposed", func() bool { return !contexts(t, cdp)[r2.Context] })

	// Its relay closing ends it.
	ready(1)
	st, r3 := b.reserve()
	if st != http.StatusOK {
		t.Fatalf("reserve: HTTP %d", st)
	}
	wsB.Close()
	waitFor(t, 10*time.Second, "the closed relay's reservation to end", func() bool { return s.SpareStats().Reserved == 0 })
	waitFor(t, 10*time.Second, "its context to be disposed", func() bool { return !contexts(t, cdp)[r3.Context] })

	// Capacity: one session and two reservations fill the node; the
	// record still counts one session, and opens of another relay reclaim
	// the reservations before browser_capacity.
	ready(2)
	var held []node.OpenResponse
	for range 2 {
		st, r := a.reserve()
		if st != http.StatusOK {
			t.Fatalf("reserve: HTTP %d", st)
		}
		held = append(held, r)
	}
	if st, _ := a.reserve(); st != http.StatusServiceUnavailable {
		t.Fatalf("reserve on a node with no free slot: HTTP %d, want 503", st)
	}
	time.Sleep(500 * time.Millisecond)
	if ss := s.SpareStats(); ss.Ready != 0 || ss.Making != 0 {
		t.Fatalf("a node whose slots are all taken or reserved made spares: %+v", ss)
	}
	if n := recordSessions(); n != 1 {
		t.Fatalf("record sessions with 1 session and 2 reservations = %d", n)
	}
	c := newTestClient(t, s, strings.Repeat("c3", 16), "")
	wsC, _ := c.dial()
	defer wsC.Close()
	for i := range 2 {
		if st := c.open(); st != http.StatusOK {
			t.Fatalf("open %d on a node whose free slots are reserved: HTTP %d, want a reclaimed slot", i+1, st)
		}
		// c makes no context for its sessions: the contexts (less the
		// default one) and those sessions fit in the capacity.
		if n := len(contexts(t, cdp)) - 1; n+s.Sessions()-1 > capacity {
			t.Fatalf("%d contexts with %d sessions: over capacity %d", n, s.Sessions(), capacity)
		}
	}
	if ss := s.SpareStats(); ss.Reclaimed != 2 || ss.Reserved != 0 {
		t.Fatalf("after two opens: %+v, want both reservations reclaimed", ss)
	}
	if st := c.open(); st != node.CapacityStatus {
		t.Fatalf("a fourth session on a node of capacity 3: HTTP %d, want browser_capacity", st)
	}
	for _, r := range held {
		if st, _ := a.bind(r.ID, pol); st != http.StatusNotFound {
			t.Fatalf("bind of a reclaimed reservation: HTTP %d, want 404", st)
		}
	}
}
