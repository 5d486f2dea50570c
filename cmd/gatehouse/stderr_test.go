package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowseStderrOneWarning: by default a browse prints no info lines
// (browser session created, closed), and as root the sandbox warning once;
// -v/--verbose shows the info lines (issue 16 item 11).
func TestBrowseStderrOneWarning(t *testing.T) {
	needChromium(t)
	t.Setenv("GATEHOUSE_LOG_LEVEL", "")
	t.Setenv("GATEHOUSE_DEBUG", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<title>Hi</title><h1>Hello</h1>`)
	}))
	defer srv.Close()
	code, _, errs := cli(t, t.TempDir(), "browse", srv.URL+"/")
	if code != 0 || strings.Contains(errs, "level=INFO") {
		t.Fatalf("browse: exit %d, stderr %q; want no info lines", code, errs)
	}
	want := 0
	if os.Geteuid() == 0 {
		want = 1
	}
	if n := strings.Count(errs, "sandbox disabled"); n != want || strings.Count(errs, "\n") != want {
		t.Errorf("browse: stderr %q; want the sandbox warning %d time(s) and nothing else", errs, want)
	}
	// As root, the warning is in the CLI's one form for warnings (breaker7 D9).
	if want == 1 && !strings.HasPrefix(errs, "gatehouse: warning: browser sandbox disabled: running as root") {
		t.Errorf("browse as root: stderr %q; want a \"gatehouse: warning:\" line", errs)
	}
	for _, args := range [][]string{{"-v", "browse", srv.URL + "/"}, {"browse", "--verbose", srv.URL + "/"}} {
		code, _, errs = cli(t, t.TempDir(), args...)
		if code != 0 || !strings.Contains(errs, "level=INFO") || !strings.Contains(errs, "browser session created") {
			t.Errorf("%v: exit %d, stderr %q; want the session's info lines", args, code, errs)
		}
	}
}

// TestWarningLoggedOncePerProcess: the same warning (message and
// attributes) logged again in the same process, from any logger derived
// from the process's, is printed once; a different one is printed.
func TestWarningLoggedOncePerProcess(t *testing.T) {
	var buf bytes.Buffer
	l := newLogs(&buf)
	for range 3 {
		l.logger.Warn("browser sandbox disabled")
		l.logger.With("backend", "local").Warn("sandbox", "why", "root")
	}
	l.logger.Warn("sandbox", "why", "other")
	l.logger.Info("cache hit")
	got := buf.String()
	if strings.Count(got, "browser sandbox disabled") != 1 || strings.Count(got, "why=root") != 1 || strings.Count(got, "why=other") != 1 || strings.Contains(got, "cache hit") {
		t.Errorf("stderr:\n%s", got)
	}
}

// TestWarningsPrintedAsGatehouseWarning: a warning or error Gatehouse's
// own code logs (the browser sandbox off as root, a failed session
// cleanup) prints as every other CLI warning does, "gatehouse: warning:
// MESSAGE (k=v …)", attributes added with With/WithGroup included and
// quoted as slog quotes them (breaker7 D9); info and debug lines, shown
// with -v, and the log package's lines (logs.std) stay slog records.
func TestWarningsPrintedAsGatehouseWarning(t *testing.T) {
	t.Setenv("GATEHOUSE_LOG_LEVEL", "")
	t.Setenv("GATEHOUSE_DEBUG", "")
	var buf bytes.Buffer
	l := newLogs(&buf)
	l.logger.Warn("browser sandbox disabled: running as root (Chromium cannot sandbox as root); run as an unprivileged user to keep it on")
	l.logger.With("backend", "local").WithGroup("s").Error("browser stop failed", "err", "exit status 1")
	l.logger.Info("browser session created")
	l.std.Warn("http: TLS handshake error")
	want := "gatehouse: warning: browser sandbox disabled: running as root (Chromium cannot sandbox as root); run as an unprivileged user to keep it on\n" +
		"gatehouse: error: browser stop failed (backend=local s.err=\"exit status 1\")\n"
	got := buf.String()
	if !strings.HasPrefix(got, want) {
		t.Fatalf("stderr:\n%s\nwant it to start with:\n%s", got, want)
	}
	rest := strings.TrimPrefix(got, want)
	if strings.Contains(rest, "session created") || !strings.HasPrefix(rest, "time=") || !strings.Contains(rest, `level=WARN msg="http: TLS handshake error"`) {
		t.Errorf("after the warnings: %q; want only the log package's line, as a slog record", rest)
	}
	buf.Reset()
	l.verbose()
	l.logger.Info("browser session created", "session", "a")
	if got := buf.String(); !strings.HasPrefix(got, "time=") || !strings.Contains(got, `level=INFO msg="browser session created" session=a`) {
		t.Errorf("-v info line: %q", got)
	}
}

// TestChromiumMissingSaidOnce: with no Chromium, doctor and mcp --help say
// why once, not once per browser tool (twelve 300-character lines).
func TestChromiumMissingSaidOnce(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("browser:\n  executable_path: /nonexistent/chromium\n"), 0o600)
	for _, args := range [][]string{{"doctor"}, {"mcp", "--help"}} {
		_, out, errs := cli(t, home, args...)
		if n := strings.Count(out+errs, "/nonexistent/chromium"); n != 1 {
			t.Errorf("%v: the Chromium problem is said %d times, want once:\n%s%s", args, n, out, errs)
		}
		if !strings.Contains(out, "browser_navigate") || !strings.Contains(out, "browser_close") {
			t.Errorf("%v: the unavailable browser tools are not named:\n%s", args, out)
		}
	}
}
