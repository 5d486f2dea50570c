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
