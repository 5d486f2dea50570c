// Tab events: the CDP event loop (console, dialogs, lifecycle, network
// activity) and the state it records for the tools to read.

package backend

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

func (t *Tab) bumpLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// onEvent runs on the tab's message loop: it must not block or call CDP.
func (t *Tab) onEvent(ev any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.topLevelPageLocked(ev) // toplevel.go
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, remoteText(a))
		}
		t.pushConsole(ConsoleMessage{Type: string(e.Type), Text: strings.Join(parts, " "), Source: "console"})
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil && e.ExceptionDetails.Exception.Description != "" {
			msg = e.ExceptionDetails.Exception.Description
		}
		t.pushConsole(ConsoleMessage{Type: "exception", Text: msg, Source: "exception"})
	case *page.EventJavascriptDialogOpening:
		t.dialogOpeningLocked(e) // dialogs.go
	case *page.EventJavascriptDialogClosed:
		t.dialogClosedLocked(e)
	case *fetch.EventAuthRequired:
		if !t.priming {
			return // another Fetch user's pause (the render step's resource filter, renderstep)
		}
		resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseDefault}
		if e.AuthChallenge != nil && e.AuthChallenge.Source == fetch.AuthChallengeSourceProxy {
			resp = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: t.proxyUser, Password: t.proxyPass}
		}
		ctx, id := t.ctx, e.RequestID
		go func() {
			hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			chromedp.Call(hctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: id, AuthChallengeResponse: resp}) //nolint:errcheck // the request may be gone
		}()
		return
	case *fetch.EventRequestPaused:
		if !t.priming {
			return
		}
		ctx, id := t.ctx, e.RequestID
		go func() {
			hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			chromedp.Call(hctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id}) //nolint:errcheck
		}()
		return
	case *network.EventRequestWillBeSent:
		if e.Type == network.ResourceTypeEventSource || e.Type == network.ResourceTypeWebSocket {
			break
		}
		if e.Type == network.ResourceTypeDocument && e.FrameID == t.frame && e.Request != nil {
			if e.RequestID != t.docReq { // a redirect keeps its request id
				t.docReq = e.RequestID
				t.docLoad = DocLoad{Seq: t.docLoad.Seq + 1}
			}
			t.docLoad.URL = e.Request.URL
		}
		t.inflight[e.RequestID] = time.Now()
		t.lastNet = time.Now()
	case *network.EventLoadingFinished:
		delete(t.inflight, e.RequestID)
		t.lastNet = time.Now()
	case *network.EventLoadingFailed:
		delete(t.inflight, e.RequestID)
		t.lastNet = time.Now()
		if e.RequestID == t.docReq && !e.Canceled {
			t.docLoad.ErrorText = e.ErrorText
		}
	case *network.EventResponseReceived:
		if e.RequestID == t.docReq && e.Response != nil {
			t.docLoad.Status, t.docLoad.MIMEType = int(e.Response.Status), e.Response.MimeType
			for k, v := range e.Response.Headers {
				if d, ok := v.(string); ok && strings.EqualFold(k, "Content-Disposition") {
					t.docLoad.Attachment = strings.HasPrefix(strings.ToLower(strings.TrimSpace(d)), "attachment")
				}
			}
		}
		return // no waiter cares
	case *page.EventFrameRequestedNavigation:
		if e.FrameID == t.frame {
			t.navSeq++
			t.lastNav = time.Now()
		}
	case *page.EventFrameStartedLoading:
		if e.FrameID == t.frame {
			t.navSeq++
			t.loading = true
			t.lastNav = time.Now()
		}
	case *page.EventFrameStoppedLoading:
		if e.FrameID == t.frame {
			t.loading = false
			t.lastNav = time.Now()
		}
	case *page.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ID == t.frame && e.Frame.ParentID == "" {
			t.docSeq++
			t.inflight = map[network.RequestID]time.Time{}
			t.lastNav = time.Now()
		}
	case *page.EventLifecycleEvent:
		if e.FrameID == t.frame {
			if e.LoaderID != t.loaderID {
				if t.loaderID != "" {
					t.seen[t.loaderID] = true
				}
				t.loaderID = e.LoaderID
				t.lifecycle = map[string]bool{}
			}
			t.lifecycle[e.Name] = true
		}
	case *inspector.EventTargetCrashed:
		t.crashed = true
	case *inspector.EventDetached:
		t.crashed = true
	default:
		return
	}
	t.bumpLocked()
}

func (t *Tab) pushConsole(m ConsoleMessage) {
	t.console = append(t.console, m)
	if len(t.console) > maxConsole {
		t.console = t.console[len(t.console)-maxConsole:]
	}
}

