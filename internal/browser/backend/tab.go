package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// WorldName is the name of the isolated JavaScript world Gatehouse's in-page
// scripts run in: it shares the DOM with the page but not its globals, so a
// page script can neither see nor tamper with the ref registry.
const WorldName = "__gatehouse"

// Dialog policies for TabOptions.DialogPolicy (browser.dialog_policy).
const (
	DialogAccept      = "auto_accept"
	DialogDismiss     = "auto_dismiss"
	DialogMustRespond = "must_respond" // left open for Tab.AnswerDialog (dialogs.go)
)

// TabOptions configures NewTab.
type TabOptions struct {
	// ProxyURL is the per-BrowserContext proxy ("http://127.0.0.1:PORT");
	// required unless Unproxied.
	ProxyURL string
	// Unproxied opens the tab in the browser's default BrowserContext with no
	// proxy: for a cloud provider's browser, whose network is the provider's
	// (a loopback proxy of ours is unreachable from there). The URL gates
	// before each navigation are then the only egress control.
	Unproxied bool
	// OnClose, when set, runs once after the tab is closed (by Close or by
	// the browser's Close): a cloud session releases its provider session
	// here, so every path that closes the tab releases it.
	OnClose func()
	// ProxyUser and ProxyPass are the session's proxy credential
	// (egress.ProxySession.Credentials): when set, NewTab gives them to the
	// BrowserContext before its first request (primeProxyAuth). "" = none.
	ProxyUser, ProxyPass string
	// ProxyProbeURL is the URL the proxy answers 204 to once authenticated
	// (egress.ProxyAuthProbeURL); required with a credential.
	ProxyProbeURL string
	// DialogPolicy says what happens when a JavaScript dialog opens:
	// DialogAccept or DialogDismiss close it at once; DialogMustRespond leaves
	// it pending for AnswerDialog, cancels the page calls it blocks (they fail
	// with dialog_pending instead of waiting) and dismisses it after
	// DialogTimeout (spec §B12). Any other value is DialogDismiss.
	DialogPolicy string
	// DialogTimeout is the safety auto-dismiss under DialogMustRespond; ≤ 0
	// means 300 s (spec §B12 browser.dialog_timeout_s).
	DialogTimeout time.Duration
	// DownloadDir receives the files the page downloads (downloads.go); ""
	// leaves Chromium's default (headless: denied).
	DownloadDir string
	// DownloadCap is the size cap per download in bytes; 0 = DefaultDownloadCap.
	DownloadCap int64
	// OnTopLevel, when set, is told of every top-level document change in
	// the tab's BrowserContext (toplevel.go): the session's egress proxy
	// places requests into the private network by it (Private Network
	// Access). It runs on a CDP message loop: it must not block or call CDP.
	OnTopLevel func(TopLevel)
}

// ConsoleMessage is one console API call or uncaught exception of the page.
type ConsoleMessage struct {
	Type   string `json:"type"` // log, warning, error, … ; "exception" for uncaught errors
	Text   string `json:"text"`
	Source string `json:"source"` // "console" or "exception"
}

// Dialog is a JavaScript dialog that opened (and was closed by policy).
type Dialog struct {
	ID            string `json:"id"`   // d1, d2, … in the tab
	Type          string `json:"type"` // alert, confirm, prompt, beforeunload
	Message       string `json:"message"`
	DefaultPrompt string `json:"default_prompt,omitempty"`
	// Action is accepted or dismissed once closed, "pending" while it waits
	// for AnswerDialog (must_respond).
	Action string `json:"action"`
	By     string `json:"by,omitempty"` // who closed it: policy, agent, timeout, navigation, page
	seq    int64
}

// primeProxyAuth gives the BrowserContext its proxy credential before the
// session's first request: with CDP Fetch on (auth challenges reported; every
// request paused and continued, as Chromium reports challenges only for
// requests it intercepts), the tab navigates to probe, the proxy challenges,
// onEvent answers with the credential, the proxy answers 204 (no document is
// committed: the tab stays on its blank page, no history entry); then Fetch is
// turned off. Chromium keeps the credential in the context's auth cache and
// sends it, or answers later challenges with it, for every later request of
// the context (documents, sub-resources, workers, WebSockets), with no CDP
// round trip per request. A request without it gets nothing through the
// proxy (fails closed).
func (t *Tab) primeProxyAuth(ctx context.Context, probe string) error {
	if probe == "" {
		return errors.New("backend: ProxyProbeURL is required with a proxy credential")
	}
	t.mu.Lock()
	t.priming = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.priming = false
		t.mu.Unlock()
	}()
	yes := true
	if _, err := chromedp.Call(t.ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &yes, Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	_, nerr := chromedp.Call(rctx, page.Navigate, page.NavigateParams{URL: probe})
	if _, err := chromedp.Call(t.ctx, fetch.Disable, cdp.Empty{}); err != nil {
		return err
	}
	return nerr
}

// maxConsole bounds the per-tab console buffer (oldest dropped).
const maxConsole = 1000

