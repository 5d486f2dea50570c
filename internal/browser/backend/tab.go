package backend

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

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
	// DisposeOnDetach has Chromium dispose the tab's BrowserContext when the
	// CDP connection that created it closes (CDP Target.createBrowserContext
	// disposeOnDetach): a browser node's sessions end with the replica that
	// drives them (issue 19).
	DisposeOnDetach bool
	// Detach makes the tab outlive this connection: closing it (Close, or
	// the connection ending) detaches from the target and leaves the tab
	// and its BrowserContext, created without disposeOnDetach
	// (chromedp.WithDetachOnCancel), for another connection to attach
	// (AttachTab). Dispose ends them. A browser node's handle sessions
	// (issue 19) are opened so; DisposeOnDetach is ignored then.
	Detach bool
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
	if o.Detach {
		copts = append(copts, chromedp.WithDetachOnCancel())
	}
	if !o.Unproxied {
		copts = append(copts, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
			p.ProxyServer = o.ProxyURL
			p.ProxyBypassList = "<-loopback>"
			if o.DisposeOnDetach && !o.Detach {
				p.DisposeOnDetach = &o.DisposeOnDetach
			}
		}))
	}
	tctx, cancel := chromedp.NewContext(l.browserCtx, copts...)
	t := &Tab{l: l, ctx: tctx, cancel: cancel, policy: o.DialogPolicy, onClose: o.OnClose, onTop: o.OnTopLevel, proxyUser: o.ProxyUser, proxyPass: o.ProxyPass,
		dialogTimeout: o.DialogTimeout,
		inflight:      map[network.RequestID]time.Time{}, lifecycle: map[string]bool{}, seen: map[cdp.LoaderID]bool{}, changed: make(chan struct{})}
	err := attachWithin(ctx, tctx)
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
	return l.track(t, cancel, "Opening a browser tab", err)
}

// AttachTab attaches to the existing tab targetID of BrowserContext bctx
// (a tab another connection opened with TabOptions.Detach, issue 19) and
// returns it with its own event loop: closing it detaches and leaves the
// tab (Dispose ends it). Console messages, dialogs and downloads are
// those seen from the attach on. The proxy credential is not primed again
// (the BrowserContext's auth cache holds it); o's proxy fields are
// ignored. Errors are browser_failed.
func (l *Local) AttachTab(ctx context.Context, targetID, bctx string, o TabOptions) (*Tab, error) {
	if !l.Alive() {
		return nil, reason.New(reason.BrowserFailed, "", "The browser is not running.")
	}
	if targetID == "" {
		return nil, errors.New("backend: AttachTab needs a target id")
	}
	l.attaches.Add(1)
	tctx, cancel := chromedp.NewContext(l.browserCtx, chromedp.WithTargetID(target.ID(targetID)), chromedp.WithDetachOnCancel())
	t := &Tab{l: l, ctx: tctx, cancel: cancel, policy: o.DialogPolicy, onClose: o.OnClose, onTop: o.OnTopLevel,
		dialogTimeout: o.DialogTimeout, frame: cdp.FrameID(targetID), bctx: cdp.BrowserContextID(bctx),
		inflight: map[network.RequestID]time.Time{}, lifecycle: map[string]bool{}, seen: map[cdp.LoaderID]bool{}, changed: make(chan struct{})}
	err := attachWithin(ctx, tctx)
	if err == nil {
		err = chromedp.Listen(tctx, t.onEvent)
	}
	if err == nil {
		err = t.startExt(ctx, o, true)
	}
	return l.track(t, cancel, "Attaching to a browser tab", err)
}

// Attaches is the number of AttachTab calls on l (tests, diagnostics).
func (l *Local) Attaches() int64 { return l.attaches.Load() }

// track ends a tab's opening (NewTab, AttachTab): on err, or when the
// browser closed meanwhile, the tab's context is cancelled and the error
// returned (Failure naming what, or browser_failed "shutting down");
// else the tab is counted among the browser's and returned.
func (l *Local) track(t *Tab, cancel context.CancelFunc, what string, err error) (*Tab, error) {
	if err != nil {
		cancel()
		return nil, Failure(what, err)
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

// TargetID is the tab's CDP target id (its main frame id).
func (t *Tab) TargetID() string { return string(t.frame) }

// BrowserContextID is the id of the tab's own BrowserContext ("" for the
// default one).
func (t *Tab) BrowserContextID() string { return string(t.bctx) }

// Dispose closes the tab and disposes its BrowserContext also when the tab
// was opened with TabOptions.Detach or attached (AttachTab): the session's
// page, cookies and storage are gone. Idempotent.
func (t *Tab) Dispose() error {
	err := t.Close()
	if t.bctx != "" {
		if derr := t.l.DisposeContext(context.Background(), string(t.bctx)); err == nil {
			err = derr
		}
	}
	return err
}

// DisposeContext disposes BrowserContext id and closes its tabs (CDP
// Target.disposeBrowserContext), within 5 s.
func (l *Local) DisposeContext(ctx context.Context, id string) error {
	if id == "" || !l.Alive() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rctx, rcancel := context.WithCancel(l.browserCtx)
	defer rcancel()
	stop := context.AfterFunc(ctx, rcancel)
	defer stop()
	_, err := chromedp.CallBrowser(rctx, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: cdp.BrowserContextID(id)})
	return err
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

// FrameID names a frame of a tab (CDP's Page.FrameId), so that callers of
// this package need not import cdproto (chromedp stays inside this package).
type FrameID = cdp.FrameID

// attachWithin runs chromedp.Do(cctx) (attaching cctx to its target, or
// starting the tab) and returns its error, or ctx.Err() when ctx ends first;
// the attach goes on in the background then, and cancelling cctx ends it.
func attachWithin(ctx, cctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(cctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
