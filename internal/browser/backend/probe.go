package backend

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// ProbeRemote connects to a browser's WebSocket debugger URL over CDP
// through dial (egress.Guard.DialContext: the address is judged at connect
// time), asks for its version and disconnects without closing the browser
// (the provider owns it). ctx bounds it (default 15 s). A refusal by dial is
// returned wrapped (reason.As recovers its code). cloud.Probe is its caller.
func ProbeRemote(ctx context.Context, wsURL string, dial DialFunc) (product string, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
	}
	actx, acancel := NewRemoteAllocator(ctx, wsURL, dial)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err = chromedp.Do(bctx); err == nil {
		var v browser.GetVersionResult
		if v, err = chromedp.Call(bctx, browser.GetVersion, cdp.Empty{}); err == nil {
			product = v.Product
		}
	}
	if err != nil {
		return "", fmt.Errorf("CDP connect %s: %w", wsURL, err)
	}
	return product, nil
}
