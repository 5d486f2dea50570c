package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// defaultDialogTimeout is spec §B12's browser.dialog_timeout_s default.
const defaultDialogTimeout = 300 * time.Second

// maxDialogs bounds the per-tab dialog history (oldest dropped).
const maxDialogs = 50

// dialogState is the tab's pending must_respond dialog, under Tab.mu.
type dialogState struct {
	pending *Dialog // nil when none is open
	timer   *time.Timer
	// waiters are the cancel functions of running page calls: a dialog blocks
	// the page's main thread, so they are cancelled when one opens (a call
	// never waits on a dialog).
	waiters map[int]context.CancelFunc
	nextW   int
	by      string // who is answering the pending dialog (AnswerDialog), for the closed event
}

// dialogOpeningLocked handles Page.javascriptDialogOpening on the message
// loop (t.mu held): auto policies close the dialog at once; must_respond
// leaves it pending, cancels the calls it blocks and arms the safety timer.
// A beforeunload dialog is always accepted (a navigation the agent asked for
// must not stall on "leave site?").
func (t *Tab) dialogOpeningLocked(e *page.EventJavascriptDialogOpening) {
	t.dialogSeq++
	d := Dialog{ID: fmt.Sprintf("d%d", t.dialogSeq), Type: string(e.Type), Message: e.Message, DefaultPrompt: e.DefaultPrompt, seq: t.dialogSeq}
	if t.policy == DialogMustRespond && e.Type != page.DialogTypeBeforeunload {
		d.Action = "pending"
		t.pushDialogLocked(d)
		p := d
		t.dlg.pending = &p
		for k, c := range t.dlg.waiters {
			c()
			delete(t.dlg.waiters, k)
		}
		to := t.dialogTimeout
		if to <= 0 {
			to = defaultDialogTimeout
		}
		id := d.ID
		t.dlg.timer = time.AfterFunc(to, func() {
			t.AnswerDialog(context.Background(), id, false, "", "timeout") //nolint:errcheck // the dialog may be gone
		})
		return
	}
	accept := t.policy == DialogAccept || e.Type == page.DialogTypeBeforeunload
	d.Action, d.By = "dismissed", "policy"
	if accept {
		d.Action = "accepted"
	}
	t.pushDialogLocked(d)
	ctx := t.ctx
	go func() {
		hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		chromedp.Call(hctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept}) //nolint:errcheck // the dialog may already be gone
	}()
}

// dialogClosedLocked handles Page.javascriptDialogClosed (t.mu held): a
// pending dialog the page or a navigation closed is no longer pending.
func (t *Tab) dialogClosedLocked(e *page.EventJavascriptDialogClosed) {
	p := t.dlg.pending
	if p == nil {
		return
	}
	action := "dismissed"
	if e.Result {
		action = "accepted"
	}
	by := t.dlg.by
	if by == "" {
		by = "page" // closed by the page's own navigation or by Chromium
	}
	t.settleDialogLocked(p.ID, action, by)
}

func (t *Tab) pushDialogLocked(d Dialog) {
	t.dialogs = append(t.dialogs, d)
	if len(t.dialogs) > maxDialogs {
		t.dialogs = t.dialogs[len(t.dialogs)-maxDialogs:]
	}
}

// settleDialogLocked records how the pending dialog id was closed.
func (t *Tab) settleDialogLocked(id, action, by string) {
	if t.dlg.pending == nil || t.dlg.pending.ID != id {
		return
	}
	if t.dlg.timer != nil {
		t.dlg.timer.Stop()
		t.dlg.timer = nil
	}
	t.dlg.pending, t.dlg.by = nil, ""
	for i := range t.dialogs {
		if t.dialogs[i].ID == id && t.dialogs[i].Action == "pending" {
			t.dialogs[i].Action, t.dialogs[i].By = action, by
		}
	}
	t.bumpLocked()
}