func remoteText(a *runtime.RemoteObject) string {
	if a == nil {
		return ""
	}
	if a.Preview != nil && (a.Type == runtime.RemoteObjectTypeObject) && a.Subtype != runtime.RemoteObjectSubtypeNull {
		// console.log({a: 1, f() {}}): the properties, as DevTools shows
		// them, instead of the bare "Object".
		return previewText(a.Preview)
	}
	if len(a.Value) > 0 {
		var s string
		if json.Unmarshal(a.Value, &s) == nil {
			return s
		}
		return string(remoteValue(a.Value))
	}
	if a.UnserializableValue != "" {
		return string(a.UnserializableValue)
	}
	if a.Description != "" {
		return a.Description
	}
	return string(a.Type)
}

// previewText writes an object preview of a console argument as DevTools
// does: "{a: 1, f: ƒ, big: 10n, self: Object}", "Array(3) [1, 2, 3]";
// values JSON cannot hold (functions, BigInts, Symbols, undefined, cycles)
// are written by their description, never dropped.
func previewText(p *runtime.ObjectPreview) string {
	var b strings.Builder
	arr := p.Subtype == runtime.ObjectPreviewSubtypeArray || p.Subtype == runtime.ObjectPreviewSubtypeTypedarray
	if arr {
		if p.Description != "" {
			b.WriteString(p.Description + " ")
		}
		b.WriteByte('[')
	} else {
		if p.Description != "" && p.Description != "Object" {
			b.WriteString(p.Description + " ")
		}
		b.WriteByte('{')
	}
	for i, pp := range p.Properties {
		if i > 0 {
			b.WriteString(", ")
		}
		if !arr {
			b.WriteString(pp.Name + ": ")
		}
		switch {
		case pp.Type == runtime.PropertyPreviewTypeFunction:
			b.WriteString("ƒ")
		case pp.Type == runtime.PropertyPreviewTypeString:
			b.WriteString(strconv.Quote(pp.Value))
		case pp.Type == runtime.PropertyPreviewTypeUndefined:
			b.WriteString("undefined")
		case pp.ValuePreview != nil:
			b.WriteString(previewText(pp.ValuePreview))
		case pp.Value != "":
			b.WriteString(pp.Value)
		default:
			b.WriteString(string(pp.Type))
		}
	}
	if p.Overflow {
		b.WriteString(", …")
	}
	if arr {
		b.WriteByte(']')
	} else {
		b.WriteByte('}')
	}
	return b.String()
}

// Console returns the buffered console messages and exceptions; clear empties
// the buffer after reading.
func (t *Tab) Console(clear bool) []ConsoleMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]ConsoleMessage(nil), t.console...)
	if clear {
		t.console = nil
	}
	return out
}

// DialogMark returns a marker for DialogsSince.
func (t *Tab) DialogMark() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dialogSeq
}

// DialogsSince returns the dialogs that opened after mark.
func (t *Tab) DialogsSince(mark int64) []Dialog {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Dialog
	for _, d := range t.dialogs {
		if d.seq > mark {
			out = append(out, d)
		}
	}
	return out
}

// DocLoad is what the tab saw of its latest main-frame document request
// (Network domain events): its URL after redirects, the response's status,
// MIME type and Content-Disposition, or Chromium's net error.
type DocLoad struct {
	Seq        int64  // counts main-frame document requests (compare Activity.DocLoads)
	URL        string // the request URL after redirects
	Status     int    // HTTP status; 0 before (or without) a response
	MIMEType   string
	Attachment bool   // Content-Disposition: attachment
	ErrorText  string // net::ERR_… when the request failed (not when it was cancelled)
}

// LastDocLoad returns the latest main-frame document request's DocLoad.
func (t *Tab) LastDocLoad() DocLoad {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.docLoad
}

// Activity is a snapshot of the tab's navigation and network state.
type Activity struct {
	NavSeq, DocSeq int64
	DocLoads       int64 // DocLoad.Seq: main-frame document requests started
	Loading        bool
	Inflight       int
	LastNet        time.Time
	LastNav        time.Time       // the latest main-frame navigation event (zero before any)
	Changed        <-chan struct{} // closed at the next state change
}

// Activity returns the tab's current navigation and network state.
func (t *Tab) Activity() Activity {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	now := time.Now()
	for _, at := range t.inflight {
		// A request pending for over 5 s (long poll, hung beacon) no longer
		// counts as the page being busy.
		if now.Sub(at) < 5*time.Second {
			n++
		}
	}
	return Activity{NavSeq: t.navSeq, DocSeq: t.docSeq, DocLoads: t.docLoad.Seq, Loading: t.loading, Inflight: n, LastNet: t.lastNet, LastNav: t.lastNav, Changed: t.changed}
}
