package backend

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// TopLevelPhase says what happened to a top-level document (TopLevel).
type TopLevelPhase int

const (
	// TopLevelCommitted: URL is now the document of that top-level frame.
	TopLevelCommitted TopLevelPhase = iota + 1
	// TopLevelGone: the tab or popup closed.
	TopLevelGone
)

// TopLevel reports a change of one top-level document of a tab's
// BrowserContext (TabOptions.OnTopLevel): the tab's own main frame (from its
// page events, at each commit) and every other page target of the context —
// popups and tabs the page opened — (from the browser's target events, at
// creation, URL change and destruction). Target is the CDP target id (the
// main frame id of a page target).
type TopLevel struct {
	Target string
	Phase  TopLevelPhase
	URL    string // TopLevelCommitted only
	// Opener is the target that opened this one (a popup), "" for the
	// tab's own frame: a popup's initial about:blank document belongs to
	// its opener (HTML's "creator" of an initial empty document).
	Opener string
}

// topLevelPageLocked reports each commit of the tab's own main frame to
// TabOptions.OnTopLevel; it runs in onEvent, under t.mu. (Page.frameNavigated
// is sent by the renderer when it commits, before the new document's parser
// asks for anything.)
func (t *Tab) topLevelPageLocked(ev any) {
	if t.onTop == nil {
		return
	}
	if e, ok := ev.(*page.EventFrameNavigated); ok && e.Frame != nil && e.Frame.ID == t.frame && e.Frame.ParentID == "" {
		t.onTop(TopLevel{Target: string(t.frame), Phase: TopLevelCommitted, URL: e.Frame.URL})
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
	fn(TopLevel{Target: string(info.TargetID), Phase: TopLevelCommitted, URL: info.URL, Opener: string(info.OpenerID)})
}

// CloseTopLevels closes the page targets ids of the tab's BrowserContext
// (popups and tabs a page opened; the ids TopLevel reported) and reports how
// many it closed. The tab's own target is never closed. Targets already gone
// are skipped; CDP errors count as not closed.
func (t *Tab) CloseTopLevels(ctx context.Context, ids []string) int {
	n := 0
	for _, id := range ids {
		if id == string(t.frame) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		cctx, cancel := context.WithTimeout(t.l.browserCtx, 3*time.Second)
		_, err := chromedp.CallBrowser(cctx, target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(id)})
		cancel()
		if err == nil {
			n++
		}
	}
	return n
}
