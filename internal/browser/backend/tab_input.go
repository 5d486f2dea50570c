// Tab input and capture: mouse clicks, text insertion, key presses and
// screenshots.

package backend

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Click presses and releases the left mouse button at (x, y), CSS pixels of the
// main frame's viewport, after moving the mouse there.
func (t *Tab) Click(ctx context.Context, x, y float64) error {
	if err := t.check(); err != nil {
		return err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	for _, p := range []input.DispatchMouseEventParams{
		{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y},
		{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
		{Type: input.DispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1},
	} {
		if _, err := chromedp.Call(rctx, input.DispatchMouseEvent, p); err != nil {
			return t.cdpErr(ctx, "Clicking", err)
		}
	}
	return nil
}

// InsertText types text into the focused element as one input (like an IME
// commit: input events fire, no key events).
func (t *Tab) InsertText(ctx context.Context, text string) error {
	if err := t.check(); err != nil {
		return err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	if _, err := chromedp.Call(rctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		return t.cdpErr(ctx, "Typing", err)
	}
	return nil
}

// keyNames maps DOM key names (case-insensitive) to kb runes; built on
// first use, not in package init (start-up cost, docs/benchmarks.md).
var keyNames = sync.OnceValue(func() map[string]rune {
	m := map[string]rune{"space": ' ', "spacebar": ' ', "esc": '\u001b', "return": '\r'}
	for r, k := range kb.Keys {
		if k.Key != "" && len([]rune(k.Key)) > 1 {
			if _, dup := m[strings.ToLower(k.Key)]; !dup {
				m[strings.ToLower(k.Key)] = r
			}
		}
	}
	return m
})

// KeyRune returns the kb rune for a DOM key name (Enter, Tab, Escape,
// ArrowDown, Backspace, PageDown, …, case-insensitive) or a single character.
func KeyRune(name string) (rune, bool) {
	if rs := []rune(name); len(rs) == 1 {
		return rs[0], true
	}
	r, ok := keyNames()[strings.ToLower(name)]
	return r, ok
}

// Press dispatches the key-down/up events of one key (see KeyRune) to the
// focused element. An unknown key is invalid_key.
func (t *Tab) Press(ctx context.Context, key string) error {
	if err := t.check(); err != nil {
		return err
	}
	r, ok := KeyRune(key)
	if !ok {
		return reason.New(reason.InvalidKey, "", fmt.Sprintf("Unknown key %q; use a DOM key name such as Enter, Tab, Escape, ArrowDown, Backspace or a single character.", key))
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	for _, k := range kb.Encode(r) {
		if _, err := chromedp.Call(rctx, input.DispatchKeyEvent, *k); err != nil {
			return t.cdpErr(ctx, "Pressing "+key, err)
		}
	}
	return nil
}

// Screenshot captures the viewport as PNG bytes.
func (t *Tab) Screenshot(ctx context.Context) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	res, err := chromedp.Call(rctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		return nil, t.cdpErr(ctx, "Taking a screenshot", err)
	}
	return res.Data, nil
}
