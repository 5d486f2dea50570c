package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// DialFunc opens a TCP connection to addr ("host:port"). Gatehouse passes
// egress.Guard.DialContext, so the CDP WebSocket of a browser it attaches to
// is dialed — and its address judged at connect time — like every other
// connection it opens (DESIGN.md §1).
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// cdpDialTimeout bounds the TCP connect and WebSocket handshake to a CDP
// endpoint (chromedp/remote's default).
const cdpDialTimeout = 10 * time.Second

// cdpMaxMessage is the largest CDP message read (a full-page screenshot in
// base64 is tens of MB; chromedp/remote's limit).
const cdpMaxMessage = 256 << 20

// DialCDP opens the CDP WebSocket at wsURL (ws:// or wss://) over a
// connection made by dial, and returns it as a chromedp.Transport. dial is
// required (nil fails closed): it is the only way this package reaches the
// network. The handshake sends no proxy (none is consulted) and follows no
// redirect. A refusal by dial is returned as is (a *reason.Error from
// egress: ssrf_metadata, ssrf_private, dns_unresolvable, …).
func DialCDP(ctx context.Context, wsURL string, dial DialFunc) (chromedp.Transport, error) {
	return DialCDPHeader(ctx, wsURL, nil, dial)
}

// DialCDPHeader is DialCDP sending header with the WebSocket handshake (a
// browser node's bearer token, issue 19); nil sends none.
func DialCDPHeader(ctx context.Context, wsURL string, header http.Header, dial DialFunc) (chromedp.Transport, error) {
	if dial == nil {
		return nil, errors.New("CDP connect: no dialer (pass egress.Guard.DialContext)")
	}
	// Proxy stays nil: no proxy, never the environment's (internal/archtest
	// checks that every websocket.Dialer sets NetDialContext and no Proxy).
	d := websocket.Dialer{NetDialContext: dial, HandshakeTimeout: cdpDialTimeout}
	ws, resp, err := d.DialContext(ctx, wsURL, header)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("CDP handshake: HTTP %d: %w", resp.StatusCode, err)
		}
		return nil, err
	}
	ws.SetReadLimit(cdpMaxMessage)
	return &cdpConn{ws: ws}, nil
}

// cdpConn is a chromedp.Transport over a gorilla WebSocket: one reader
// (chromedp's read loop), writers serialised by wmu. Pings are answered by
// the library's default handler.
type cdpConn struct {
	ws     *websocket.Conn
	wmu    sync.Mutex
	debugf func(string, ...any)
}

func (c *cdpConn) logf(format string, args ...any) {
	if c.debugf != nil {
		c.debugf(format, args...)
	}
}

// SetDebugf sets the protocol logger (chromedp.NewBrowserTransport calls it).
func (c *cdpConn) SetDebugf(f func(string, ...any)) { c.debugf = f }

// Read reads the next text message into msg.
func (c *cdpConn) Read(_ context.Context, msg *cdproto.Message) error {
	op, data, err := c.ws.ReadMessage()
	if err != nil {
		return err
	}
	if op != websocket.TextMessage {
		return fmt.Errorf("CDP: unexpected WebSocket message type %d", op)
	}
	c.logf("<- %s", data)
	return jsonv2.Unmarshal(data, msg, chromedp.DefaultUnmarshalOptions)
}

// Write writes msg as one text message (Chromium takes no fragmented
// messages).
func (c *cdpConn) Write(_ context.Context, msg *cdproto.Message) error {
	b, err := jsonv2.Marshal(msg, chromedp.DefaultMarshalOptions)
	if err != nil {
		return err
	}
	c.logf("-> %s", b)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// Close closes the connection.
func (c *cdpConn) Close() error { return c.ws.Close() }

// remoteAllocator is a chromedp.Allocator that attaches to a running
// browser at wsURL through dial (chromedp/remote's Allocator, whose
// WebSocket client dials on its own, is not used). It follows
// remote.Allocator's lifetime rules: the connection lives on a context of
// its own, closed only after chromedp.Cancel has closed the pages.
type remoteAllocator struct {
	wsURL  string
	header http.Header
	dial   DialFunc
	wg     sync.WaitGroup
}

// NewRemoteAllocator returns a chromedp allocator context that attaches to
// the browser at wsURL (a WebSocket debugger URL; resolve http roots first
// with cloud.ResolveCDPURL) over a connection made by dial.
func NewRemoteAllocator(parent context.Context, wsURL string, dial DialFunc) (context.Context, context.CancelFunc) {
	return chromedp.NewAllocatorContext(parent, &remoteAllocator{wsURL: wsURL, dial: dial})
}

// Allocate satisfies chromedp.Allocator.
func (a *remoteAllocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	if chromedp.FromContext(ctx) == nil {
		return nil, chromedp.ErrInvalidContext
	}
	wctx, cancel := context.WithCancel(context.Background())
	a.wg.Go(func() {
		<-ctx.Done()
		chromedp.Cancel(ctx) //nolint:errcheck // blocks until the pages are closed
		cancel()
	})
	dctx, dcancel := context.WithTimeout(wctx, cdpDialTimeout)
	defer dcancel()
	conn, err := DialCDPHeader(dctx, a.wsURL, a.header, a.dial)
	if err != nil {
		return nil, err
	}
	return chromedp.NewBrowserTransport(wctx, conn, opts...)
}

// Wait satisfies chromedp.Allocator.
func (a *remoteAllocator) Wait() { a.wg.Wait() }

// Attaches satisfies chromedp.Attacher: the browser runs already and is not
// ours to close.
func (a *remoteAllocator) Attaches() bool { return true }
