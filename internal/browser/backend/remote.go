package backend

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Connect attaches to a browser that is already running, at its WebSocket
// debugger URL (spec §B12 CDP override; resolve it first with
// cloud.ResolveCDPURL), over a WebSocket dialed by dial (egress.Guard's
// DialContext: the address is judged when it is connected). No process is
// started or owned: PID is 0, there is no profile dir, and Close only
// disposes the sessions' BrowserContexts and disconnects — it never closes
// the browser. A gate's refusal by dial keeps its reason code
// (ssrf_metadata, ssrf_private, dns_unresolvable, …); other errors,
// including a connection that fails, are browser_failed naming the failure.
func Connect(ctx context.Context, wsURL string, dial DialFunc, lg *slog.Logger) (*Local, error) {
	return ConnectHeader(ctx, wsURL, nil, dial, lg)
}

// ConnectHeader is Connect sending header with the WebSocket handshake (a
// browser node's bearer token, issue 19).
func ConnectHeader(ctx context.Context, wsURL string, header http.Header, dial DialFunc, lg *slog.Logger) (*Local, error) {
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	allocCtx, allocCancel := chromedp.NewAllocatorContext(context.Background(), &remoteAllocator{wsURL: wsURL, header: header, dial: dial})
	bctx, cancel := chromedp.NewContext(allocCtx)
	l := &Local{logger: lg, allocCtx: allocCtx, allocCancel: allocCancel, browserCtx: bctx, cancel: cancel,
		tabs: map[*Tab]struct{}{}, exited: make(chan struct{}), remote: true}
	startErr := make(chan error, 1)
	go func() { startErr <- chromedp.Do(bctx) }()
	var err error
	select {
	case err = <-startErr:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(15 * time.Second):
		err = errors.New("the CDP endpoint did not answer within 15 s")
	}
	if err != nil {
		l.Close()
		if rerr := reason.As(err); rerr != nil && rerr.Gate != "" {
			return nil, rerr // a gate's refusal keeps its code
		}
		return nil, reason.Wrap(reason.BrowserFailed, "", "Could not connect to the browser at the CDP URL: "+firstLine(err.Error()), err)
	}
	return l, nil
}

// Remote reports whether l is attached to a browser it does not own.
func (l *Local) Remote() bool { return l.remote }