// Tab is one session's tab in its own BrowserContext. Methods are safe for
// concurrent use, but the browser tools serialise calls per session.
type Tab struct {
	l      *Local
	ctx    context.Context
	cancel context.CancelFunc
	frame  cdp.FrameID
	bctx   cdp.BrowserContextID // the session's own BrowserContext; "" for the default one (Unproxied)
	policy string

	onClose              func()         // TabOptions.OnClose; run once by close
	onTop                func(TopLevel) // TabOptions.OnTopLevel (toplevel.go); set once at creation
	proxyUser, proxyPass string
	priming              bool // primeProxyAuth's Fetch domain is on: onEvent answers its pauses
	dialogTimeout        time.Duration

	mu        sync.Mutex
	console   []ConsoleMessage
	inflight  map[network.RequestID]time.Time
	lastNet   time.Time
	navSeq    int64     // main-frame navigations requested or started
	lastNav   time.Time // the latest main-frame navigation event (requested, started, committed, stopped)
	docSeq    int64     // main-frame documents committed
	loading   bool      // main frame is loading
	loaderID  cdp.LoaderID
	lifecycle map[string]bool       // lifecycle events seen for loaderID
	seen      map[cdp.LoaderID]bool // earlier loaders of the main frame
	dialogs   []Dialog
	dialogSeq int64
	dlg       dialogState       // pending must_respond dialog (dialogs.go)
	ext       tabExt            // popups and downloads (popups.go, downloads.go)
	docReq    network.RequestID // the latest main-frame document request
	docLoad   DocLoad           // what happened to it
	crashed   bool
	closed    bool
	changed   chan struct{} // closed and replaced on every state change

	frameMu sync.Mutex
	oopif   map[cdp.FrameID]*frameTarget // attached out-of-process iframes (frameTargetOf)
}

// frameTarget is a CDP session attached to an out-of-process iframe's target.
type frameTarget struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// NewTab creates an isolated BrowserContext whose traffic goes to o.ProxyURL
// (with <-loopback>, so loopback is proxied too) and opens one tab in it.
// Errors are browser_failed.
func (l *Local) NewTab(ctx context.Context, o TabOptions) (*Tab, error) {
	if !l.Alive() {
		return nil, reason.New(reason.BrowserFailed, "", "The browser is not running.")
	}
	if o.ProxyURL == "" && !o.Unproxied {
		return nil, errors.New("backend: ProxyURL is required")
	}
	var copts []chromedp.ContextOption
	if !o.Unproxied {
		copts = append(copts, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
			p.ProxyServer = o.ProxyURL
			p.ProxyBypassList = "<-loopback>"
		}))
	}
	tctx, cancel := chromedp.NewContext(l.browserCtx, copts...)
	t := &Tab{l: l, ctx: tctx, cancel: cancel, policy: o.DialogPolicy, onClose: o.OnClose, onTop: o.OnTopLevel, proxyUser: o.ProxyUser, proxyPass: o.ProxyPass,
		dialogTimeout: o.DialogTimeout,
		inflight:      map[network.RequestID]time.Time{}, lifecycle: map[string]bool{}, seen: map[cdp.LoaderID]bool{}, changed: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(tctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		// The frame (and context) ids before any listener runs: onBrowserEvent
		// matches a popup's opener and context against them.
		c := chromedp.FromContext(tctx)
		t.frame, t.bctx = cdp.FrameID(c.Target.TargetID), c.BrowserContextID
		err = chromedp.Listen(tctx, t.onEvent)
	}
	if err == nil {
		err = t.startExt(ctx, o, true)
	}
	if err == nil && o.ProxyUser != "" {
		err = t.primeProxyAuth(ctx, o.ProxyProbeURL)
	}
	if err != nil {
		cancel()
		return nil, Failure("Opening a browser tab", err)
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		cancel()
		return nil, reason.New(reason.BrowserFailed, "", "The browser is shutting down.")
	}
	l.tabs[t] = struct{}{}
	l.mu.Unlock()
	return t, nil
}

// MainFrame returns the id of the tab's main frame.
func (t *Tab) MainFrame() cdp.FrameID { return t.frame }

// Close closes the tab and disposes its BrowserContext (cookies, storage and
// cache are gone). Idempotent.
func (t *Tab) Close() error {
	err := t.close(true)
	if op := t.Opener(); op != nil { // a popup: its opener goes too (popups.go)
		if oerr := op.Close(); err == nil {
			err = oerr
		}
	}
	return err
}

func (t *Tab) close(untrack bool) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.stopDialogTimerLocked()
	t.bumpLocked()
	t.mu.Unlock()
	if untrack {
		t.l.mu.Lock()
		delete(t.l.tabs, t)
		t.l.mu.Unlock()
	}
	cctx, cancel := context.WithTimeout(t.ctx, 3*time.Second)
	err := chromedp.Cancel(cctx)
	cancel()
	t.cancel()
	if t.onClose != nil {
		t.onClose()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, chromedp.ErrInvalidContext) {
		err = nil
	}
	return err
}

// Healthy reports whether the tab can take commands (not closed, not crashed,
// browser alive).
func (t *Tab) Healthy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.closed && !t.crashed && t.ctx.Err() == nil && t.l.Alive()
}

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
			return // another Fetch user's pause (the render step's resource filter, render.go)
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

