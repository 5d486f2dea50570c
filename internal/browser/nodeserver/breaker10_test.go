package nodeserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
	"github.com/gatehouse-dev/gatehouse/internal/config"
)

// breaker10 F1: a session binds its BrowserContext once (node.OpBind), and
// never to another session's: a second bind naming session B's context
// is refused (409), so closing session A leaves B's context alone.
func TestBindOnce(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	reg := node.NewRegistry(rdb)
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Config: config.Default(), Home: t.TempDir(), Listen: "127.0.0.1:0",
		Registry: reg, Resolver: testResolver{}, MaxSessions: 4, Spares: -1, MaxSpares: -1, WatchDialogs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	a := newTestClient(t, s, strings.Repeat("a1", 16), "")
	wsA, _ := a.dial()
	defer wsA.Close()
	cdp, _ := newTestClient(t, s, strings.Repeat("cd", 16), "").dial()
	defer cdp.Close()
	mk := func(id int) string {
		var r struct {
			ID string `json:"browserContextId"`
		}
		json.Unmarshal(cdpCall(t, cdp, id, "Target.createBrowserContext", map[string]any{}), &r)
		return r.ID
	}
	x, y := mk(1), mk(2)
	pol := node.Policy{Version: node.PolicyVersion, Active: true}
	openH := func() string {
		b, _ := json.Marshal(node.OpenRequest{Name: "h", Policy: &pol, Handle: true, TTLMS: 60000})
		st, ans := a.openRaw(b)
		var or node.OpenResponse
		json.Unmarshal(ans, &or)
		if st != 200 {
			t.Fatalf("open: %d %s", st, ans)
		}
		return or.ID
	}
	sa, sb := openH(), openH()
	op := func(id string, in node.OpRequest) int {
		st, b := a.call(http.MethodPost, node.PathSessions+"/"+id, in)
		t.Logf("op %s on %s: %d %s", in.Op, id[:6], st, strings.TrimSpace(string(b)))
		return st
	}
	op(sa, node.OpRequest{Op: node.OpBind, Target: x})
	op(sb, node.OpRequest{Op: node.OpBind, Target: y})
	if st := op(sa, node.OpRequest{Op: node.OpBind, Target: y}); st != http.StatusConflict {
		t.Errorf("a second OpBind naming session B's context: %d, want 409", st)
	}
	sc := openH()
	if st := op(sc, node.OpRequest{Op: node.OpBind, Target: y}); st != http.StatusConflict {
		t.Errorf("a first OpBind naming session B's context: %d, want 409", st)
	}
	st, _ := a.call(http.MethodDelete, node.PathSessions+"/"+sa, nil)
	t.Logf("DELETE A: %d", st)
	ctxs := contexts(t, cdp)
	t.Logf("contexts after DELETE A: x(A's)=%v y(B's)=%v", ctxs[x], ctxs[y])
	if !ctxs[y] {
		t.Errorf("closing session A disposed session B's BrowserContext")
	}
	// Garbage on the new endpoints.
	for _, body := range []string{"{", `{"op":"dialog","target":"../../x"}`, strings.Repeat("A", 70<<10)} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+a.addr+node.PathSessions+"/"+sb, strings.NewReader(body))
		req.Header = a.header()
		resp, err := a.hc.Do(req)
		if err == nil {
			t.Logf("garbage op %.20q: %d", body, resp.StatusCode)
			resp.Body.Close()
		}
	}
	// breaker10 F8: a node without spares says so (501), not "retry later".
	if st, b := a.call(http.MethodPost, node.PathSpares, "garbage"); st != http.StatusNotImplemented || !strings.Contains(string(b), "--max-spares 0") {
		t.Errorf("reserve on a node with spares off: %d %s; want 501 naming --max-spares 0", st, b)
	}
}

// breaker10 F5: a replica whose bind answer was lost releases the spare
// (Proxy.Close with reserved still set: DELETE /v1/spares/{id}); the node
// closes the session that bind made, so its slot is free again.
func TestReleaseAfterLostBind(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	reg := node.NewRegistry(rdb)
	s, err := nodeserver.Start(context.Background(), nodeserver.Options{Config: config.Default(), Home: t.TempDir(), Listen: "127.0.0.1:0",
		Registry: reg, Resolver: testResolver{}, MaxSessions: 3, Spares: 1, MaxSpares: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	a := newTestClient(t, s, strings.Repeat("a1", 16), "")
	wsA, _ := a.dial()
	defer wsA.Close()
	waitFor(t, 60e9, "a ready spare", func() bool { return s.SpareStats().Ready >= 1 })
	st, r := a.reserve()
	if st != 200 {
		t.Fatalf("reserve %d", st)
	}
	pol := node.Policy{Version: node.PolicyVersion, Active: true}
	b, _ := json.Marshal(node.OpenRequest{Name: "h", Policy: &pol, Spare: r.ID, Handle: true, TTLMS: 60000})
	if st, ans := a.openRaw(b); st != 200 {
		t.Fatalf("bind %d %s", st, ans)
	}
	b2 := newTestClient(t, s, strings.Repeat("b2", 16), "")
	wsB, _ := b2.dial()
	defer wsB.Close()
	if st, _ := b2.call(http.MethodDelete, node.PathSpares+"/"+r.ID, nil); st == http.StatusOK || s.Sessions() != 1 {
		t.Errorf("another relay's release of the bound spare: %d, %d sessions left (want refused, 1)", st, s.Sessions())
	}
	st, ans := a.call(http.MethodDelete, node.PathSpares+"/"+r.ID, nil)
	t.Logf("release after a bind whose answer was lost: %d %s; node sessions now %d", st, strings.TrimSpace(string(ans)), s.Sessions())
	if s.Sessions() != 0 {
		t.Errorf("the bound session still holds its slot (%d sessions) until its index key expires", s.Sessions())
	}
}
