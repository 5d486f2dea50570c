package node

import (
	"context"
	"errors"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Lost is Attach's error when a handle session is gone: Why says what
// went (its node, its proxy, its tab), for session_lost's message.
type Lost struct {
	Why string
	Err error
}

func (e *Lost) Error() string { return e.Why + ": " + e.Err.Error() }
func (e *Lost) Unwrap() error { return e.Err }

// Attach attaches a replica to the handle session on node id: its session
// proxy (the credential fetched from the node) and its tab target of
// BrowserContext bctx, opened with opts(proxy). While a JavaScript dialog
// the node's dialog watch saw open blocks that tab, the tab is not
// attached (a CDP session attached then gets no answer to Page.enable or
// Runtime.enable until the dialog is answered): tab is nil and dialog
// names it; answer it with the proxy's AnswerDialog, then Attach again.
// Errors: *Lost, or state_unavailable when the registry did not answer.
func (p *Pool) Attach(ctx context.Context, id, proxy, target, bctx string, opts func(SessionProxy) backend.TabOptions) (tab *backend.Tab, px *Proxy, dialog *Dialog, err error) {
	c, err := p.ConnTo(ctx, id)
	switch {
	case reason.Of(err) == reason.StateUnavailable:
		return nil, nil, nil, err
	case errors.Is(err, ErrNodeGone):
		return nil, nil, nil, &Lost{"its browser node is no longer registered", err}
	case err != nil:
		return nil, nil, nil, &Lost{"its browser node does not answer", err}
	}
	if px, err = c.Client.AttachProxy(ctx, proxy); err != nil {
		return nil, nil, nil, &Lost{"its browser node no longer has its session proxy", err}
	}
	if d, open := px.PendingDialog(target); open {
		return nil, px, &d, nil
	}
	if tab, err = c.Browser.AttachTab(ctx, target, bctx, opts(px)); err != nil {
		px.Release()
		return nil, nil, nil, &Lost{"its tab on the browser node is gone", err}
	}
	return tab, px, nil, nil
}

// End disposes BrowserContext bctx and closes session proxy on node id,
// best effort (the node also closes a handle proxy whose index key is
// gone, disposing its context).
func (p *Pool) End(ctx context.Context, id, bctx, proxy string) {
	if c, err := p.ConnTo(ctx, id); err == nil {
		c.Browser.DisposeContext(ctx, bctx) //nolint:errcheck // gone already is fine
		c.Client.CloseProxy(ctx, proxy)
	}
}