func (t *Tab) check() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return reason.New(reason.BrowserFailed, "", "The browser session was closed.")
	}
	if t.crashed {
		return reason.New(reason.BrowserFailed, "", "The tab crashed; the session will be replaced by a fresh one on the next call.")
	}
	return nil
}

// cdpErr maps a CDP call failure to a reason: ctx deadline → command_timeout,
// a dialog that blocks the page → dialog_pending, the caller's cancellation →
// interrupted, a closed or crashed tab → browser_failed, anything else by
// Failure (page_navigated, browser_failed; cdperr.go).
func (t *Tab) cdpErr(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	if rerr := reason.As(err); rerr != nil {
		return rerr
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return reason.Wrap(reason.CommandTimeout, "", what+" timed out (browser.command_timeout).", err)
	}
	if derr := t.dialogErr(err); derr != nil {
		return derr
	}
	if errors.Is(err, context.Canceled) && t.ctx.Err() == nil {
		return reason.Wrap(reason.Interrupted, "", what+" was cancelled.", err)
	}
	if cerr := t.check(); cerr != nil {
		return cerr
	}
	return Failure(what, err) // never the protocol's own text (cdperr.go)
}

// run joins the caller's deadline with the tab's lifetime; a must_respond
// dialog that opens (or is open) cancels it (dialogs.go).
func (t *Tab) run(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := t.runAny(ctx)
	undo := t.cancelOnDialog(cancel)
	return c, func() { undo(); cancel() }
}

// runAny is run for calls the browser process answers even while a dialog
// blocks the page (navigation history).
func (t *Tab) runAny(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(t.ctx)
	stop := context.AfterFunc(ctx, cancel)
	if dl, ok := ctx.Deadline(); ok {
		var cancel2 context.CancelFunc
		c, cancel2 = context.WithDeadline(c, dl)
		return c, func() { cancel2(); stop(); cancel() }
	}
	return c, func() { stop(); cancel() }
}

// currentRetryWait bounds Current's wait for a page between two documents.
const currentRetryWait = 200 * time.Millisecond

// NavResult is the outcome of Navigate or Back.
type NavResult struct {
	URL       string // final URL after redirects
	Title     string
	ErrorText string // Chromium's net error (net::ERR_…) when the load failed
}

// Navigate loads url in the tab and waits for its load event (bounded by ctx).
// A load error (net::ERR_…, e.g. the proxy refused the tunnel) is returned in
// NavResult.ErrorText with a nil error; err is for CDP failures and timeouts.
func (t *Tab) Navigate(ctx context.Context, url string) (NavResult, error) {
	return t.NavigateUntil(ctx, url, "load")
}

