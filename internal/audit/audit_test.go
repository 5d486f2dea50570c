package audit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
)

// TestWriterRedactsAndWritesLines: one JSON line per event, the URL
// redacted (a credential-shaped token and a password), time in UTC.
func TestWriterRedactsAndWritesLines(t *testing.T) {
	var b bytes.Buffer
	w := audit.NewWriter(&b, nil)
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.FixedZone("x", 3600))
	w.Audit(audit.Event{Time: at, Kind: audit.KindGate, Principal: "ci", Tool: "web_extract",
		URL: "https://u:hunter2@example.com/?key=sk-proj0123456789abcdefABCDEF", Decision: audit.Refuse, Reason: "secret_in_url", DurationMS: 3})
	w.Audit(audit.Event{Kind: audit.KindCall, Principal: "ci", Tool: "web_extract", Decision: audit.Refuse, Reason: "secret_in_url"})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", b.String())
	}
	if strings.Contains(b.String(), "hunter2") || strings.Contains(b.String(), "0123456789abcdef") {
		t.Fatalf("secret in the audit line: %s", b.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	if m["time"] != "2026-12-02T07:00:00Z" || m["event"] != "gate" || m["decision"] != "refuse" || m["duration_ms"] != 3.0 {
		t.Fatalf("line: %s", lines[0])
	}
	if strings.Contains(lines[1], `"url"`) {
		t.Fatalf("a call line carries no url: %s", lines[1])
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriterReportsFirstError: a failing writer is reported once.
func TestWriterReportsFirstError(t *testing.T) {
	n := 0
	w := audit.NewWriter(failing{}, func(error) { n++ })
	w.Audit(audit.Event{Kind: audit.KindCall})
	w.Audit(audit.Event{Kind: audit.KindCall})
	if n != 1 {
		t.Fatalf("onError called %d times, want 1", n)
	}
}

// TestOpenFile: created 0600 and appended to; a file other users can read
// is refused with the chmod fix; a directory is refused.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.jsonl")
	for i := 0; i < 2; i++ {
		f, err := audit.OpenFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("line\n")
		f.Close()
	}
	fi, _ := os.Stat(p)
	b, _ := os.ReadFile(p)
	if fi.Mode().Perm() != 0o600 || string(b) != "line\nline\n" {
		t.Fatalf("mode %v, content %q", fi.Mode(), b)
	}
	os.Chmod(p, 0o644)
	if _, err := audit.OpenFile(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a 0644 audit file: %v", err)
	}
	if _, err := audit.OpenFile(dir); err == nil {
		t.Fatal("a directory was accepted")
	}
}
