package browser

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// JavaScript dialogs (spec §B12, issue 9 item 7). browser.dialog_policy:
//
//   - must_respond (default): the dialog stays open; every result reports it
//     in pending_dialogs, page calls fail fast with dialog_pending (the
//     backend cancels the CDP calls a dialog blocks, so no call ever waits on
//     one), and browser_dialog answers it. After browser.dialog_timeout_s
//     (default 300 s) it is dismissed for safety.
//   - auto_dismiss / auto_accept: closed the moment it opens, reported in the
//     call's dialogs list.
//
// beforeunload dialogs are always accepted, and browser_navigate dismisses a
// pending dialog before it navigates (by "navigation").

// dialogPolicy maps browser.dialog_policy to the backend's policy.
func dialogPolicy(cfg *config.Config) string {
	switch cfg.Browser.DialogPolicy {
	case config.DialogAutoAccept:
		return backend.DialogAccept
	case config.DialogAutoDismiss:
		return backend.DialogDismiss
	}
	return backend.DialogMustRespond
}

// redactDialogs passes dialog text through the secret matcher (spec §B2:
// supervisor dialog data is browser-originated text).
func redactDialogs(ds []backend.Dialog) []backend.Dialog {
	for i := range ds {
		ds[i].Message = redactText(ds[i].Message)
		ds[i].DefaultPrompt = redactText(ds[i].DefaultPrompt)
	}
	return ds
}

// pendingDialogs returns the session's open dialog as a one-element list
// (redacted), or nil.
func pendingDialogs(s *Session) []backend.Dialog {
	if d := s.dialog; s.tab == nil && d != nil { // records.go: seen open by the node
		return redactDialogs([]backend.Dialog{{Type: d.Type, Message: d.Message, DefaultPrompt: d.DefaultPrompt, Action: "pending"}})
	}
	d, ok := s.tab.PendingDialog()
	if !ok {
		return nil
	}
	return redactDialogs([]backend.Dialog{d})
}

// openedDialog reports whether an action's error only says that the action
// opened a dialog (the input was delivered; the page now waits for an answer).
func openedDialog(err error) bool { return reason.Of(err) == reason.DialogPending }

// dismissForNavigation dismisses a pending dialog before browser_navigate
// leaves the page (the agent chose to move on).
func (m *Manager) dismissForNavigation(ctx context.Context, s *Session) {
	if _, ok := s.tab.PendingDialog(); ok {
		s.tab.AnswerDialog(ctx, "", false, "", "navigation") //nolint:errcheck // gone already is fine
	}
}

// Dialog is browser_dialog: it accepts or dismisses the task's pending
// JavaScript dialog (prompt_text fills a prompt), then waits for the page as
// any action does and returns what the page did next: a delta against the
// last snapshot, or the compact snapshot when the page navigated, had none
// yet, or the answer changed nothing a snapshot shows (a prompt whose answer
// went into the title), so the result always shows the page it left (hostile
// review D8). Errors: invalid_dialog_action, no_dialog.
func (m *Manager) Dialog(ctx context.Context, task string, in DialogInput) DialogResult {
	var r DialogResult
	var accept bool
	switch in.Action {
	case "accept":
		accept = true
	case "dismiss":
	default:
		r.SessionKey = sessionkey.TaskID(task)
		r.Error, r.Reason = `Invalid dialog action: use "accept" or "dismiss".`, reason.InvalidDialogAction
		return r
	}
	ctx = context.WithValue(ctx, answerKey{}, answerOf{accept, in.PromptText, "agent"}) // records.go unblock
	ok := m.act(ctx, task, &r.Page, &r.Change, 0, "answer the dialog", func(cctx context.Context, t tab) error {
		return t.answerDialog(cctx, in, accept, &r)
	})
	if ok && r.Success && !r.Navigated && r.Snapshot == "" && r.Delta == "" && len(r.PendingDialogs) == 0 {
		if sn := m.Snapshot(ctx, task, SnapshotInput{}); sn.Success {
			n := sn.ElementCount
			r.Snapshot, r.ElementCount = sn.Snapshot, &n
		}
	}
	return r
}