// NavigateUntil is Navigate waiting for the lifecycle event named event of
// the new document ("DOMContentLoaded", "load", …) instead of the load
// event. Same results and errors as Navigate.
func (t *Tab) NavigateUntil(ctx context.Context, url, event string) (NavResult, error) {
	if err := t.check(); err != nil {
		return NavResult{}, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	res, err := chromedp.Call(rctx, page.Navigate, page.NavigateParams{URL: url})
	if err != nil {
		return NavResult{}, t.cdpErr(ctx, "Navigation", err)
	}
	if res.ErrorText != "" {
		cur, _ := t.Current(ctx)
		cur.ErrorText = res.ErrorText
		return cur, nil
	}
	if res.LoaderID != "" {
		if err := t.waitLifecycle(rctx, res.LoaderID, event); err != nil {
			if _, open := t.PendingDialog(); open {
				return t.Current(ctx) // a dialog blocks the load: report it, don't wait
			}
			return NavResult{}, t.cdpErr(ctx, "Waiting for the page to load", err)
		}
	}
	return t.Current(ctx)
}

func (t *Tab) waitLifecycle(ctx context.Context, loader cdp.LoaderID, name string) error {
	for {
		t.mu.Lock()
		// Done when this loader fired the event, or when a later document
		// replaced it (a script redirect) and that one fired it.
		done := t.lifecycle[name] && (t.loaderID == loader || t.seen[loader])
		ch := t.changed
		crashed := t.crashed || t.closed
		t.mu.Unlock()
		if done {
			return nil
		}
		if crashed {
			return t.check()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Current returns the URL and title of the tab's current history entry.
// While the page is between two documents (Chromium swapping its renderer
// for a navigation) the browser answers "not attached to an active page":
// Current then waits for the next navigation event (at most
// currentRetryWait) and asks once more.
func (t *Tab) Current(ctx context.Context) (NavResult, error) {
	rctx, cancel := t.runAny(ctx)
	defer cancel()
	h, err := chromedp.Call(rctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil && faultOf(err) == faultNavigated {
		wait := time.NewTimer(currentRetryWait)
		select {
		case <-t.Activity().Changed:
		case <-wait.C:
		case <-rctx.Done():
		}
		wait.Stop()
		h, err = chromedp.Call(rctx, page.GetNavigationHistory, cdp.Empty{})
	}
	if err != nil {
		return NavResult{}, t.cdpErr(ctx, "Reading the page URL", err)
	}
	if h.CurrentIndex < 0 || int(h.CurrentIndex) >= len(h.Entries) {
		return NavResult{URL: "about:blank"}, nil
	}
	e := h.Entries[h.CurrentIndex]
	return NavResult{URL: e.URL, Title: e.Title}, nil
}

// Back goes back to the previous page of the tab's history and waits for the
// load (bounded by ctx). about:blank entries (the blank page a session starts
// on, a tab reset after a refusal) are not pages and are skipped. No earlier
// page → no_history, and the tab is left as it was.
func (t *Tab) Back(ctx context.Context) (NavResult, error) {
	if err := t.check(); err != nil {
		return NavResult{}, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	h, err := chromedp.Call(rctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return NavResult{}, t.cdpErr(ctx, "Reading history", err)
	}
	to := -1
	for i := min(int(h.CurrentIndex), len(h.Entries)) - 1; i >= 0; i-- {
		if h.Entries[i].URL != "about:blank" {
			to = i
			break
		}
	}
	if to < 0 {
		return NavResult{}, reason.New(reason.NoHistory, "", "There is no earlier page in this tab's history (this is the first page of the session); the page was left as it is. Use browser_navigate to open another page.")
	}
	before := t.Activity().DocSeq
	if _, err := chromedp.Call(rctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[to].ID}); err != nil {
		return NavResult{}, t.cdpErr(ctx, "Going back", err)
	}
	// Wait for the committed document (bfcache restores fire no load event).
	for {
		a := t.Activity()
		if a.DocSeq > before && !a.Loading {
			break
		}
		select {
		case <-a.Changed:
		case <-rctx.Done():
			return NavResult{}, t.cdpErr(ctx, "Going back", rctx.Err())
		}
	}
	return t.Current(ctx)
}

// CallIsolated calls the JavaScript function declaration fn with args (JSON
// values) in Gatehouse's isolated world of the main frame, awaits a returned
// promise, and returns the JSON result. A JavaScript exception is an
// eval_failed error with its text.
func (t *Tab) CallIsolated(ctx context.Context, fn string, args ...any) (json.RawMessage, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	w, err := chromedp.Call(rctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: t.frame, WorldName: WorldName})
	if err != nil {
		return nil, t.cdpErr(ctx, "Preparing the page script", err)
	}
	return t.callOn(ctx, rctx, w.ExecutionContextID, fn, args)
}

func (t *Tab) callOn(ctx, rctx context.Context, ec runtime.ExecutionContextID, fn string, args []any) (json.RawMessage, error) {
	cargs, err := callArgs(args)
	if err != nil {
		return nil, err
	}
	yes := true
	res, err := chromedp.Call(rctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn, ExecutionContextID: ec, Arguments: cargs,
		ReturnByValue: &yes, AwaitPromise: &yes, Silent: &yes,
	})
	if err != nil {
		return nil, t.cdpErr(ctx, "Running the page script", err)
	}
	if res.ExceptionDetails != nil {
		return nil, reason.New(reason.EvalFailed, "", "The page script failed: "+exceptionText(res.ExceptionDetails))
	}
	if res.Result == nil {
		return json.RawMessage("null"), nil
	}
	if len(res.Result.Value) == 0 {
		return json.RawMessage("null"), nil
	}
	return remoteValue(res.Result.Value), nil
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return firstLine(d.Exception.Description)
	}
	return firstLine(d.Text)
}

// EvalResult is the value of a page-world evaluation.
type EvalResult struct {
	// Value is the JSON value; nil when the value has no JSON form
	// (Description says what it is then).
	Value json.RawMessage
	// Type is the JavaScript type (string, number, boolean, object,
	// function, bigint, symbol, undefined), or an object's subtype (node,
	// array, map, set, regexp, date, error, promise, …; "null" for null).
	Type string
	// Description names a value with no JSON form: "undefined", NaN,
	// Infinity, 10n, Symbol(x), a function's source, a DOM node
	// ("div#main.box"), a Map. With Value set, it is "" unless Value is
	// a copy in which values JSON cannot hold (functions, BigInts,
	// cycles, …) are described in place, which it then says.
	Description string
}

// evalGroup is the object group of EvalPage's remote objects (released after
// each call).
const evalGroup = "__gatehouse_eval"

// EvalPage evaluates expression in the page's own JavaScript world (what the
// page's scripts see) in REPL mode (top-level await; let/const persist between
// calls). A promise result is awaited and its resolved value returned (REPL
// mode only awaits the REPL's own wrapper, so the promise handle is awaited
// with Runtime.awaitPromise). A value with a JSON form is returned by value;
// any other (undefined, NaN, BigInt, a Symbol, a function, a DOM node, a Map
// or Set, a cyclic object, …) comes back as its Description, never as a
// misleading {}. An exception or a rejected promise is eval_failed.
//
// An expression still running at ctx's deadline (a busy loop: the renderer's
// main thread never answers CDP again on its own) is stopped with
// Runtime.terminateExecution (stopScript) and command_timeout is returned; the
// error wraps ErrScriptStopped when the page answered again afterwards, so the
// session is still usable, and not otherwise (the caller recycles it).
func (t *Tab) EvalPage(ctx context.Context, expression string) (EvalResult, error) {
	if err := t.check(); err != nil {
		return EvalResult{}, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	defer func() {
		// Bounded: after a timeout the renderer may still be busy.
		rel, rcancel := t.runAny(context.WithoutCancel(ctx))
		defer rcancel()
		rel, rcancel2 := context.WithTimeout(rel, releaseTimeout)
		defer rcancel2()
		chromedp.Call(rel, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: evalGroup}) //nolint:errcheck // best effort
	}()
	yes := true
	res, err := chromedp.Call(rctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: expression, ObjectGroup: evalGroup, AwaitPromise: &yes, ReplMode: &yes, UserGesture: &yes,
	})
	if err != nil {
		if terr := t.evalTimedOut(ctx, err, "The expression"); terr != nil {
			return EvalResult{}, terr
		}
		return EvalResult{}, t.cdpErr(ctx, "Evaluating the expression", err)
	}
	if res.ExceptionDetails != nil {
		return EvalResult{}, reason.New(reason.EvalFailed, "", "The expression threw: "+exceptionText(res.ExceptionDetails))
	}
	obj := res.Result
	if obj != nil && obj.Subtype == runtime.RemoteObjectSubtypePromise && obj.ObjectID != "" {
		ar, err := chromedp.Call(rctx, runtime.AwaitPromise, runtime.AwaitPromiseParams{PromiseObjectID: obj.ObjectID})
		if err != nil {
			if terr := t.evalTimedOut(ctx, err, "The expression's promise"); terr != nil {
				return EvalResult{}, terr
			}
			return EvalResult{}, t.cdpErr(ctx, "Awaiting the expression's promise", err)
		}
		if ar.ExceptionDetails != nil {
			return EvalResult{}, reason.New(reason.EvalFailed, "", "The expression's promise rejected: "+exceptionText(ar.ExceptionDetails))
		}
		obj = ar.Result
	}
	return t.evalValue(rctx, ctx, obj)
}

// ErrScriptStopped is wrapped by EvalPage's command_timeout when the
// expression was stopped and the page answered again: the tab is usable and
// need not be recycled.
var ErrScriptStopped = errors.New("the script was stopped (Runtime.terminateExecution) and the page answers again")

// Bounds of the clean-up after an evaluation (seconds of wall time, not part
// of browser.command_timeout): stopping a script that overran it, and
// releasing the evaluation's objects.
const (
	stopScriptTimeout = 3 * time.Second
	releaseTimeout    = 2 * time.Second
)

// evalTimedOut is EvalPage's handling of a call that failed at ctx's
// deadline: the script is stopped (stopScript) and command_timeout returned,
// wrapping ErrScriptStopped when the page answers again. nil when err is not
// a deadline (a call the caller cancelled has its script stopped too, best
// effort).
func (t *Tab) evalTimedOut(ctx context.Context, err error, what string) error {
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if errors.Is(ctx.Err(), context.Canceled) {
			t.stopScript(ctx) // the caller gave up: the script must not keep the page busy
		}
		return nil
	}
	if t.stopScript(ctx) {
		return reason.Wrap(reason.CommandTimeout, "", what+" did not finish within browser.command_timeout; Gatehouse stopped it (Runtime.terminateExecution) and the page is usable again.", ErrScriptStopped)
	}
	return reason.Wrap(reason.CommandTimeout, "", what+" did not finish within browser.command_timeout and the page did not answer after it was stopped; the session will be replaced by a fresh one on the next call.", err)
}

