// Package reason defines Gatehouse's closed set of refusal and failure codes.
//
// Every refusal or per-entry failure that Gatehouse reports carries exactly one
// Code: a stable snake_case string that JSON output, logs, tests and the CLI
// all see. The human message is separate (see Error.Message) and names the fix.
// Codes are never renamed once released; add new ones instead.
package reason

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Code is a stable, machine-readable reason. The zero value "" means "no reason"
// (allowed / success).
type Code string

// Gate names which gate produced a refusal, as printed by `gatehouse check`.
type Gate string

// Gates, in the order the extract pipeline runs them (spec §A3).
const (
	GateParse  Gate = "parse"  // the URL could not be canonicalised
	GateScheme Gate = "scheme" // not http/https
	GateSecret Gate = "secret" // a credential was found in the URL
	GateSSRF   Gate = "ssrf"   // DNS/IP classification refused the target
	GatePolicy Gate = "policy" // the website blocklist matched
)

// The closed set of codes. Keep docs in sync with the table in codes below.
const (
	InvalidURL             Code = "invalid_url"
	UnsupportedScheme      Code = "unsupported_scheme"
	SecretInURL            Code = "secret_in_url"
	SensitiveQueryParam    Code = "sensitive_query_param"
	CredentialsInURL       Code = "credentials_in_url"
	SSRFPrivate            Code = "ssrf_private"
	SSRFMetadata           Code = "ssrf_metadata"
	DNSUnresolvable        Code = "dns_unresolvable"
	DNSBadAnswer           Code = "dns_bad_answer"
	DNSTimeout             Code = "dns_timeout"
	PolicyBlocked          Code = "policy_blocked"
	InvalidItem            Code = "invalid_item"
	UsageError             Code = "usage_error"
	TooManyRedirects       Code = "too_many_redirects"
	FetchFailed            Code = "fetch_failed"
	FetchTimeout           Code = "fetch_timeout"
	HTTPStatus             Code = "http_status"
	UnsupportedContentType Code = "unsupported_content_type"
	BinaryPayload          Code = "binary_payload"
	EmptyContent           Code = "empty_content"
	HTMLTooDeep            Code = "html_too_deep"
	ExtractTimeout         Code = "extract_timeout"
	NoResultForURL         Code = "no_result_for_url"
	Interrupted            Code = "interrupted"
	ContentInaccessible    Code = "content_inaccessible"
	NoProvider             Code = "no_provider"
	SearchOnlyBackend      Code = "search_only_backend"
	UnknownBackend         Code = "unknown_backend"
	MissingKey             Code = "missing_key"
	VendorAuth             Code = "vendor_auth"
	VendorQuota            Code = "vendor_quota"
	VendorRateLimited      Code = "vendor_rate_limited"
	VendorUnavailable      Code = "vendor_unavailable"
	VendorTimeout          Code = "vendor_timeout"
	VendorBadResponse      Code = "vendor_bad_response"
	VendorError            Code = "vendor_error"
	KeylessExhausted       Code = "keyless_exhausted"
	EmptyQuery             Code = "empty_query"
	SecretInQuery          Code = "secret_in_query"
	ProviderDisabled       Code = "provider_disabled"
	ProviderError          Code = "provider_error"
	ConfigInvalid          Code = "config_invalid"
	ConfigUnknownKey       Code = "config_unknown_key"
	ConfigBadValue         Code = "config_bad_value"
	ConfigWriteFailed      Code = "config_write_failed"

	// Browser toolset (spec §B2, §B8, §B14).
	ChromiumMissing  Code = "chromium_missing"
	BrowserFailed    Code = "browser_failed"
	CommandTimeout   Code = "command_timeout"
	PageNavigated    Code = "page_navigated"
	NavigationFailed Code = "navigation_failed"
	RedirectPrivate  Code = "redirect_private"
	RedirectMetadata Code = "redirect_metadata"

	// PrivateNetworkFromPublic is the egress proxy's Private Network Access
	// refusal (issue 16): a request into the private network caused by a
	// public document.
	PrivateNetworkFromPublic Code = "private_network_from_public"

	PageBlocked      Code = "page_blocked"
	StaleRef         Code = "stale_ref"
	ClickIntercepted Code = "click_intercepted"
	NotEditable      Code = "not_editable"
	NotVisible       Code = "element_not_visible"
	ElementDisabled  Code = "element_disabled"
	InvalidDirection Code = "invalid_direction"
	InvalidKey       Code = "invalid_key"
	NoHistory        Code = "no_history"
	EvalFailed       Code = "eval_failed"
	EvalDenylist     Code = "eval_denylist"
	EvalURLLiteral   Code = "eval_private_literal"

	// Browser lifecycle and backends (spec §B4–§B7, §B10–§B12).
	SessionExpired      Code = "session_expired"
	SessionCreateFailed Code = "session_create_failed"
	CloudFallback       Code = "fallback_from_cloud"
	CloudNotConfigured  Code = "cloud_not_configured"
	UnknownCloudBackend Code = "unknown_cloud_provider"
	BackendUnsupported  Code = "backend_unsupported"
	ProxyAuthRequired   Code = "proxy_auth_required"

	// Browser nodes (issue 19): sessions placed on a gatehouse browser-node.
	BrowserCapacity    Code = "browser_capacity"
	BrowserNodeRefused Code = "browser_node_refused"
	// SessionNotFound: a session handle that names no session of the
	// caller's principal; SessionLost: its node, tab or record is gone;
	// SessionBusy: another call holds the session's lock.
	SessionNotFound Code = "session_not_found"
	SessionLost     Code = "session_lost"
	SessionBusy     Code = "session_busy"

	// Real profile and dialogs (spec §B10, §B12; issue 9 items 6–7).
	RealProfileLocked      Code = "real_profile_locked"
	RealProfileUnavailable Code = "real_profile_unavailable"
	NoDialog               Code = "no_dialog"
	InvalidDialogAction    Code = "invalid_dialog_action"
	DialogPending          Code = "dialog_pending"

	// StrictSelection is the described system's name for UnknownBackend
	// (spec §A13 strict_selection); kept so older callers compile.
	StrictSelection = UnknownBackend
)

