package nodeserver

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
)

// The dialog watch (issue 19 item 3). Chromium answers
// Page.handleJavaScriptDialog only over a CDP session whose Page domain was
// enabled when the dialog opened, sends Page.javascriptDialogOpening to no
// session that enables Page later, and, while the dialog blocks the page,
// a session attached later gets no answer to Page.enable or Runtime.enable
// (TestDialogAfterAttach in package backend). So a replica that attaches
// to a handle session whose dialog opened under another replica, or under
// none, could neither attach, report it nor answer it. The node therefore
// (--watch-dialogs) keeps its own CDP connection to its Chromium, attached
// to the tab of every handle session once it is handed out (watch: at
// node.OpBind, or when a spare is opened) with only the Page domain
// enabled: it knows every open dialog of those tabs and answers one for
// whichever replica serves the session next (node.OpDialog, node.OpAnswer).

// maxDialogText bounds a dialog's message, URL and default prompt as the
// node reports them.
const maxDialogText = 16 << 10

type watched struct {
	target, bctx string
	dialog       *node.Dialog // open, else nil
	opened       time.Time
}

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type dialogWatch struct {
	ws  *websocket.Conn
	wmu sync.Mutex

	mu    sync.Mutex
	next  int
	waits map[int]chan cdpMsg
	pages map[string]*watched // by CDP session id
}

// watchDialogs connects to Chromium's CDP endpoint wsURL with dial and
// starts the watch; it ends when the connection closes (close).
func watchDialogs(ctx context.Context, wsURL string, dial backend.DialFunc) (*dialogWatch, error) {
	d := websocket.Dialer{NetDialContext: dial, HandshakeTimeout: 10 * time.Second}
	ws, resp, err := d.DialContext(ctx, wsURL, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(16 << 20)
	w := &dialogWatch{ws: ws, waits: map[int]chan cdpMsg{}, pages: map[string]*watched{}}
	go w.read()
	return w, nil
}

// watch attaches the watch to target, the tab of a handle session's
// BrowserContext bctx ("" its page targets), once the session is handed
// out (its proxy credential primed): the read loop enables Page on it.
func (w *dialogWatch) watch(ctx context.Context, bctx, target string) {
	targets := []string{target}
	if target == "" {
		var res struct {
			TargetInfos []struct {
				TargetID         string `json:"targetId"`
				Type             string `json:"type"`
				BrowserContextID string `json:"browserContextId"`
			} `json:"targetInfos"`
		}
		raw, err := w.call(ctx, "", "Target.getTargets", struct{}{})
		if err != nil || json.Unmarshal(raw, &res) != nil {
			return
		}
		targets = targets[:0]
		for _, ti := range res.TargetInfos {
			if ti.Type == "page" && ti.BrowserContextID == bctx {
				targets = append(targets, ti.TargetID)
			}
		}
	}
	for _, t := range targets {
		w.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t, "flatten": true}) //nolint:errcheck // gone already is fine
	}
}

func (w *dialogWatch) close() { w.ws.Close() }

// send writes one command and returns its id (its answer goes to wait,
// when not nil).
func (w *dialogWatch) send(session, method string, params any, wait chan cdpMsg) (int, error) {
	w.mu.Lock()
	w.next++
	id := w.next
	if wait != nil {
		w.waits[id] = wait
	}
	w.mu.Unlock()
	b, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params, "sessionId": session})
	if err != nil {
		return id, err
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return id, w.ws.WriteMessage(websocket.TextMessage, b)
}

// call sends a command and waits for its result (ctx, at most 5 s).
func (w *dialogWatch) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	ch := make(chan cdpMsg, 1)
	id, err := w.send(session, method, params, ch)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, errors.New(m.Error.Message)
		}
		return m.Result, nil
	case <-ctx.Done():
		w.mu.Lock()
		delete(w.waits, id)
		w.mu.Unlock()
		return nil, ctx.Err()
	}
}

// read is the watch's message loop: pages attached (Page enabled on each,
// unanswered: the loop must not wait), dialogs opening and closing, pages
// detached, answers to calls.
func (w *dialogWatch) read() {
	for {
		var m cdpMsg
		if err := w.ws.ReadJSON(&m); err != nil {
			return
		}
		if m.ID != 0 {
			w.mu.Lock()
			ch := w.waits[m.ID]
			delete(w.waits, m.ID)
			w.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		switch m.Method {
		case "Target.attachedToTarget":
			var p struct {
				SessionID  string `json:"sessionId"`
				TargetInfo struct {
					TargetID         string `json:"targetId"`
					BrowserContextID string `json:"browserContextId"`
					Type             string `json:"type"`
				} `json:"targetInfo"`
			}
			if json.Unmarshal(m.Params, &p) != nil || p.TargetInfo.Type != "page" {
				continue
			}
			w.mu.Lock()
			w.pages[p.SessionID] = &watched{target: p.TargetInfo.TargetID, bctx: p.TargetInfo.BrowserContextID}
			w.mu.Unlock()
			w.send(p.SessionID, "Page.enable", struct{}{}, nil) //nolint:errcheck // a failed write ends the loop
		case "Target.detachedFromTarget":
			var p struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				w.mu.Lock()
				delete(w.pages, p.SessionID)
				w.mu.Unlock()
			}
		case "Page.javascriptDialogOpening":
			var p struct {
				Type, Message, URL string
				DefaultPrompt      string `json:"defaultPrompt"`
			}
			if json.Unmarshal(m.Params, &p) != nil {
				continue
			}
			w.mu.Lock()
			if pg := w.pages[m.SessionID]; pg != nil {
				pg.dialog = &node.Dialog{Target: pg.target, Type: cut(p.Type), Message: cut(p.Message), URL: cut(p.URL), DefaultPrompt: cut(p.DefaultPrompt)}
				pg.opened = time.Now()
			}
			w.mu.Unlock()
		case "Page.javascriptDialogClosed":
			w.mu.Lock()
			if pg := w.pages[m.SessionID]; pg != nil {
				pg.dialog = nil
			}
			w.mu.Unlock()
		}
	}
}

func cut(s string) string {
	if len(s) > maxDialogText {
		return s[:maxDialogText]
	}
	return s
}

// pending returns the dialog open in a tab of BrowserContext bctx (target
// that tab, "" any) and the CDP session to answer it over.
func (w *dialogWatch) pending(bctx, target string) (node.Dialog, string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for sid, pg := range w.pages {
		if pg.bctx == bctx && pg.dialog != nil && (target == "" || pg.target == target) {
			d := *pg.dialog
			d.AgeMS = time.Since(pg.opened).Milliseconds()
			return d, sid, true
		}
	}
	return node.Dialog{}, "", false
}

// answer accepts (with prompt) or dismisses the dialog open in a tab of
// bctx (target that tab, "" any); false when none is open.
func (w *dialogWatch) answer(ctx context.Context, bctx, target string, accept bool, prompt string) (node.Dialog, bool, error) {
	d, sid, ok := w.pending(bctx, target)
	if !ok {
		return d, false, nil
	}
	params := map[string]any{"accept": accept}
	if accept {
		params["promptText"] = prompt
	}
	_, err := w.call(ctx, sid, "Page.handleJavaScriptDialog", params)
	return d, true, err
}