// Responsive reports whether the page's main thread answers a trivial
// evaluation within d: false while a script spins (or the tab is gone).
func (t *Tab) Responsive(ctx context.Context, d time.Duration) bool {
	if t.check() != nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	rctx, rcancel := t.runAny(pctx)
	defer rcancel()
	_, err := chromedp.Call(rctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "0"})
	return err == nil
}

// StopScript is stopScript for callers outside EvalPage (the render step): it
// ends the script the page's main thread is busy with and reports whether
// the page answers again.
func (t *Tab) StopScript(ctx context.Context) bool { return t.stopScript(ctx) }

// stopScript ends the JavaScript execution the page's main thread is busy
// with (Runtime.terminateExecution: Chromium delivers it as a V8 interrupt,
// so it works while a loop spins) and reports whether the renderer answers a
// probe evaluation afterwards, within stopScriptTimeout. The probe also takes
// a termination that found no script running (the command then ends "the
// next" execution, which would otherwise be the page's own or Gatehouse's
// next call).
func (t *Tab) stopScript(ctx context.Context) bool {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopScriptTimeout)
	defer cancel()
	rctx, rcancel := t.runAny(sctx)
	defer rcancel()
	if _, err := chromedp.Call(rctx, runtime.TerminateExecution, cdp.Empty{}); err != nil {
		return false
	}
	_, err := chromedp.Call(rctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "0"})
	return err == nil
}

