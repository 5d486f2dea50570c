package mcpserver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

// TestAdmitWhileDraining: once draining, a tool call is answered 503 with
// Retry-After, Connection: close and data.reason server_draining, and is not
// counted as in flight (Drain does not wait for it).
func TestAdmitWhileDraining(t *testing.T) {
	p := newOps(HTTPOptions{ReplicaMaxCalls: 2}, nil)
	release, refused := p.admit(&rpcErrorWriter{ResponseWriter: httptest.NewRecorder()}, 1)
	ok := refused == ""
	if !ok {
		t.Fatal("a call below the cap was refused")
	}
	p.draining.Store(true)
	rec := httptest.NewRecorder()
	if _, refused := p.admit(&rpcErrorWriter{ResponseWriter: rec}, 7); refused == "" {
		t.Fatal("a call was admitted while draining")
	}
	var m struct {
		ID    int `json:"id"`
		Error struct {
			Data struct{ Reason string } `json:"data"`
		} `json:"error"`
	}
	json.Unmarshal(rec.Body.Bytes(), &m)
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "1" || rec.Header().Get("Connection") != "close" || m.ID != 7 || m.Error.Data.Reason != "server_draining" {
		t.Fatalf("draining answer: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if n := p.inflight.Load(); n != 1 {
		t.Fatalf("in flight %d, want 1 (the refused call is not counted)", n)
	}
	release()
	if n := p.inflight.Load(); n != 0 {
		t.Fatalf("in flight %d after release", n)
	}
}

type events []audit.Event

func (e *events) Audit(x audit.Event) { *e = append(*e, x) }

// TestAuditPrincipalAndNavigate: the principal the HTTP auth path put in the
// call's context is on every line; a one-URL tool (browser_navigate) refused
// gets a gate line with its url and the result's reason.
func TestAuditPrincipalAndNavigate(t *testing.T) {
	var got events
	s := &Server{opts: Options{Audit: &got}}
	res := &tools.Result{Value: map[string]any{"success": false, "reason": "ssrf_metadata", "error": "Blocked"}, Refused: true}
	s.audit(principal.With(context.Background(), "alice"), "browser_navigate", 5*time.Millisecond, res,
		json.RawMessage(`{"url":"http://169.254.169.254/latest"}`))
	if len(got) != 2 {
		t.Fatalf("events: %+v", got)
	}
	g, c := got[0], got[1]
	if g.Kind != audit.KindGate || g.URL != "http://169.254.169.254/latest" || g.Reason != "ssrf_metadata" || g.Decision != audit.Refuse || g.Principal != "alice" {
		t.Fatalf("gate event: %+v", g)
	}
	if c.Kind != audit.KindCall || c.Principal != "alice" || c.Reason != "ssrf_metadata" || c.DurationMS != 5 {
		t.Fatalf("call event: %+v", c)
	}
}
