// Tab frames: the frame tree, and calls into child frames (same-process
// frames through their execution context, out-of-process frames through
// their own CDP target).

package backend

import (
	"context"
	"encoding/json"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

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
	err := attachWithin(ctx, fctx)
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