// stopDialogTimerLocked stops the safety timer of a closing tab (t.mu held).
func (t *Tab) stopDialogTimerLocked() {
	if t.dlg.timer != nil {
		t.dlg.timer.Stop()
		t.dlg.timer = nil
	}
}

// PendingDialog returns the open dialog waiting for an answer
// (must_respond), if any.
func (t *Tab) PendingDialog() (Dialog, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dlg.pending == nil {
		return Dialog{}, false
	}
	return *t.dlg.pending, true
}

// RecentDialogs returns up to n of the latest dialogs (pending and closed),
// oldest first.
func (t *Tab) RecentDialogs(n int) []Dialog {
	t.mu.Lock()
	defer t.mu.Unlock()
	ds := t.dialogs
	if len(ds) > n {
		ds = ds[len(ds)-n:]
	}
	return append([]Dialog(nil), ds...)
}

// AnswerDialog accepts or dismisses the pending dialog (id "" = whichever is
// pending) with promptText for a prompt when accepting; by says who answered
// (agent, timeout, navigation). Errors: no_dialog when none (or not id) is
// pending; browser_failed when Chromium refuses. It returns the dialog as
// closed. It never waits on the page: Page.handleJavaScriptDialog is answered
// by the browser process.
func (t *Tab) AnswerDialog(ctx context.Context, id string, accept bool, promptText, by string) (Dialog, error) {
	t.mu.Lock()
	p := t.dlg.pending
	if p == nil || (id != "" && p.ID != id) {
		t.mu.Unlock()
		if id != "" {
			return Dialog{}, reason.Newf(reason.NoDialog, "", "No dialog %q is pending in this tab.", id)
		}
		return Dialog{}, reason.New(reason.NoDialog, "", "No JavaScript dialog is pending in this tab.")
	}
	d := *p
	t.dlg.by = by
	t.mu.Unlock()
	hctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		var c2 context.CancelFunc
		hctx, c2 = context.WithDeadline(hctx, dl)
		defer c2()
	}
	params := page.HandleJavaScriptDialogParams{Accept: accept}
	if accept {
		params.PromptText = promptText
	}
	_, err := chromedp.Call(hctx, page.HandleJavaScriptDialog, params)
	action := "dismissed"
	if accept {
		action = "accepted"
	}
	t.mu.Lock()
	gone := t.dlg.pending == nil || t.dlg.pending.ID != d.ID
	t.settleDialogLocked(d.ID, action, by)
	t.mu.Unlock()
	if err != nil && !gone {
		return Dialog{}, Failure("Answering the dialog", err)
	}
	d.Action, d.By = action, by
	return d, nil
}

// cancelOnDialog registers cancel to run when a must_respond dialog opens
// (at once if one is pending); the returned func unregisters it.
func (t *Tab) cancelOnDialog(cancel context.CancelFunc) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dlg.pending != nil {
		cancel()
		return func() {}
	}
	if t.dlg.waiters == nil {
		t.dlg.waiters = map[int]context.CancelFunc{}
	}
	k := t.dlg.nextW
	t.dlg.nextW++
	t.dlg.waiters[k] = cancel
	return func() {
		t.mu.Lock()
		delete(t.dlg.waiters, k)
		t.mu.Unlock()
	}
}

// dialogErr is the error of a page call a pending dialog cancelled.
func (t *Tab) dialogErr(err error) error {
	if !errors.Is(err, context.Canceled) || t.ctx.Err() != nil {
		return nil
	}
	d, ok := t.PendingDialog()
	if !ok {
		return nil
	}
	return reason.Newf(reason.DialogPending, "",
		"%s %s dialog is open (id %s; its text is in pending_dialogs) and blocks the page; answer it with browser_dialog (action accept or dismiss) first (browser.dialog_policy must_respond).", article(d.Type), d.Type, d.ID)
}

// article returns the indefinite article for word ("An" before alert,
// "A" before prompt, confirm, beforeunload).
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "An"
	}
	return "A"
}