// NavigationDownload: browser_navigate's URL serves a file, not a page
// (newcomer review W10).
const NavigationDownload Code = "navigation_download"

// Codes of the tool layer and the MCP server (internal/tools, internal/mcpserver).
const (
	InvalidArguments Code = "invalid_arguments"
	ToolUnavailable  Code = "tool_unavailable"
	TooManyCalls     Code = "too_many_calls"
	RateLimited      Code = "rate_limited"
	ServerDraining   Code = "server_draining"
	ReadOutsideStore Code = "read_outside_store"
	ReadSymlink      Code = "read_symlink"
	ReadNotRegular   Code = "read_not_regular"
	ReadNotFound     Code = "read_not_found"
	ReadPastEnd      Code = "read_past_end"
	ToolFailed       Code = "tool_failed"
)

// Codes of the shared state (internal/state: GATEHOUSE_REDIS_URL, issue 18).
const (
	StateUnavailable Code = "state_unavailable"
	StateBadURL      Code = "state_bad_url"
	StateCorrupt     Code = "state_corrupt"
)

// codes documents every Code. A test asserts each constant above is listed.
var codes = map[Code]string{
	InvalidURL:             "the URL cannot be parsed the way a browser would parse it (WHATWG URL Standard), or has no host",
	UnsupportedScheme:      "only http and https URLs are fetched (spec §A6.1)",
	SecretInURL:            "a credential-shaped token (API key prefix, spec §A7) appears somewhere in the URL, also percent-encoded; a JSON Web Token (three base64url parts, eyJ….eyJ….…) counts too, a Gatehouse extension (§A7 leaves JWTs to output redaction, but a JWT handed to a reader is a credential)",
	SensitiveQueryParam:    "a credential-named query or fragment parameter (spec §A6.7) carries a value; refused for third-party readers. Names are compared decoded to a fixed point, case-folded, with '-', '.' and ' ' read as '_' (api-key = api_key), and a credential-named parameter nested in another's value (a URL or query, percent-encoded to any depth: next=%2Fcb%3Faccess_token%3D…) counts too, and so does a path parameter (/a;token=…, which output redaction removes too: one rule for both); and refresh_token, id_token, x-goog-signature, x-goog-credential, x-api-key, private_token, bearer and bearer_token are refused as well (the spec leaves the first three to log redaction only); all four are Gatehouse extensions",
	CredentialsInURL:       "the URL carries a password in its userinfo (user:pass@host), or a redirect target carries any userinfo",
	SSRFPrivate:            "the host resolves to an address IANA's special-purpose registries mark not globally reachable (private, loopback, link-local, CGNAT, documentation, benchmarking…; copies in internal/urlsafe/iana), or a reserved, multicast or unspecified one (spec §A6.2, §A6.4); localhost and *.localhost names are loopback without DNS (RFC 6761 §6.3)",
	SSRFMetadata:           "the host is a cloud metadata endpoint (spec §A6.1); never overridable",
	DNSUnresolvable:        "the host name did not resolve; Gatehouse fails closed but says so instead of calling it an SSRF block",
	DNSBadAnswer:           "the resolver returned an answer that is not an IP address; fails closed",
	DNSTimeout:             "include_links: the link's host did not resolve within the per-lookup timeout or the call's web.extract_timeout deadline, so the link was not judged and is not reported allowed (the row itself is kept)",
	PolicyBlocked:          "the host matched security.website_blocklist (spec §A8)",
	InvalidItem:            "the batch item is neither a URL string nor an object with a url/href string",
	UsageError:             "the command line is not valid (unknown command or flag, missing or extra argument, bad flag value); the CLI exits with status 2",
	TooManyRedirects:       "the page redirected more than 10 times",
	FetchFailed:            "the connection or transfer failed",
	FetchTimeout:           "the fetch exceeded its connect or total timeout",
	HTTPStatus:             "the server answered with an HTTP error status (4xx/5xx)",
	UnsupportedContentType: "the response is a binary type Gatehouse does not convert",
	BinaryPayload:          "the body is binary data (a known magic signature, or mostly NUL/control bytes) despite its declared type",
	EmptyContent:           "the page had no extractable text",
	HTMLTooDeep:            "the page nests elements deeper than the HTML parser's limit (512) and no text was left above it; deeper levels are otherwise flattened, their text kept",
	ExtractTimeout:         "the provider exceeded web.extract_timeout (spec §A3 step 6)",
	NoResultForURL:         "the provider returned no row for this URL",
	Interrupted:            "the call was cancelled before this URL was done",
	ContentInaccessible:    "no result rows at all",
	NoProvider:             "no extract/search provider is configured or available",
	SearchOnlyBackend:      "the configured extract backend can only search (spec §A4.4)",
	UnknownBackend:         "the configured backend name is not a registered provider; a stored selection is never silently rerouted (spec §A4.4, strict_selection)",
	MissingKey:             "the selected backend needs an API key or URL (named in the message) that is not set in the environment or $GATEHOUSE_HOME/.env",
	VendorAuth:             "the vendor API refused the credentials (HTTP 401/403): key missing, wrong, revoked, or the caller's IP is blocked",
	VendorQuota:            "the vendor account is out of credits or hit a plan/daily cap (HTTP 402 or a cap error)",
	VendorRateLimited:      "the vendor API is throttling (HTTP 429 or a rate-limit error)",
	VendorUnavailable:      "the vendor API failed on its side (HTTP 5xx) or could not be reached",
	VendorTimeout:          "the vendor API did not answer in time",
	VendorBadResponse:      "the vendor API answered with a body that is truncated, not valid JSON, or not the documented shape",
	VendorError:            "the vendor API rejected the request for another reason (other 4xx or an error envelope)",
	EmptyQuery:             "the web_search query is empty or only whitespace",
	SecretInQuery:          "a credential-shaped token (API key prefix, spec §A7) appears in a web_search query; refused before any vendor sees it",
	KeylessExhausted:       "every keyless vendor in the ring failed or is pinned to a paid tier (spec §A5.3)",
	ProviderError:          "the provider returned an error for this URL",
	ProviderDisabled:       "the configured backend is listed in web.disabled_providers",
	ConfigInvalid:          "config.yaml cannot be read or parsed, or would silently weaken the website blocklist (a problem inside security.website_blocklist, a misplaced security key); every web tool refuses until it is fixed (fail closed, a departure from spec §A8, which falls back to defaults)",
	ConfigUnknownKey:       "`gatehouse config get|set` names no key it can read or set: a misspelt or unknown key (the message lists the valid keys at that level), a map entry that is not set, a block given to set (set one of its keys), or a legacy key (the message names the key to use instead); nothing was written",
	ConfigBadValue:         "`gatehouse config set` was given a value its key does not take (wrong type, out of range, not one of the allowed values, not valid YAML, a blocklist entry that would not do what it reads as); the message names what the key expects, and nothing was written",
	ConfigWriteFailed:      "`gatehouse config set` could not change config.yaml (the directory cannot be created or locked, the file cannot be written, or its YAML layout is one set will not edit safely); the file is left unchanged and the message says what to fix",

	ChromiumMissing:  "no Chromium binary was found (browser.executable_path, CHROME_PATH, /usr/lib/chromium/chromium, PATH); install it, e.g. apt-get install -y chromium",
	BrowserFailed:    "the browser or its session could not be started, or the tab crashed; the session is dropped and the next call starts a fresh one",
	CommandTimeout:   "a browser command exceeded browser.command_timeout (navigation: max(timeout, 60 s), spec §B5)",
	PageNavigated:    "the page navigated while the command ran (a redirect, a meta refresh or a script replaced the document); a snapshot is taken once more on the new document before this is reported, other commands are not repeated; take a new browser_snapshot and act on the page it shows",
	NavigationFailed: "the browser could not load the page (connection refused, DNS failure, refused by the egress proxy, …)",
	RedirectPrivate:  "the navigation's redirect chain ended on a private/internal address; the tab was reset to about:blank (spec §B8.1 step 6)",
	RedirectMetadata: "the navigation's redirect chain ended on a cloud metadata endpoint; the tab was reset to about:blank (spec §B8.1 step 6)",

	PrivateNetworkFromPublic: "a public page (or a redirect or navigation it started) asked for a private address (loopback, RFC 1918, link-local, CGNAT, ULA, …); the local browser's egress proxy lets a request into the private network through only when every top-level document of the session is itself private, or for the agent's own browser_navigate to that host:port, or with security.allow_private_urls: true (Private Network Access; docs/browser.md)",

	PageBlocked:      "the tab's current page URL is refused by the gates (a script may have navigated it); content withheld and input refused (spec §B8.2)",
	StaleRef:         "the ref names no element of the current document (the page navigated, the element was removed, or the ref was never issued); take a new browser_snapshot",
	ClickIntercepted: "another element (a cookie banner, an overlay) covers the target and would receive the click; the result names that element's ref",
	NotVisible:       "the ref names an element that has no visible box to click (hidden, collapsed or zero-sized); scroll or open its container, then snapshot again",
	ElementDisabled:  "browser_click was given a ref to a disabled form control (the disabled attribute, also through a disabled <fieldset>): the browser delivers no click to it, so nothing was clicked; fill in what the page needs to enable it, then snapshot again",
	NotEditable:      "browser_type was given a ref that is not a text field or editable element",
	InvalidDirection: "browser_scroll direction is not up or down (case-sensitive, spec §B2)",
	InvalidKey:       "browser_press was given a key name it does not know (Enter, Tab, Escape, ArrowDown, a single character, …)",
	NoHistory:        "browser_back has no earlier history entry in this tab",
	EvalFailed:       "browser_console's expression threw or could not be serialised",
	EvalDenylist:     "browser.restrict_evaluate is on and the expression names a sensitive primitive (cookies, storage, network, form values; spec §B8.3)",
	EvalURLLiteral:   "the expression contains an http(s) URL literal the gates refuse (private address or metadata endpoint; spec §B8.3 pre-screen)",

	SessionExpired:      "the task's browser session was closed by the janitor after browser.inactivity_timeout of idleness; call browser_navigate to start a fresh one (spec §B7)",
	ProxyAuthRequired:   "a request reached a browser session's egress proxy without that session's proxy credential (Proxy-Authorization, RFC 7235 §4.4): it came from outside that session's BrowserContext; answered 407 and counted for the session",
	SessionCreateFailed: "no browser session could be created: the cloud provider and the local fallback both failed, or the real-profile copy failed closed (spec §B4, §B10)",
	CloudFallback:       "the cloud browser provider could not create or connect a session, so this session runs in the local Chromium instead; fallback_reason and fallback_provider say why (spec §B4 step 4)",
	CloudNotConfigured:  "browser.cloud_provider names a provider whose credentials are not set (named in the message); sessions fall back to the local Chromium, marked fallback_from_cloud",
	UnknownCloudBackend: "browser.cloud_provider names no browser provider (browserbase, browser-use, firecrawl, local, camofox); a strict selection error, never silent auto-detect (spec §B4)",
	BrowserCapacity:     "every registered browser node (gatehouse browser-node) has as many sessions as its --max-sessions allows, so no new session can be placed; retry after retry_after_s seconds, or add a node",
	BrowserNodeRefused:  "a browser node's record in Redis names an address that browser.node_allow does not allow (empty: loopback only), or a metadata address; the node was not dialed. Fix browser.node_allow or the node's --listen/--advertise address",
	SessionNotFound:     "the session argument names no browser session of this principal: it was never issued, it belongs to another principal (the two read the same), or the session was closed (browser_close); call browser_navigate without session to start one",
	SessionLost:         "the browser session is gone: its browser node went away (not registered, or it does not answer), its tab closed, or its record in Redis was lost (a restart without persistence, an eviction); its page, cookies and refs are lost and its record was removed; call browser_navigate without session, or with it to start over in a new session (its result names the new handle; the message says where it runs)",
	SessionBusy:         "another call on this browser session (from any replica) holds its lock and did not finish within the call's lock wait, or the lock key in Redis holds a value Gatehouse did not write; retry after retry_after_s, or DEL the lock key the message names when no call runs",
	BackendUnsupported:  "the configured browser backend (e.g. Camofox, which has no CDP) cannot perform this tool; the message names what it can do",

	RealProfileLocked:      "browser.use_real_profile: a database of the source profile (Cookies, Login Data, Web Data) is locked, or the profile's SingletonLock names a live process: the browser is running on it; quit that browser and retry (spec §B10: never snapshot a live profile)",
	RealProfileUnavailable: "browser.use_real_profile is on but no usable source profile exists: the default browser is not a stable Chromium-family browser (Chrome, Edge, Brave, Chromium), browser.real_profile_pin names a missing profile, or the copy failed; fails closed (spec §B10)",
	NoDialog:               "browser_dialog was called but no JavaScript dialog is pending in the task's tab (or dialog_id names none)",
	InvalidDialogAction:    "browser_dialog action is not accept or dismiss",
	DialogPending:          "a JavaScript dialog is open in the tab (browser.dialog_policy must_respond); answer it with browser_dialog before acting on the page",
	NavigationDownload:     "browser_navigate's URL serves a file download (Content-Disposition: attachment, or a type the browser does not display), not a page; the file is saved to downloads[].path and the tab stays where it was",

	InvalidArguments: "the tool arguments do not match the tool's input schema (wrong type, missing or extra field, out of range)",
	ToolUnavailable:  "the tool exists but is not usable in this process (e.g. no Chromium, no search backend); `gatehouse doctor` says why",
	TooManyCalls:     "too many tool calls are running: this MCP session's (gatehouse mcp --max-calls: a refused tool result), this caller's across all its sessions (config mcp.principal_max_calls) or this replica's (config mcp.replica_max_calls); the last two are answered HTTP 429 with Retry-After; wait for one to finish, or retry on another replica",
	RateLimited:      "this caller started tool calls faster than its rate allows (a token bucket per principal, config mcp.principal_rate); retry after the Retry-After seconds of the HTTP 429 answer",
	ServerDraining:   "the HTTP server is shutting down (SIGTERM; --drain): calls already running finish, new ones get HTTP 503 with Retry-After; retry on another replica",
	ReadOutsideStore: "web_read was given a path outside the full-text store directory (a .. component, an absolute path elsewhere, a subdirectory, or a file that is not a stored page)",
	ReadSymlink:      "web_read refuses symlinks, even inside the store directory",
	ReadNotRegular:   "web_read reads only regular files (not directories, FIFOs or devices)",
	ReadNotFound:     "no stored page has that name (the store keeps truncated pages; re-run web_extract to store it again)",
	ReadPastEnd:      "web_read was given an offset past the last line of the stored page; the message says how many lines it has",
	StateUnavailable: "the shared state (Redis, GATEHOUSE_REDIS_URL) did not answer; the call needs it and Gatehouse never falls back to per-replica state; the message names the Redis host (never its password); calls succeed again once Redis is back, with no restart",
	StateBadURL:      "GATEHOUSE_REDIS_URL (or config state.redis_url) is not a usable Redis URL (redis://[user[:password]@]host[:port][/db] or rediss:// for TLS); Gatehouse refuses to start rather than run without the shared state",
	StateCorrupt:     "a value in the shared state (Redis) under Gatehouse's keys is not one Gatehouse wrote (truncated, wrong type, a name outside the store); it was not used",
	ToolFailed:       "the tool broke instead of answering (a bug, not a refusal); the message says where, the server log has the details",
}

