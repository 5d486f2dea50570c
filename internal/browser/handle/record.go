// Package handle is the session handles of the browser tools (issue 19,
// docs/browser.md "Browser nodes"): browser_navigate returns a handle, a
// random id bound to the caller's principal, and every browser tool takes
// it back as its session argument. With browser nodes (shared state and a
// registered node) a handle's session is described by a Record in Redis,
// so any replica can attach to the session's tab on its node and serve
// the call; Store keeps the records, the per-handle call lock, the
// janitor's reap lease and the expiry marker.
//
// A record in Redis is data, not trust (DESIGN.md §3b): Decode rejects
// anything Gatehouse would not have written.
package handle

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/strictjson"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
)

// New returns a new handle: 128 random bits as 32 lowercase hex digits.
func New() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var handleRe = lazyregexp.New(`^[0-9a-f]{32}$`)

// Valid reports whether h has the form New returns. A handle of another
// form names no session (it is never looked up).
func Valid(h string) bool { return handleRe.MatchString(h) }

// Limits of a record.
const (
	// MaxRecordBytes bounds a record read from Redis; a longer value is
	// refused unread.
	MaxRecordBytes = 64 << 10
	// MaxFrames bounds the frame table.
	MaxFrames = 256
	// MaxCounter bounds navs, next_ref and a frame's next ref.
	MaxCounter = 1 << 30
	// maxText bounds the session key and the owner task.
	maxText = 512
	// RecordVersion is the record format written by this version (2:
	// suspect and gen). A version 1 record (the previous release's, during
	// a rolling upgrade) is read as one that was never recycled; any other
	// version is state_corrupt.
	RecordVersion = 2
)

// Record is one handle session as kept in Redis under RecordKey(principal,
// handle): where it lives (node, BrowserContext, target, node proxy) and
// what a replica needs to serve its next call with the same refs (the ref
// counters and frame table of page.js's registry, the last snapshot's hash
// for deltas).
type Record struct {
	Version int    `json:"v"`
	Handle  string `json:"handle"`
	Node    string `json:"node"`    // the browser node's id (32 hex)
	Context string `json:"context"` // the CDP BrowserContext id
	Target  string `json:"target"`  // the CDP target id of the session's tab
	Proxy   string `json:"proxy"`   // the session proxy's id on the node (32 hex)
	Key     string `json:"key"`     // the session key (browser tool results' session_key)
	Owner   string `json:"owner"`   // the task that created it
	// Principal is state.PrincipalKey of the principal the handle is bound
	// to (16 hex): Store.Get refuses a record whose principal is not the
	// caller's (one copied under another principal's key) as absent.
	Principal string  `json:"principal"`
	Active    bool    `json:"active"` // the SSRF private-address guard is on (browser.Gates.GuardActive)
	Navs      int     `json:"navs"`   // successful navigations
	NextRef   int     `json:"next_ref"`
	Frames    []Frame `json:"frames,omitempty"`
	// SnapHash is SnapHash of the last compact snapshot a result showed
	// ("" none): a replica whose cached snapshot differs gives a full one,
	// never a delta against the wrong text.
	SnapHash string `json:"snap_hash,omitempty"`
	// LastActive is when the last call ended (Unix ms).
	LastActive int64 `json:"last_active_ms"`
	// Suspect: a command of the session timed out (browser.command_timeout,
	// spec §B6); the next call through any replica recycles it: a fresh
	// BrowserContext and tab on a node under the same handle, Gen+1.
	Suspect bool `json:"suspect,omitempty"`
	// Gen counts the recycles (0–MaxCounter): a replica attached to an
	// older generation attaches to the record's new tab.
	Gen int `json:"gen,omitempty"`
}

// Frame is one entry of a session's frame table: frame k's CDP frame id and
// its next ref number (refs "f<k>e<n>").
type Frame struct {
	K    int    `json:"k"`
	ID   string `json:"id"`
	Next int    `json:"next"`
}

