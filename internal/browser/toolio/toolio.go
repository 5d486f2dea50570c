// Package toolio holds the inputs and results of the browser tools (spec
// §B2 shapes plus what the described system adds): the JSON an agent sends
// to browser_navigate, browser_click, … and the JSON it gets back. It has
// no behaviour beyond Page.Refused and RedactJSON (an eval result's
// redaction); the Manager (package browser) fills the results, and package
// browser re-exports every type under its old name.
package toolio

import (
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Page is the part every browser tool result shares (spec §B2 shapes plus what
// the described system hides): success, the URL, title and session key of the
// page the call acted on (so a stale binding is visible; a delta result omits
// a title that did not change since the snapshot the delta is against), and
// on failure an error message with a stable reason code.
type Page struct {
	Success    bool             `json:"success"`
	URL        string           `json:"url,omitempty"`
	Title      string           `json:"title,omitempty"`
	SessionKey string           `json:"session_key,omitempty"`
	Error      string           `json:"error,omitempty"`
	Reason     reason.Code      `json:"reason,omitempty"`
	PageBusy   bool             `json:"page_busy,omitempty"` // the settle cap (< 1 s) fired before the page went quiet
	Dialogs    []backend.Dialog `json:"dialogs,omitempty"`   // JavaScript dialogs that opened during the call
	// PendingDialogs is the open dialog waiting for browser_dialog
	// (browser.dialog_policy must_respond, spec §B12); page calls fail with
	// dialog_pending until it is answered.
	PendingDialogs []backend.Dialog `json:"pending_dialogs,omitempty"`
	// Popup is a tab the page opened during the call; the session follows
	// it after an action, not after browser_navigate (the agent asked for
	// the page; Followed false), and a tab opened before the call is never
	// reported (browser/popups.go). Downloads are the files the call downloaded.
	Popup     *PopupInfo         `json:"popup,omitempty"`
	Downloads []backend.Download `json:"downloads,omitempty"`
	Recycled  string             `json:"recycled,omitempty"` // this call replaced a session whose command had timed out (spec §B6)
	// RetryAfterS is when a refused call may succeed, in seconds: set with
	// browser_capacity (every browser node full, issue 19).
	RetryAfterS int `json:"retry_after_s,omitempty"`
	// Session is the session's handle (issue 19): 32 hex digits, bound to
	// the caller's principal, expiring after browser.inactivity_timeout
	// without a call. Every browser tool takes it back as its session
	// argument, on any replica. Set by browser_navigate.
	Session string `json:"session,omitempty"`
}

// Refused reports whether the call failed (tools.Refuser).
func (p Page) Refused() bool { return !p.Success }

// Change is what an action did to the page: the compact snapshot of the new
// document when it navigated, else a delta against the last snapshot.
type Change struct {
	Navigated    bool   `json:"navigated,omitempty"`
	Snapshot     string `json:"snapshot,omitempty"`
	ElementCount *int   `json:"element_count,omitempty"`
	Delta        string `json:"delta,omitempty"` // "+ added", "- removed", "~ changed" lines; "" = no change
	// Coverage: the snapshot lists only part of a huge page
	// (browser/snapwalk.go); a delta is never given then.
	snapshot.Coverage
}

// BackendInfo says which backend served a navigation (provenance, spec §B4
// record shape): Backend is "local", "cdp", "camofox" or "cloud"; for
// "cloud" CloudProvider names the provider and CloudSessionID its session id
// (bb_session_id). When the provider failed and the local Chromium served
// the session instead, FallbackFromCloud is true, FallbackProvider names the
// provider, FallbackCode is a reason code (cloud_not_configured,
// fallback_from_cloud) and FallbackReason the failure (redacted).
type BackendInfo struct {
	Backend           string      `json:"backend,omitempty"`
	CloudProvider     string      `json:"cloud_provider,omitempty"`
	CloudSessionID    string      `json:"cloud_session_id,omitempty"`
	FallbackFromCloud bool        `json:"fallback_from_cloud,omitempty"`
	FallbackProvider  string      `json:"fallback_provider,omitempty"`
	FallbackCode      reason.Code `json:"fallback_code,omitempty"`
	FallbackReason    string      `json:"fallback_reason,omitempty"`
	FallbackWarning   string      `json:"fallback_warning,omitempty"`
	// StealthFeatures lists the provider features that are on (spec §B2:
	// reported on a session's first navigation); StealthWarning says when
	// Browserbase runs without its residential proxies.
	StealthFeatures []string `json:"stealth_features,omitempty"`
	StealthWarning  string   `json:"stealth_warning,omitempty"`
	// BrowserNode is the id of the browser node serving the session
	// (Backend "node", issue 19).
	BrowserNode string `json:"browser_node,omitempty"`
}

// SessionInput is the input of the browser tools that take nothing but the
// optional session handle (browser_back, browser_get_images, browser_close).
type SessionInput struct {
	Session string `json:"session,omitempty"`
}

// SessionArg is the name of every browser tool's session argument, declared
// for MCP 2026-07-28 clients as an x-mcp-header parameter (SessionHeader).
const (
	SessionArg    = "session"
	SessionHeader = "Session"
)

// NavigateInput is browser_navigate's input.
type NavigateInput struct {
	URL     string `json:"url" jsonschema:"absolute http(s) URL to open"`
	Find    string `json:"find,omitempty"`
	Session string `json:"session,omitempty"`
}

// NavigateResult is browser_navigate's result: the final URL after redirects,
// its title, the compact snapshot and its ref count.
type NavigateResult struct {
	Page
	Snapshot            string        `json:"snapshot,omitempty"`
	ElementCount        int           `json:"element_count"`
	Truncated           bool          `json:"truncated,omitempty"`
	BotDetectionWarning string        `json:"bot_detection_warning,omitempty"`
	BlockedByPolicy     *policy.Block `json:"blocked_by_policy,omitempty"`
	BackendInfo                       // which backend served it; a cloud fallback (browser/manager_cloud.go)
	snapshot.Coverage                 // the snapshot lists only part of a huge page (browser/snapwalk.go)
	// UsedRealProfile: the page loaded in the copy of the user's browser
	// profile (browser.use_real_profile, spec §B10; browser/profile.go).
	UsedRealProfile bool `json:"used_real_profile,omitempty"`
	// PopupsClosed counts the popups and tabs a public page had opened that
	// were closed before this navigation into the private network, so none
	// of them could use the navigation's allowance (Private Network Access,
	// browser/pna.go; docs/browser.md).
	PopupsClosed int `json:"popups_closed,omitempty"`
}

// SnapshotInput is browser_snapshot's input.
type SnapshotInput struct {
	Full    bool   `json:"full,omitempty" jsonschema:"every element, not the compact view"`
	Find    string `json:"find,omitempty" jsonschema:"show only the snapshot lines containing this text"`
	Session string `json:"session,omitempty"`
}

// SnapshotResult is browser_snapshot's result.
type SnapshotResult struct {
	Page
	Snapshot      string           `json:"snapshot,omitempty"`
	ElementCount  int              `json:"element_count"`
	Truncated     bool             `json:"truncated,omitempty"`
	RecentDialogs []backend.Dialog `json:"recent_dialogs,omitempty"` // the tab's latest dialogs (spec §B12)

	// Coverage: the snapshot lists only part of a huge page (snapshot.Note).
	snapshot.Coverage
}

// RefInput names one element by a ref from the latest snapshot.
type RefInput struct {
	Ref     string `json:"ref" jsonschema:"ref from the latest snapshot (e5)"`
	Find    string `json:"find,omitempty"`
	Session string `json:"session,omitempty"`
}

// ClickResult is browser_click's result.
type ClickResult struct {
	Page
	Clicked       string `json:"clicked,omitempty"`
	InterceptedBy string `json:"intercepted_by,omitempty"` // ref of the element that covers the target (click_intercepted)
	Change
}

// TypeInput is browser_type's input.
type TypeInput struct {
	Ref     string `json:"ref" jsonschema:"text field ref"`
	Text    string `json:"text" jsonschema:"new content"`
	Submit  bool   `json:"submit,omitempty" jsonschema:"press Enter after"`
	Find    string `json:"find,omitempty"`
	Session string `json:"session,omitempty"`
}

// FillInput is browser_fill's input: several fields typed in one call.
type FillInput struct {
	Fields  []FillField `json:"fields" jsonschema:"[{ref, text}] in order"`
	Session string      `json:"session,omitempty"`
}

// FillField is one field of browser_fill.
type FillField struct {
	Ref  string `json:"ref" jsonschema:"text field ref"`
	Text string `json:"text" jsonschema:"new content"`
}

// FillResult is browser_fill's result: the refs filled, in order, and one
// delta for all of them.
type FillResult struct {
	Page
	Filled []string `json:"filled,omitempty"`
	Change
}

// TypeResult is browser_type's result; Typed is display-redacted.
type TypeResult struct {
	Page
	Typed   string `json:"typed,omitempty"`
	Element string `json:"element,omitempty"`
	Change
}

// ScrollInput is browser_scroll's input.
type ScrollInput struct {
	Direction string `json:"direction" jsonschema:"up or down"`
	Session   string `json:"session,omitempty"`
}

// ScrollResult is browser_scroll's result.
type ScrollResult struct {
	Page
	Scrolled string `json:"scrolled,omitempty"`
	Change
}

// BackResult is browser_back's result.
type BackResult struct {
	Page
	Change
}

// PressInput is browser_press's input.
type PressInput struct {
	Key     string `json:"key" jsonschema:"DOM key name or one character"`
	Find    string `json:"find,omitempty"`
	Session string `json:"session,omitempty"`
}

// PressResult is browser_press's result.
type PressResult struct {
	Page
	Pressed string `json:"pressed,omitempty"`
	Change
}

// ConsoleInput is browser_console's input.
type ConsoleInput struct {
	Clear      bool   `json:"clear,omitempty" jsonschema:"empty the message buffer after reading"`
	Expression string `json:"expression,omitempty" jsonschema:"JavaScript to evaluate in the page; omit to read console messages"`
	Session    string `json:"session,omitempty"`
}

// ConsoleResult is browser_console's result (spec §B2 shapes).
type ConsoleResult struct {
	Page
	ConsoleMessages []backend.ConsoleMessage `json:"console_messages,omitempty"`
	JSErrors        []JSError                `json:"js_errors,omitempty"`
	TotalMessages   *int                     `json:"total_messages,omitempty"`
	TotalErrors     *int                     `json:"total_errors,omitempty"`
	Result          json.RawMessage          `json:"result,omitempty"`      // the value as JSON (a promise's resolved value)
	ResultType      string                   `json:"result_type,omitempty"` // JavaScript type, or an object's subtype (node, map, array, …)
	// ResultDescription says what a value with no JSON form is (then result
	// is absent): undefined, NaN, 10n, Symbol(x), a function's source, a DOM
	// node, a Map (backend.EvalResult); beside a result, that the result
	// is a copy with values JSON cannot hold (a function, BigInt or cycle
	// inside an object) described in place.
	ResultDescription string `json:"result_description,omitempty"`
}

// JSError is one uncaught page exception.
type JSError struct {
	Message string `json:"message"`
	Source  string `json:"source"` // "exception"
}

// Image is one <img> of the page.
type Image struct {
	Src    string `json:"src"`
	Alt    string `json:"alt"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// ImagesResult is browser_get_images's result; data: URIs are excluded.
type ImagesResult struct {
	Page
	Images []Image `json:"images"`
	Count  int     `json:"count"`
}

// VisionInput is browser_vision's input.
type VisionInput struct {
	Question string `json:"question" jsonschema:"what to look for (for your own vision)"`
	Annotate bool   `json:"annotate,omitempty" jsonschema:"label elements with their refs"`
	Session  string `json:"session,omitempty"`
}

// Annotation labels one ref drawn on an annotated screenshot.
type Annotation struct {
	Ref   string `json:"ref"`
	Label string `json:"label"`
}

// VisionResult is browser_vision's result: the PNG's path (and, for the MCP
// surface, its bytes in PNG). Analysis is left to the caller's model.
type VisionResult struct {
	Page
	Question       string       `json:"question,omitempty"`
	ScreenshotPath string       `json:"screenshot_path,omitempty"`
	Annotations    []Annotation `json:"annotations,omitempty"`
	PNG            []byte       `json:"-"`
}

// CloseResult is browser_close's result.
type CloseResult struct {
	Page
	Closed []string `json:"closed"`
}

// PopupInfo reports a tab the page opened during the call.
type PopupInfo struct {
	URL      string `json:"url"`
	Followed bool   `json:"followed"` // the session now acts on this tab
	Opened   int    `json:"opened"`   // tabs opened during the call (the last one is followed)
}

// DialogInput is browser_dialog's input.
type DialogInput struct {
	Action     string `json:"action" jsonschema:"accept or dismiss"`
	PromptText string `json:"prompt_text,omitempty" jsonschema:"text for a prompt() when accepting"`
	DialogID   string `json:"dialog_id,omitempty" jsonschema:"id from pending_dialogs; default the open one"`
	Session    string `json:"session,omitempty"`
}

// DialogResult is browser_dialog's result (spec §B2: {success, action,
// dialog}) plus what the page did next.
type DialogResult struct {
	Page
	Action string          `json:"action,omitempty"`
	Dialog *backend.Dialog `json:"dialog,omitempty"`
	Change
}