// evalValue turns a remote object into an EvalResult (see EvalPage).
func (t *Tab) evalValue(rctx, ctx context.Context, o *runtime.RemoteObject) (EvalResult, error) {
	if o == nil {
		return EvalResult{Type: "undefined", Description: "undefined"}, nil
	}
	out := EvalResult{Type: string(o.Type)}
	if o.Subtype != "" {
		out.Type = string(o.Subtype)
	}
	switch {
	case o.Type == runtime.RemoteObjectTypeUndefined:
		out.Description = "undefined"
		return out, nil
	case o.UnserializableValue != "": // NaN, ±Infinity, -0, BigInt
		out.Description = string(o.UnserializableValue)
		return out, nil
	case o.ObjectID == "" && len(o.Value) > 0: // string, number, boolean, null
		out.Value = remoteValue(o.Value)
		return out, nil
	case o.Subtype == runtime.RemoteObjectSubtypeNull:
		out.Value = json.RawMessage("null")
		return out, nil
	}
	if o.Type == runtime.RemoteObjectTypeObject && (o.Subtype == "" || o.Subtype == runtime.RemoteObjectSubtypeArray) && o.ObjectID != "" {
		// A plain object or array: its value, when V8 can serialise it.
		yes := true
		r, err := chromedp.Call(rctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: "function () { return this; }", ObjectID: o.ObjectID, ReturnByValue: &yes, Silent: &yes,
		})
		if err == nil && r.ExceptionDetails == nil && r.Result != nil && len(r.Result.Value) > 0 {
			out.Value = remoteValue(r.Result.Value)
			return out, nil
		}
		// The call's own context shares ctx's deadline but not its timer:
		// its DeadlineExceeded may arrive while ctx.Err() is still nil.
		if err != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
			if terr := t.evalTimedOut(ctx, err, "Reading the expression's value (a getter)"); terr != nil {
				return EvalResult{}, terr
			}
			return EvalResult{}, t.cdpErr(ctx, "Reading the expression's value", err)
		}
		// Not JSON as a whole (a function, BigInt, Symbol, undefined or
		// cycle inside): a copy with each such value described in place.
		r, err = chromedp.Call(rctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: describeNonJSON, ObjectID: o.ObjectID, ReturnByValue: &yes, Silent: &yes,
		})
		if err == nil && r.ExceptionDetails == nil && r.Result != nil && len(r.Result.Value) > 0 {
			out.Value = remoteValue(r.Result.Value)
			out.Description = "values JSON cannot hold are described in place as \"[kind] …\" strings (functions, BigInts, Symbols, undefined, cycles as \"[cycle]\")"
			return out, nil
		}
		if err != nil && ctx.Err() != nil {
			return EvalResult{}, t.cdpErr(ctx, "Reading the expression's value", err)
		}
		why := "it cannot be converted to JSON (a cycle, or a BigInt, Symbol or function inside)"
		if err != nil && strings.Contains(err.Error(), "reference chain is too long") {
			why = "it refers to itself (a cycle) or is nested too deeply for JSON"
		}
		out.Description = describe(o) + ": " + why
		return out, nil
	}
	out.Description = describe(o) // function, symbol, node, map, set, regexp, date, error, …
	return out, nil
}

// describeNonJSON (run on an object by CallFunctionOn) returns a JSON-safe
// copy of it: functions, BigInts, Symbols and undefined become "[kind]
// text" strings, a value met again on the way down "[cycle]", anything
// deeper than 20 levels "[nested too deeply]", arrays and objects past
// 1000 entries are cut with a "[… N more]" entry, DOM nodes, Maps, Sets,
// Dates and RegExps are described by their kind and text.
const describeNonJSON = `function () {
  const seen = new Set();
  const cap = (s) => s.length > 200 ? s.slice(0, 199) + '…' : s;
  const walk = (v, depth) => {
    switch (typeof v) {
      case 'function': return '[function] ' + cap(String(v.name || 'anonymous'));
      case 'bigint': return '[bigint] ' + v.toString() + 'n';
      case 'symbol': return '[symbol] ' + cap(v.toString());
      case 'undefined': return '[undefined]';
      case 'number': return Number.isFinite(v) ? v : '[number] ' + String(v);
      case 'object': break;
      default: return v;
    }
    if (v === null) return null;
    if (seen.has(v)) return '[cycle]';
    if (depth > 20) return '[nested too deeply]';
    if (typeof Node !== 'undefined' && v instanceof Node) return '[node] ' + cap(v.nodeName);
    if (v instanceof Date) return '[date] ' + (isNaN(v) ? 'Invalid Date' : v.toISOString());
    if (v instanceof RegExp) return '[regexp] ' + cap(String(v));
    if (v instanceof Map) return '[map] ' + v.size + ' entries';
    if (v instanceof Set) return '[set] ' + v.size + ' values';
    if (v instanceof Error) return '[error] ' + cap(String(v));
    seen.add(v);
    let out;
    if (Array.isArray(v)) {
      out = v.slice(0, 1000).map((x) => walk(x, depth + 1));
      if (v.length > 1000) out.push('[… ' + (v.length - 1000) + ' more]');
    } else {
      out = {};
      const keys = Object.keys(v);
      for (const k of keys.slice(0, 1000)) {
        let x;
        try { x = v[k]; } catch (e) { x = '[getter threw] ' + cap(String(e)); }
        out[k] = walk(x, depth + 1);
      }
      if (keys.length > 1000) out['…'] = '[' + (keys.length - 1000) + ' more]';
    }
    seen.delete(v);
    return out;
  };
  return walk(this, 0);
}`

// describe is a remote object's description with its kind.
func describe(o *runtime.RemoteObject) string {
	d := o.Description
	if d == "" {
		d = string(o.Type)
	}
	if r := []rune(d); len(r) > 2000 {
		d = string(r[:2000]) + "…"
	}
	kind := string(o.Type)
	if o.Subtype != "" {
		kind = string(o.Subtype)
	}
	if o.ClassName != "" && o.ClassName != d && kind != "function" {
		kind += " " + o.ClassName
	}
	return "[" + kind + "] " + d
}