// ErrRecord is wrapped by every error of Decode and Validate.
var ErrRecord = errors.New("browser session record")

var (
	nodeIDRe = lazyregexp.New(`^[0-9a-f]{32}$`)
	cdpIDRe  = lazyregexp.New(`^[0-9A-Za-z._-]{1,64}$`)
	hashRe   = lazyregexp.New(`^[0-9a-f]{16}$`)
)

func text(s string) bool {
	if len(s) > maxText || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// Validate checks every field: version, handle, node and proxy ids (32
// hex), principal (16 hex), context and target ids (CDP ids: 1–64 of [0-9A-Za-z._-]), key and
// owner (printable, at most 512 bytes, key not empty), navs 0–MaxCounter,
// next_ref 1–MaxCounter, at most MaxFrames frames with k 1–MaxCounter
// unique, a CDP id and next 1–MaxCounter, snap_hash "" or 16 hex, a
// last-active time after 2020, gen 0–MaxCounter.
func (r Record) Validate() error {
	bad := func(f string, a ...any) error { return fmt.Errorf("%w: %s", ErrRecord, fmt.Sprintf(f, a...)) }
	switch {
	case r.Version == 1 && (r.Suspect || r.Gen != 0):
		return bad("a version 1 record has no suspect or gen")
	case r.Version != RecordVersion && r.Version != 1:
		return bad("version %d is not %d", r.Version, RecordVersion)
	case !Valid(r.Handle):
		return bad("handle is not 32 hex digits")
	case !nodeIDRe.MatchString(r.Node):
		return bad("node is not 32 hex digits")
	case !hashRe.MatchString(r.Principal):
		return bad("principal is not 16 hex digits")
	case !nodeIDRe.MatchString(r.Proxy):
		return bad("proxy is not 32 hex digits")
	case !cdpIDRe.MatchString(r.Context):
		return bad("context is not a CDP id")
	case !cdpIDRe.MatchString(r.Target):
		return bad("target is not a CDP id")
	case r.Key == "" || !text(r.Key) || !text(r.Owner):
		return bad("key or owner is not printable text of at most %d bytes", maxText)
	case r.Navs < 0 || r.Navs > MaxCounter:
		return bad("navs is outside 0–%d", MaxCounter)
	case r.NextRef < 1 || r.NextRef > MaxCounter:
		return bad("next_ref is outside 1–%d", MaxCounter)
	case len(r.Frames) > MaxFrames:
		return bad("more than %d frames", MaxFrames)
	case r.SnapHash != "" && !hashRe.MatchString(r.SnapHash):
		return bad("snap_hash is not 16 hex digits")
	case r.LastActive < 1577836800000:
		return bad("last_active_ms is not a time")
	case r.Gen < 0 || r.Gen > MaxCounter:
		return bad("gen is outside 0–%d", MaxCounter)
	}
	seen := map[int]bool{}
	for _, f := range r.Frames {
		if f.K < 1 || f.K > MaxCounter || seen[f.K] || !cdpIDRe.MatchString(f.ID) || f.Next < 1 || f.Next > MaxCounter {
			return bad("frame %d is not valid", f.K)
		}
		seen[f.K] = true
	}
	return nil
}

// Encode returns r as JSON after Validate.
func (r Record) Encode() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// Decode parses a record read from Redis for handle h: at most
// MaxRecordBytes of one JSON object with exactly the fields of Record (an
// unknown field, a wrong type, trailing data or a failed Validate is an
// error wrapping ErrRecord), whose handle is h. It never panics
// (FuzzDecode).
func Decode(h string, b []byte) (Record, error) {
	var r Record
	if len(b) > MaxRecordBytes {
		return r, fmt.Errorf("%w: longer than %d bytes", ErrRecord, MaxRecordBytes)
	}
	if err := strictjson.Decode(b, &r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrRecord, err)
	}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	if r.Handle != h {
		return Record{}, fmt.Errorf("%w: handle does not match the key", ErrRecord)
	}
	return r, nil
}
