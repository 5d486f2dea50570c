package backend_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// rawCDP is a bare CDP connection to a browser's endpoint: commands by
// session, every message kept.
type rawCDP struct {
	t    *testing.T
	ws   *websocket.Conn
	mu   sync.Mutex
	msgs []map[string]any
	id   int
}

func dialRaw(t *testing.T, url string) *rawCDP {
	var nd net.Dialer
	d := websocket.Dialer{NetDialContext: nd.DialContext}
	ws, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &rawCDP{t: t, ws: ws}
	go func() {
		for {
			var m map[string]any
			if ws.ReadJSON(&m) != nil {
				return
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, m)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { ws.Close() })
	return c
}

// call sends method on session and waits up to d for its answer: the
// answer (nil when none came).
func (c *rawCDP) call(session, method string, params any, d time.Duration) map[string]any {
	c.mu.Lock()
	c.id++
	id := c.id
	c.mu.Unlock()
	if err := c.ws.WriteJSON(map[string]any{"id": id, "method": method, "params": params, "sessionId": session}); err != nil {
		c.t.Fatal(err)
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if m := c.find(func(m map[string]any) bool { f, _ := m["id"].(float64); return int(f) == id }); m != nil {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

func (c *rawCDP) find(ok func(map[string]any) bool) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.msgs {
		if ok(m) {
			return m
		}
	}
	return nil
}

func (c *rawCDP) event(session, method string) map[string]any {
	return c.find(func(m map[string]any) bool { return m["method"] == method && m["sessionId"] == session })
}

func (c *rawCDP) attach(target string) string {
	r := c.call("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}, 5*time.Second)
	res, _ := r["result"].(map[string]any)
	sid, _ := res["sessionId"].(string)
	if sid == "" {
		c.t.Fatalf("attachToTarget: %v", r)
	}
	return sid
}

// TestDialogAfterAttach pins down what Chromium does with a JavaScript
// dialog and CDP sessions (issue 19: why a browser node watches dialogs
// itself, nodeserver/dialogs.go). A session whose Page domain was enabled
// before the dialog opened is told of it and can answer it. A session
// attached while it is open is not told (no Page.javascriptDialogOpening),
// gets no answer to Page.enable or Runtime.enable while it blocks the page
// (so AttachTab does not complete), and cannot answer it ("No dialog is
// showing").
func TestDialogAfterAttach(t *testing.T) {
	path, err := backend.FindChromium("")
	if err != nil {
		t.Skip("Chromium missing")
	}
	var nd net.Dialer
	l, err := backend.Launch(context.Background(), backend.Options{ExecPath: path, DefaultProxy: "http://127.0.0.1:9", DebugDial: nd.DialContext})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: t.Name(), Guard: g, AllowPrivateFromPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tab, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), Detach: true, DialogPolicy: backend.DialogMustRespond})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Dispose()
	raw := dialRaw(t, l.DebugURL())
	before := raw.attach(tab.TargetID())
	if r := raw.call(before, "Page.enable", struct{}{}, 10*time.Second); r == nil {
		t.Fatal("Page.enable on an idle page did not answer")
	}
	if _, err := tab.EvalPage(ctx, `setTimeout(() => { document.title = "answered:" + prompt("q?", "d") }, 10); 1`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if _, ok := tab.PendingDialog(); ok {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if _, ok := tab.PendingDialog(); !ok {
		t.Fatal("the prompt did not open")
	}

	after := raw.attach(tab.TargetID())
	if r := raw.call(after, "Page.enable", struct{}{}, 2*time.Second); r != nil {
		t.Errorf("Page.enable under an open dialog answered: %v", r)
	}
	if r := raw.call(after, "Runtime.enable", struct{}{}, 2*time.Second); r != nil {
		t.Errorf("Runtime.enable under an open dialog answered: %v", r)
	}
	if ev := raw.event(after, "Page.javascriptDialogOpening"); ev != nil {
		t.Errorf("the later session was told of the dialog: %v", ev)
	}
	r := raw.call(after, "Page.handleJavaScriptDialog", map[string]any{"accept": true, "promptText": "late"}, 5*time.Second)
	if e, _ := r["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "No dialog") {
		t.Errorf("the later session answering: %v; want an error (no dialog)", r)
	}
	actx, acancel := context.WithTimeout(ctx, 3*time.Second)
	if at, err := l.AttachTab(actx, tab.TargetID(), tab.BrowserContextID(), backend.TabOptions{}); err == nil {
		at.Close()
		t.Error("AttachTab completed under an open dialog")
	}
	acancel()

	if ev := raw.event(before, "Page.javascriptDialogOpening"); ev == nil {
		t.Fatal("the session enabled before was not told of the dialog")
	}
	if r := raw.call(before, "Page.handleJavaScriptDialog", map[string]any{"accept": true, "promptText": "early"}, 5*time.Second); r == nil || r["error"] != nil {
		t.Fatalf("the session enabled before answering: %v", r)
	}
	for i := 0; i < 200; i++ {
		if _, ok := tab.PendingDialog(); !ok {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if cur, err := tab.Current(ctx); err != nil || cur.Title != "answered:early" {
		t.Errorf("after the answer: %+v, %v", cur, err)
	}
	b, _ := json.Marshal(tab.RecentDialogs(1))
	t.Logf("the tab's record of it: %s", b)
}
