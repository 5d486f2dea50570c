package cloud

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
)

// Probe connects to a browser's WebSocket debugger URL over CDP through
// dial (egress.Guard.DialContext: the address is judged at connect time),
// asks for its version and disconnects without closing the browser (the
// provider owns it). It is how a provider's connect URL is verified before
// a session is handed out. ctx bounds it (default 15 s). A refusal by dial
// is returned wrapped (reason.As recovers its code). The CDP work is
// backend.ProbeRemote (chromedp stays inside internal/browser/backend).
func Probe(ctx context.Context, wsURL string, dial backend.DialFunc) (product string, err error) {
	return backend.ProbeRemote(ctx, wsURL, dial)
}
