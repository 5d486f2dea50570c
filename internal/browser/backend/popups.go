package backend

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Popup is a tab the page opened (window.open, a target=_blank link) in the
// session's BrowserContext.
type Popup struct {
	TargetID target.ID `json:"-"`
	URL      string    `json:"url"`
	taken    bool
}

// tabExt is the tab's popup and download state (under Tab.mu).
type tabExt struct {
	opts      TabOptions
	popups    []Popup
	downloads []*Download
	opener    *Tab // the tab this popup tab was adopted from (closed with it)
}

// startExt hooks the browser-level events the tab needs (targets it opens,
// its downloads) and sets the BrowserContext's download behaviour. It runs
// once the tab's target exists.
func (t *Tab) startExt(ctx context.Context, o TabOptions, setBehavior bool) error {
	t.ext.opts = o
	if err := chromedp.ListenBrowser(t.ctx, t.onBrowserEvent); err != nil {
		return err
	}
	if o.DownloadDir == "" || !setBehavior {
		return nil
	}
	yes := true
	rctx, cancel := t.runAny(ctx)
	defer cancel()
	// t.bctx, not chromedp's context's: an attached tab (AttachTab) has
	// none there, and the call would set the default context's behaviour.
	_, err := chromedp.CallBrowser(rctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, BrowserContextID: t.bctx,
		DownloadPath: o.DownloadDir, EventsEnabled: &yes,
	})
	return err
}

// onBrowserEvent runs on the browser's message loop: it must not block or
// call CDP.
func (t *Tab) onBrowserEvent(ev any) {
	t.topLevelTarget(ev) // toplevel.go
	switch e := ev.(type) {
	case *target.EventTargetCreated:
		info := e.TargetInfo
		// A popup is a page this tab opened, in its own BrowserContext: a
		// target without an opener (made over CDP, e.g. another session's tab
		// or a spare) or in another context is never one.
		if info == nil || info.Type != "page" || info.OpenerID == "" || info.OpenerID != target.ID(t.frame) ||
			(t.bctx != "" && info.BrowserContextID != t.bctx) {
			return
		}
		t.mu.Lock()
		t.ext.popups = append(t.ext.popups, Popup{TargetID: info.TargetID, URL: info.URL})
		t.bumpLocked()
		t.mu.Unlock()
	case *target.EventTargetInfoChanged:
		info := e.TargetInfo
		if info == nil {
			return
		}
		t.mu.Lock()
		for i := range t.ext.popups {
			if t.ext.popups[i].TargetID == info.TargetID {
				t.ext.popups[i].URL = info.URL
			}
		}
		t.mu.Unlock()
	case *browser.EventDownloadWillBegin:
		t.downloadBegin(e)
	case *browser.EventDownloadProgress:
		t.downloadProgress(e)
	}
}

// ownsFrameLocked reports whether frame is this tab's main frame or the main
// frame of a popup it opened (a target=_blank download link).
func (t *Tab) ownsFrameLocked(f cdp.FrameID) bool {
	if f == t.frame {
		return true
	}
	for _, p := range t.ext.popups {
		if string(p.TargetID) == string(f) {
			return true
		}
	}
	return false
}

// TakePopups returns the popups opened since the last call.
func (t *Tab) TakePopups() []Popup {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Popup
	for i := range t.ext.popups {
		if !t.ext.popups[i].taken {
			t.ext.popups[i].taken = true
			out = append(out, t.ext.popups[i])
		}
	}
	return out
}

// Opener returns the tab this one was adopted from (nil for a session's own
// tab).
func (t *Tab) Opener() *Tab {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ext.opener
}

// Adopt attaches a Tab to the popup p that t opened, with t's options; the
// new tab's Close also closes t (the session holds only its newest tab), and
// CloseAlone closes only the popup (browser_back to the opener).
func (t *Tab) Adopt(ctx context.Context, p Popup) (*Tab, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	n := &Tab{l: t.l, bctx: t.bctx, policy: t.policy, dialogTimeout: t.dialogTimeout, onTop: t.onTop,
		inflight: map[network.RequestID]time.Time{}, lifecycle: map[string]bool{}, seen: map[cdp.LoaderID]bool{}, changed: make(chan struct{})}
	n.ctx, n.cancel = chromedp.NewContext(t.ctx, chromedp.WithTargetID(p.TargetID), chromedp.WithListener(n.onEvent))
	n.frame = cdp.FrameID(p.TargetID)
	err := attachWithin(ctx, n.ctx)
	n.ext.opener = t
	if err == nil {
		// The BrowserContext's download behaviour is set already.
		err = n.startExt(ctx, t.ext.opts, false)
	}
	if err != nil {
		n.cancel()
		return nil, Failure("Attaching to the new tab", err)
	}
	t.l.mu.Lock()
	t.l.tabs[n] = struct{}{}
	t.l.mu.Unlock()
	return n, nil
}

// CloseAlone closes this popup tab only (not its opener). Idempotent.
func (t *Tab) CloseAlone() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.stopDialogTimerLocked()
	t.bumpLocked()
	t.mu.Unlock()
	cctx, cancel := context.WithTimeout(t.l.browserCtx, 3*time.Second)
	chromedp.CallBrowser(cctx, target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(t.frame)}) //nolint:errcheck // already gone is fine
	cancel()
	t.cancel()
	return nil
}
