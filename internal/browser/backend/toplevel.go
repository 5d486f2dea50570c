package backend

import (
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
)

// TopLevelPhase says what happened to a top-level document (TopLevel).
type TopLevelPhase int

const (
	// TopLevelNavigating: a main-frame navigation started (its document
	// request is about to be sent); the old document is on its way out.
	TopLevelNavigating TopLevelPhase = iota + 1
	// TopLevelCommitted: URL is now the document of that top-level frame.
	TopLevelCommitted
	// TopLevelGone: the tab or popup closed.
	TopLevelGone
)

// TopLevel reports a change of one top-level document of a tab's
// BrowserContext (TabOptions.OnTopLevel): the tab's own main frame (from its
// page events, at navigation start and at commit) and every other page
// target of the context — popups and tabs the page opened — (from the
// browser's target events, at creation, URL change and destruction).
// Target is the CDP target id (the main frame id of a page target).
type TopLevel struct {
	Target string
	Phase  TopLevelPhase
	URL    string // TopLevelCommitted only
}

// topLevelPageLocked reports the tab's own main-frame navigation start and
// commit to TabOptions.OnTopLevel; it runs in onEvent, under t.mu.
func (t *Tab) topLevelPageLocked(ev any) {
	fn := t.onTop
	if fn == nil {
		return
	}
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Type == network.ResourceTypeDocument && e.FrameID == t.frame {
			fn(TopLevel{Target: string(t.frame), Phase: TopLevelNavigating})
		}
	case *page.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ID == t.frame && e.Frame.ParentID == "" {
			fn(TopLevel{Target: string(t.frame), Phase: TopLevelCommitted, URL: e.Frame.URL})
		}
	}
}

// topLevelTarget reports the other page targets of the tab's
// BrowserContext (popups, tabs the page opened) to TabOptions.OnTopLevel;
// it runs in onBrowserEvent. The tab's own target is reported by
// topLevelPageLocked.
func (t *Tab) topLevelTarget(ev any) {
	fn := t.onTop
	if fn == nil {
		return
	}
	switch e := ev.(type) {
	case *target.EventTargetCreated:
		t.topLevelInfo(fn, e.TargetInfo)
	case *target.EventTargetInfoChanged:
		t.topLevelInfo(fn, e.TargetInfo)
	case *target.EventTargetDestroyed:
		if string(e.TargetID) != string(t.frame) {
			fn(TopLevel{Target: string(e.TargetID), Phase: TopLevelGone})
		}
	}
}

func (t *Tab) topLevelInfo(fn func(TopLevel), info *target.Info) {
	if info == nil || info.Type != "page" || string(info.TargetID) == string(t.frame) ||
		t.bctx == "" || info.BrowserContextID != t.bctx {
		return
	}
	fn(TopLevel{Target: string(info.TargetID), Phase: TopLevelCommitted, URL: info.URL})
}
