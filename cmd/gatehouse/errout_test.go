package main

import (
	"bytes"
	"encoding/json"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for one writer goroutine and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// --json applies to usage errors too: one JSON error object on stdout with
// reason usage_error, nothing on stderr, exit status 2 (issue 6 item 14).
func TestUsageErrorsUnderJSON(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{
		{"check", "--json"}, // missing URL
		{"check", "--json", "--for", "nope", "http://x/"}, // bad flag value
		{"check", "--json", "--bogus", "http://x/"},       // unknown flag
		{"extract", "--json"},                             // missing URL
		{"extract", "--json", "--char-limit", "many", "http://x/"},
		{"extract", "--json=true"},
		{"--json", "bogus"}, // unknown command
	} {
		code, out, errs := cli(t, home, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		var got struct {
			Success *bool   `json:"success"`
			Error   string  `json:"error"`
			Reason  *string `json:"reason"`
		}
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil || dec.More() {
			t.Errorf("%v: stdout is not one JSON object (%v): %q", args, err, out)
			continue
		}
		if got.Success == nil || *got.Success || got.Reason == nil || *got.Reason != "usage_error" || got.Error == "" {
			t.Errorf("%v: %+v", args, got)
		}
		if errs != "" {
			t.Errorf("%v: stderr should stay empty under --json, got %q", args, errs)
		}
	}
	// Without --json, the text form on stderr stays.
	for _, args := range [][]string{{"check"}, {"check", "--json=false"}} {
		code, out, errs := cli(t, home, args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "FAILED [usage_error]: missing") {
			t.Errorf("%v: exit %d out %q err %q", args, code, out, errs)
		}
	}
}

func TestWantsJSON(t *testing.T) {
	for args, want := range map[string]bool{
		"check --json x":       true,
		"check x --json":       true,
		"check --json=1 x":     true,
		"check --json=false x": false,
		"check --json=maybe x": false,
		"check -- --json":      false,
		"check x":              false,
		"check --jsonish x":    false,
	} {
		if got := wantsJSON(strings.Fields(args)); got != want {
			t.Errorf("wantsJSON(%q) = %v, want %v", args, got, want)
		}
	}
}

// The standard library's log lines (an http.Server's "http: TLS handshake
// error", log.Printf in dependencies) come out as structured slog records,
// not bare lines, and the previous log setup is restored afterwards.
func TestStdlibLogIsStructured(t *testing.T) {
	var stderr lockedBuffer // the server logs from its own goroutine
	origOut, origFlags := log.Writer(), log.Flags()
	restore := routeStdlibLog(newLogs(&stderr))

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = nil // net/http then logs through the log package
	srv.StartTLS()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) // plain HTTP to a TLS port
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	c.Read(make([]byte, 512))
	c.Close()
	log.Printf("a dependency's log line")
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(stderr.String(), "TLS handshake error") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	srv.Close()
	restore()

	got := stderr.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) < 2 || !strings.Contains(got, "TLS handshake error") || !strings.Contains(got, "a dependency's log line") {
		t.Fatalf("expected the server's and log.Printf's lines, got %q", got)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, " level=") || !strings.Contains(l, " msg=") {
			t.Errorf("unstructured stderr line: %q", l)
		}
	}
	if log.Writer() != origOut || log.Flags() != origFlags {
		t.Errorf("log package settings not restored")
	}
}

// run itself routes the log package: a log.Printf made while a command runs
// reaches run's stderr as a slog record, never as a bare line on os.Stderr.
func TestRunRoutesStdlibLog(t *testing.T) {
	t.Cleanup(func() { testHookRun = func() {} })
	testHookRun = func() { log.Printf("logged during run") }
	home := t.TempDir()
	code, _, errs := cli(t, home, "--version")
	if code != 0 || !strings.Contains(errs, `msg="logged during run"`) || !strings.HasPrefix(errs, "time=") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
