// Package audit writes Gatehouse's audit trail: one JSON line per gate
// decision and per tool call (issue 18, "Operability": the answer to "what
// did my agents touch?"). The MCP server (internal/mcpserver) is the one
// caller: every tool call ends in its record step, which hands the call and
// the verdict on each URL the call asked for to a Hook. The gates themselves
// (internal/web, internal/browser, internal/egress) write nothing here; their
// verdicts reach the audit through the tool result, which carries one reason
// code per refused URL.
//
// A line never carries a secret: URLs are passed through
// urlsafe.RedactLog (the rule of every Gatehouse log) by the Writer, and
// the principal is a name from the --tokens file, never a token.
package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Kinds of event.
const (
	KindCall = "call" // one per tool call
	KindGate = "gate" // one per URL a call asked for, with the gates' verdict
)

// Decisions.
const (
	Allow  = "allow"
	Refuse = "refuse"
)

// Event is one audit line. JSON field names are the line's keys.
type Event struct {
	// Time is when the call ended (UTC, RFC 3339 with nanoseconds).
	Time time.Time `json:"time"`
	// Kind is KindCall or KindGate.
	Kind string `json:"event"`
	// Principal is the caller's name (internal/principal; "default" for
	// the one-token and loopback forms).
	Principal string `json:"principal"`
	// Tool is the tool called.
	Tool string `json:"tool"`
	// URL is the URL judged (gate events), redacted; empty on call events.
	URL string `json:"url,omitempty"`
	// Decision is Allow or Refuse. A call is Refuse when it was a
	// whole-call refusal; a batch whose rows were refused one by one is
	// Allow, its gate events saying which URLs were refused.
	Decision string `json:"decision"`
	// Reason is the reason code of a refusal (internal/reason); on a call
	// event the whole-call refusal's code, or "" when allowed.
	Reason string `json:"reason,omitempty"`
	// DurationMS is the call's duration in milliseconds (gate events carry
	// their call's duration: the gates of a batch are not timed apart).
	DurationMS int64 `json:"duration_ms"`
}

// Hook receives audit events. Implementations must be safe for concurrent
// use and must not block for long: the call's answer waits for it.
type Hook interface {
	Audit(Event)
}

// Writer is a Hook that writes each event as one JSON line to W. Lines from
// concurrent calls never interleave. Write errors are reported once to
// OnError (nil: dropped) and later events are still tried.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	onError func(error)
	failed  bool
}

// NewWriter returns a Writer on w; onError (may be nil) hears the first
// write error.
func NewWriter(w io.Writer, onError func(error)) *Writer {
	return &Writer{w: w, onError: onError}
}

// Audit writes e as one line, its URL redacted.
func (w *Writer) Audit(e Event) {
	if w == nil {
		return
	}
	e.URL = urlsafe.RedactLog(e.URL)
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.w.Write(b); err != nil && !w.failed {
		w.failed = true
		if w.onError != nil {
			w.onError(err)
		}
	}
}

// FileMode is the mode of an audit file Gatehouse creates: the lines name
// principals and the sites they read.
const FileMode os.FileMode = 0o600

// OpenFile opens path for appending audit lines, creating it with FileMode.
// An existing file that other users may read or write (any group or other
// permission bit) is refused with a message naming the fix, rather than
// appended to. The caller closes the file.
func OpenFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("--audit %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--audit %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("--audit %s: not a regular file; name a file (it is created with mode 0600)", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		f.Close()
		return nil, fmt.Errorf("--audit %s: the file has mode %04o, readable or writable by other users; run chmod 600 %s (audit lines name principals and the sites they read)", path, fi.Mode().Perm(), path)
	}
	return f, nil
}