// Doc returns the one-line documentation of c, or "" for an unknown code.
func (c Code) Doc() string { return codes[c] }

// Known reports whether c is one of the codes defined in this package.
func (c Code) Known() bool { _, ok := codes[c]; return ok }

// All returns every defined code, sorted.
func All() []Code {
	out := make([]Code, 0, len(codes))
	for c := range codes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Error is a refusal or failure with a stable Code and a human Message that
// names the fix. Message never contains a resolved private IP or a secret value.
// Use errors.As to recover it from a wrapped error.
type Error struct {
	Code    Code
	Gate    Gate   // which gate refused; "" for non-gate failures
	Message string // human text, safe to show an agent
	Err     error  // underlying cause (may include details not shown to agents); may be nil
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	if e.Message != "" {
		return e.Message
	}
	return string(e.Code)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with the given code, gate and message.
func New(code Code, gate Gate, msg string) *Error {
	return &Error{Code: code, Gate: gate, Message: msg}
}

// Newf is New with a formatted message.
func Newf(code Code, gate Gate, format string, args ...any) *Error {
	return &Error{Code: code, Gate: gate, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error carrying cause as Err.
func Wrap(code Code, gate Gate, msg string, cause error) *Error {
	return &Error{Code: code, Gate: gate, Message: msg, Err: cause}
}

// Of returns the Code carried by err (via errors.As), or "" if err carries none.
func Of(err error) Code {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Code
	}
	return ""
}

// As returns the *Error carried by err, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	return nil
}

// RemoteLead introduces, in a Message, text a remote server wrote (a
// vendor's response body or error text, quoted for diagnosis). QuoteRemote
// puts it there; everything after the first RemoteLead in a message is the
// server's text, never Gatehouse's, so a surface that shows messages to a
// model (MCP) treats it as untrusted: it wraps that tail in the call's
// untrusted-content boundary (SplitRemote finds it). Untrusted text is
// always last in a message for this reason.
const RemoteLead = " The server's own answer began: "

// QuoteRemote returns msg followed by RemoteLead and remote made one line
// (runs of whitespace become one space); msg alone when remote is blank.
// Gatehouse's words appended after it (a rescue's "also failed: …") are
// shown as the server's, inside the boundary: safe, but put them first
// where a message is built in one place.
func QuoteRemote(msg, remote string) string {
	remote = strings.Join(strings.Fields(remote), " ")
	if remote == "" {
		return msg
	}
	return msg + RemoteLead + remote
}

// SplitRemote splits s at its first RemoteLead: ours is Gatehouse's text
// (with the lead), remote the server's text after it; ok is false (ours ==
// s) when s quotes no server.
func SplitRemote(s string) (ours, remote string, ok bool) {
	i := strings.Index(s, RemoteLead)
	if i < 0 {
		return s, "", false
	}
	return s[:i+len(RemoteLead)], s[i+len(RemoteLead):], true
}