// Click presses and releases the left mouse button at (x, y), CSS pixels of the
// main frame's viewport, after moving the mouse there.
func (t *Tab) Click(ctx context.Context, x, y float64) error {
	if err := t.check(); err != nil {
		return err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	for _, p := range []input.DispatchMouseEventParams{
		{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y},
		{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
		{Type: input.DispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1},
	} {
		if _, err := chromedp.Call(rctx, input.DispatchMouseEvent, p); err != nil {
			return t.cdpErr(ctx, "Clicking", err)
		}
	}
	return nil
}

// InsertText types text into the focused element as one input (like an IME
// commit: input events fire, no key events).
func (t *Tab) InsertText(ctx context.Context, text string) error {
	if err := t.check(); err != nil {
		return err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	if _, err := chromedp.Call(rctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		return t.cdpErr(ctx, "Typing", err)
	}
	return nil
}

// keyNames maps DOM key names (case-insensitive) to kb runes; built on
// first use, not in package init (start-up cost, docs/benchmarks.md).
var keyNames = sync.OnceValue(func() map[string]rune {
	m := map[string]rune{"space": ' ', "spacebar": ' ', "esc": '\u001b', "return": '\r'}
	for r, k := range kb.Keys {
		if k.Key != "" && len([]rune(k.Key)) > 1 {
			if _, dup := m[strings.ToLower(k.Key)]; !dup {
				m[strings.ToLower(k.Key)] = r
			}
		}
	}
	return m
})

// KeyRune returns the kb rune for a DOM key name (Enter, Tab, Escape,
// ArrowDown, Backspace, PageDown, …, case-insensitive) or a single character.
func KeyRune(name string) (rune, bool) {
	if rs := []rune(name); len(rs) == 1 {
		return rs[0], true
	}
	r, ok := keyNames()[strings.ToLower(name)]
	return r, ok
}

// Press dispatches the key-down/up events of one key (see KeyRune) to the
// focused element. An unknown key is invalid_key.
func (t *Tab) Press(ctx context.Context, key string) error {
	if err := t.check(); err != nil {
		return err
	}
	r, ok := KeyRune(key)
	if !ok {
		return reason.New(reason.InvalidKey, "", fmt.Sprintf("Unknown key %q; use a DOM key name such as Enter, Tab, Escape, ArrowDown, Backspace or a single character.", key))
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	for _, k := range kb.Encode(r) {
		if _, err := chromedp.Call(rctx, input.DispatchKeyEvent, *k); err != nil {
			return t.cdpErr(ctx, "Pressing "+key, err)
		}
	}
	return nil
}

// Screenshot captures the viewport as PNG bytes.
func (t *Tab) Screenshot(ctx context.Context) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	res, err := chromedp.Call(rctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		return nil, t.cdpErr(ctx, "Taking a screenshot", err)
	}
	return res.Data, nil
}

// Frame is one child frame of the tab's main frame (any depth).
type Frame struct {
	ID       cdp.FrameID
	ParentID cdp.FrameID
	URL      string
	// OutOfProcess marks a frame of another site, which runs in its own
	// renderer process (site isolation) and is its own CDP target.
	OutOfProcess bool
}

// Frames lists the tab's frames below the main frame: the page process's
// frame tree depth first, then the out-of-process iframes (another site, site
// isolation) found among the browser's targets by their parent frame.
// CallIsolatedFrame reaches both kinds.
func (t *Tab) Frames(ctx context.Context) ([]Frame, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	res, err := chromedp.Call(rctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, t.cdpErr(ctx, "Reading the frame tree", err)
	}
	var out []Frame
	var walk func(ft *page.FrameTree)
	walk = func(ft *page.FrameTree) {
		for _, c := range ft.ChildFrames {
			if c.Frame != nil {
				out = append(out, Frame{ID: c.Frame.ID, ParentID: c.Frame.ParentID, URL: c.Frame.URL})
			}
			walk(c)
		}
	}
	if res.FrameTree != nil {
		walk(res.FrameTree)
	}
	// Frames of another site (out-of-process iframes) are not in the page
	// process's frame tree; each is a target of type "iframe" whose
	// parentFrameId names the frame that embeds it.
	if c := chromedp.FromContext(t.ctx); c != nil && c.Browser != nil {
		ts, err := cdp.Call(rctx, c.Browser, target.GetTargets, target.GetTargetsParams{})
		if err == nil {
			known := map[cdp.FrameID]bool{t.frame: true}
			for _, f := range out {
				known[f.ID] = true
			}
			for added := true; added; {
				added = false
				for _, ti := range ts.TargetInfos {
					id := cdp.FrameID(ti.TargetID)
					if ti.Type == "iframe" && known[ti.ParentFrameID] && !known[id] {
						out = append(out, Frame{ID: id, ParentID: ti.ParentFrameID, URL: ti.URL, OutOfProcess: true})
						known[id], added = true, true
					}
				}
			}
		}
	}
	return out, nil
}

// CallIsolatedFrame is CallIsolated in Gatehouse's isolated world of frame.
// A frame of another site runs in its own renderer process (site isolation)
// and is its own CDP target (type "iframe", target id = frame id): the call
// then goes through a session attached to that target (frameTargetOf), kept
// until the tab closes or the target detaches.
func (t *Tab) CallIsolatedFrame(ctx context.Context, frame cdp.FrameID, fn string, args ...any) (json.RawMessage, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	w, err := chromedp.Call(rctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: WorldName})
	if err == nil {
		return t.callOn(ctx, rctx, w.ExecutionContextID, fn, args)
	}
	if rctx.Err() != nil {
		return nil, t.cdpErr(ctx, "Preparing the frame script", err)
	}
	// Not in the page's process: an out-of-process iframe.
	for attempt := 0; attempt < 2; attempt++ {
		ft, ferr := t.frameTargetOf(rctx, frame)
		if ferr != nil {
			return nil, t.cdpErr(ctx, "Attaching to the frame", ferr)
		}
		fctx, fcancel := joinCtx(ft.ctx, rctx)
		w, err = chromedp.Call(fctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: WorldName})
		if err == nil {
			out, cerr := t.callOn(ctx, fctx, w.ExecutionContextID, fn, args)
			fcancel()
			return out, cerr
		}
		fcancel()
		// The target was replaced (the frame navigated to another site) or
		// is gone: attach again once.
		t.dropFrameTarget(frame, ft)
		if rctx.Err() != nil {
			break
		}
	}
	return nil, t.cdpErr(ctx, "Preparing the frame script", err)
}

// frameTargetOf returns the session attached to frame's out-of-process iframe
// target, attaching on first use (chromedp.WithTargetID; detach, never close,
// when done).
func (t *Tab) frameTargetOf(ctx context.Context, frame cdp.FrameID) (*frameTarget, error) {
	t.frameMu.Lock()
	defer t.frameMu.Unlock()
	if ft, ok := t.oopif[frame]; ok && ft.ctx.Err() == nil {
		return ft, nil
	}
	fctx, cancel := chromedp.NewContext(t.ctx, chromedp.WithTargetID(target.ID(frame)), chromedp.WithDetachOnCancel())
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(fctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	if t.oopif == nil {
		t.oopif = map[cdp.FrameID]*frameTarget{}
	}
	ft := &frameTarget{ctx: fctx, cancel: cancel}
	t.oopif[frame] = ft
	return ft, nil
}

func (t *Tab) dropFrameTarget(frame cdp.FrameID, ft *frameTarget) {
	t.frameMu.Lock()
	if t.oopif[frame] == ft {
		delete(t.oopif, frame)
	}
	t.frameMu.Unlock()
	ft.cancel()
}

// joinCtx returns a context of base (its CDP target) that also ends with ctx
// (the caller's deadline or cancellation).
func joinCtx(base, ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(base)
	stop := context.AfterFunc(ctx, cancel)
	if dl, ok := ctx.Deadline(); ok {
		var cancel2 context.CancelFunc
		c, cancel2 = context.WithDeadline(c, dl)
		return c, func() { cancel2(); stop(); cancel() }
	}
	return c, func() { stop(); cancel() }
}

// CallOnFrameOwner calls fn with this = the <iframe> element that owns frame,
// in Gatehouse's isolated world of the frame's parent document.
func (t *Tab) CallOnFrameOwner(ctx context.Context, frame, parent cdp.FrameID, fn string, args ...any) (json.RawMessage, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	if parent == "" {
		parent = t.frame
	}
	own, err := chromedp.Call(rctx, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: frame})
	if err != nil {
		return nil, t.cdpErr(ctx, "Finding the frame's element", err)
	}
	w, err := chromedp.Call(rctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: parent, WorldName: WorldName})
	if err != nil {
		return nil, t.cdpErr(ctx, "Preparing the page script", err)
	}
	obj, err := chromedp.Call(rctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: own.BackendNodeID, ExecutionContextID: w.ExecutionContextID})
	if err != nil || obj.Object == nil {
		return nil, t.cdpErr(ctx, "Resolving the frame's element", err)
	}
	cargs, err := callArgs(args)
	if err != nil {
		return nil, err
	}
	yes := true
	res, err := chromedp.Call(rctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn, ObjectID: obj.Object.ObjectID, Arguments: cargs, ReturnByValue: &yes, AwaitPromise: &yes, Silent: &yes,
	})
	chromedp.Call(rctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: obj.Object.ObjectID}) //nolint:errcheck
	if err != nil {
		return nil, t.cdpErr(ctx, "Running the page script", err)
	}
	if res.ExceptionDetails != nil {
		return nil, reason.New(reason.EvalFailed, "", "The page script failed: "+exceptionText(res.ExceptionDetails))
	}
	if res.Result == nil || len(res.Result.Value) == 0 {
		return json.RawMessage("null"), nil
	}
	return remoteValue(res.Result.Value), nil
}

// callArgs marshals args as Runtime.callFunctionOn arguments (by value).
func callArgs(args []any) ([]*runtime.CallArgument, error) {
	var cargs []*runtime.CallArgument
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		cargs = append(cargs, &runtime.CallArgument{Value: b})
	}
	return cargs, nil
}
