package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// cli runs the CLI in a fresh GATEHOUSE_HOME and returns exit status and output.
func cli(t *testing.T, home string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("GATEHOUSE_HOME", home)
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCheckJSONRefusesBothWithRightReasons(t *testing.T) {
	home := t.TempDir()
	code, out, errs := cli(t, home, "check", "--json", "http://2130706433/", "https://example.com/?token=x")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, errs)
	}
	var got struct {
		Results []struct {
			URL     string  `json:"url"`
			Allowed bool    `json:"allowed"`
			Gate    *string `json:"gate"`
			Reason  *string `json:"reason"`
			Host    *string `json:"host"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got.Results) != 2 {
		t.Fatalf("results: %s", out)
	}
	a, b := got.Results[0], got.Results[1]
	if a.Allowed || *a.Gate != "ssrf" || *a.Reason != "ssrf_private" || *a.Host != "127.0.0.1" || a.URL != "http://2130706433/" {
		t.Errorf("first: %+v", a)
	}
	// Refused by the secret gate before any DNS lookup.
	if b.Allowed || *b.Gate != "secret" || *b.Reason != "sensitive_query_param" || *b.Host != "example.com" {
		t.Errorf("second: %+v", b)
	}
}

func TestCheckExitCodesAndModes(t *testing.T) {
	home := t.TempDir()
	if code, out, _ := cli(t, home, "check", "--for", "browser", "http://127.0.0.1:3000/"); code != 0 || !strings.Contains(out, "true") {
		t.Errorf("local browser may open loopback: exit %d\n%s", code, out)
	}
	if code, _, _ := cli(t, home, "check", "--for", "browser", "--backend", "cloud", "http://127.0.0.1:3000/"); code != 1 {
		t.Errorf("cloud browser must refuse loopback: exit %d", code)
	}
	if code, out, _ := cli(t, home, "check", "--json", "--for", "browser", "http://169.254.169.254/latest/"); code != 1 || !strings.Contains(out, `"ssrf_metadata"`) {
		t.Errorf("metadata always refused: exit %d %s", code, out)
	}
	if code, _, errs := cli(t, home, "check"); code != 2 || !strings.Contains(errs, "missing") {
		t.Errorf("no URL: exit %d %s", code, errs)
	}
	if code, _, _ := cli(t, home, "check", "--for", "nope", "http://x/"); code != 2 {
		t.Errorf("bad --for: exit %d", code)
	}
	if code, _, _ := cli(t, home, "check", "--bogus", "http://x/"); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code, out, _ := cli(t, home, "check", "http://[::1"); code != 1 || !strings.Contains(out, "invalid_url") {
		t.Errorf("unparseable URL: exit %d %s", code, out)
	}
}

func TestPolicyShowsInCheck(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  allow_private_urls: true\n  website_blocklist:\n    enabled: true\n    domains: [localhost]\n"), 0o600)
	code, out, errs := cli(t, home, "check", "--json", "http://localhost:1/x")
	if code != 1 || !strings.Contains(out, `"gate": "policy"`) || !strings.Contains(out, `"policy_blocked"`) {
		t.Fatalf("exit %d out %s err %s", code, out, errs)
	}
}

func TestConfigGetSetPath(t *testing.T) {
	home := t.TempDir()
	if code, out, _ := cli(t, home, "config", "path"); code != 0 || strings.TrimSpace(out) != filepath.Join(home, "config.yaml") {
		t.Fatalf("path: %d %q", code, out)
	}
	if code, out, _ := cli(t, home, "config", "get", "web.extract_char_limit"); code != 0 || strings.TrimSpace(out) != "15000" {
		t.Fatalf("get default: %d %q", code, out)
	}
	if code, out, _ := cli(t, home, "config", "get", "browser"); code != 0 || !strings.Contains(out, "inactivity_timeout: 120") || !strings.Contains(out, "auto_local_for_private_urls: true") {
		t.Fatalf("get block: %d %q", code, out)
	}
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("# my settings\nweb:\n  backend: exa # shared\n"), 0o600)
	if code, _, errs := cli(t, home, "config", "set", "web.extract_backend", "direct"); code != 0 {
		t.Fatalf("set: %d %s", code, errs)
	}
	b, _ := os.ReadFile(filepath.Join(home, "config.yaml"))
	for _, want := range []string{"# my settings", "backend: exa # shared", "extract_backend: direct"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("config.yaml lost %q:\n%s", want, b)
		}
	}
	if code, _, errs := cli(t, home, "config", "set", "web.cache_ttl_minutes", "lots"); code != 1 || errs == "" {
		t.Errorf("bad value: %d %s", code, errs)
	}
	// Enum, legacy and unknown keys are refused at set time (exit 1), the
	// file untouched; the message names the key and what it accepts.
	before, _ := os.ReadFile(filepath.Join(home, "config.yaml"))
	for _, kv := range [][3]string{
		{"browser.dialog_policy", "ignore", "must_respond, auto_dismiss, auto_accept"},
		{"web.extract_render", "sometimes", "auto, always, never"},
		{"browser.allow_private_urls", "true", "security.allow_private_urls"},
		{"web.nosuch", "1", "valid keys in web"},
	} {
		if code, _, errs := cli(t, home, "config", "set", kv[0], kv[1]); code != 1 || !strings.Contains(errs, kv[2]) {
			t.Errorf("config set %s %s: exit %d, stderr %q; want 1 naming %q", kv[0], kv[1], code, errs, kv[2])
		}
	}
	if after, _ := os.ReadFile(filepath.Join(home, "config.yaml")); string(after) != string(before) {
		t.Errorf("refused sets changed config.yaml:\n%s", after)
	}
	if code, _, _ := cli(t, home, "config", "get"); code != 2 {
		t.Errorf("get without key: %d", code)
	}
	if code, _, _ := cli(t, home, "config"); code != 2 {
		t.Errorf("config without subcommand: %d", code)
	}
}

// TestExtractFooterPagesThroughGatehouseRead: a truncated CLI result's
// footer names `gatehouse read PATH --offset N` (not the MCP-side
// read_file), and running that command prints the omitted middle
// (newcomer review C3).
func TestExtractFooterPagesThroughGatehouseRead(t *testing.T) {
	var page strings.Builder
	page.WriteString(`<html><head><title>Long Story</title></head><body><article><h1>Long Story</h1>`)
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&page, "<p>Paragraph %d: the river rose overnight and the town council met at dawn to plan the response.</p>", i)
	}
	page.WriteString(`</article></body></html>`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page.String())
	}))
	defer srv.Close()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  allow_private_urls: true\n"), 0o600)
	code, out, errs := cli(t, home, "extract", "--char-limit", "2000", srv.URL+"/long")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	m := regexp.MustCompile(`gatehouse read (\S+) --offset (\d+) --limit (\d+)`).FindStringSubmatch(out)
	if m == nil || strings.Contains(out, "read_file") {
		t.Fatalf("footer does not name gatehouse read:\n%s", out[max(0, len(out)-600):])
	}
	code, got, errs := cli(t, home, "read", m[1], "--offset", m[2], "--limit", "5")
	if code != 0 || !strings.Contains(got, "Paragraph") || strings.Contains(out, strings.SplitN(got, "\n", 2)[0]) {
		t.Fatalf("read: exit %d\n%s\n%s", code, got, errs)
	}
	if !strings.Contains(errs, "read on: gatehouse read "+m[1]+" --offset ") {
		t.Errorf("no read-on hint on stderr: %s", errs)
	}
	// Past the end: nothing printed, a read_past_end refusal on stderr
	// saying how long the page is, exit 1 (breaker6 D10);
	// --offset 0 and --limit 0 are usage errors like --offset -5, not
	// silently 1 and 200 (breaker5 D24).
	if code, got, errs := cli(t, home, "read", m[1], "--offset", "999999"); code != 1 || got != "" || !regexp.MustCompile(`FAILED \[read_past_end\]: offset 999999 is past the end: the stored page has \d+ lines`).MatchString(errs) {
		t.Errorf("past the end: exit %d %q %q", code, got, errs)
	}
	for _, bad := range [][]string{{"--offset", "0"}, {"--limit", "0"}, {"--offset", "-5"}} {
		if code, _, errs := cli(t, home, append([]string{"read", m[1]}, bad...)...); code != 2 || !strings.Contains(errs, bad[0]) {
			t.Errorf("read %v: exit %d %s, want a usage error (2)", bad, code, errs)
		}
	}
	// Outside the store: refused with the store's reason code, exit 1.
	if code, out, _ := cli(t, home, "read", "--json", "/etc/passwd"); code != 1 || !strings.Contains(out, "read_outside_store") {
		t.Errorf("outside the store: exit %d %s", code, out)
	}
}

func TestExtractCLI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Local Story</title></head><body><article><h1>Local Story</h1>`+
			strings.Repeat("<p>The river rose overnight and the town council met at dawn to plan the response to the flood.</p>", 6)+`</article></body></html>`)
	}))
	defer srv.Close()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  allow_private_urls: true\n"), 0o600)

	code, out, errs := cli(t, home, "extract", srv.URL+"/story")
	if code != 0 || !strings.Contains(out, "Title: Local Story") || !strings.Contains(out, "town council") || !strings.Contains(out, "via direct") {
		t.Fatalf("exit %d\nout %s\nerr %s", code, out, errs)
	}
	code, out, _ = cli(t, home, "extract", "--json", srv.URL+"/story", "http://169.254.169.254/")
	var resp struct {
		Results []map[string]any `json:"results"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &resp) != nil || len(resp.Results) != 2 || resp.Results[1]["reason"] != "ssrf_metadata" {
		t.Fatalf("json: exit %d %s", code, out)
	}
	// Every URL failed → exit 1; a secret refuses the call → exit 1.
	if code, out, _ := cli(t, home, "extract", "http://169.254.169.254/"); code != 1 || !strings.Contains(out, "ssrf_metadata") {
		t.Errorf("all failed: exit %d %s", code, out)
	}
	if code, out, errs := cli(t, home, "extract", srv.URL+"/?k=sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"); code != 1 || out != "" || !strings.HasPrefix(errs, "FAILED [secret_in_url]: ") || strings.Contains(errs, "aaaaaaaaaa") {
		t.Errorf("secret: exit %d %s%s", code, out, errs)
	}
	if code, _, errs := cli(t, home, "extract", "a", "b", "c", "d", "e", "f"); code != 2 || !strings.Contains(errs, "at most 5") {
		t.Errorf("six URLs: exit %d %s", code, errs)
	}
	// --char-limit below the floor is clamped to 2000, not refused.
	if code, _, errs := cli(t, home, "extract", "--char-limit", "10", srv.URL+"/story"); code != 0 {
		t.Errorf("char-limit: exit %d %s", code, errs)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	home := t.TempDir()
	if code, _, _ := cli(t, home, "bogus"); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	if code, _, errs := cli(t, home, "extract"); code != 2 || strings.Contains(errs, "gatehouse: gatehouse") {
		t.Errorf("extract without URL: exit %d %q", code, errs)
	}
	// A negative value is a value, not a flag.
	if code, _, errs := cli(t, home, "config", "set", "web.extract_timeout", "-1"); code != 0 {
		t.Errorf("negative value: exit %d %s", code, errs)
	}
	if code, out, _ := cli(t, home, "config", "get", "web.extract_timeout"); code != 0 || strings.TrimSpace(out) != "none" { // no cap
		t.Errorf("extract_timeout after -1: %q", out)
	}
}

func TestCheckDoesNotEchoSecrets(t *testing.T) {
	home := t.TempDir()
	secret := "ghp_AAAAAAAAAAAAAAAAAAAAAAAA"
	for _, args := range [][]string{{"check", "--json", "https://example.com/?x=" + secret}, {"check", "https://example.com/?x=" + secret}} {
		code, out, errs := cli(t, home, args...)
		if code != 1 || strings.Contains(out+errs, secret) || !strings.Contains(out, "secret_in_url") {
			t.Errorf("%v: exit %d out %s", args, code, out)
		}
	}
}

// SIGTERM cancels the batch context and the exit code is 128+15.
func TestSignalContextReportsSignal(t *testing.T) {
	ctx, stop, code := signalContext()
	defer stop()
	sendSIGTERM(t, ctx, code)
}

// TestWarningsOncePerProcess: a warning reported by several components (the
// web service and the browser gates both load the blocklist files) or by a
// command that loads the config twice is printed once (newcomer review C6).
func TestWarningsOncePerProcess(t *testing.T) {
	home := writeHome(t, "security:\n  website_blocklist:\n    enabled: true\n    domains: [bad.example]\n    shared_files: [/nonexistent/gatehouse-list.txt]\nbogus_key: 1\n", "")
	for _, args := range [][]string{
		{"check", "https://93.184.216.34/"},
		{"check", "--eval", "1+1"},
		{"extract", "--backend", "nosuch", "https://93.184.216.34/"},
	} {
		_, _, errs := cli(t, home, args...)
		for _, w := range []string{"shared blocklist file not found", "bogus_key: unknown key"} {
			if n := strings.Count(errs, w); n != 1 {
				t.Errorf("%v: %q printed %d times:\n%s", args, w, n, errs)
			}
		}
	}
}

// config get, set and path honour --json like the other commands: a JSON
// object on stdout for success and for failure (config_unknown_key,
// config_bad_value), exit 1.
func TestConfigJSON(t *testing.T) {
	home := t.TempDir()
	code, out, errs := cli(t, home, "config", "set", "--json", "web.extract_timeout", "-1")
	var set struct {
		Success   bool
		Key, Path string
	}
	if code != 0 || json.Unmarshal([]byte(out), &set) != nil || !set.Success || set.Key != "web.extract_timeout" || set.Path != filepath.Join(home, "config.yaml") {
		t.Fatalf("set --json: exit %d, %q, %q", code, out, errs)
	}
	code, out, _ = cli(t, home, "config", "get", "--json", "web")
	var get struct {
		Success bool
		Value   map[string]any
	}
	if code != 0 || json.Unmarshal([]byte(out), &get) != nil || !get.Success || get.Value["extract_timeout"] != "none" || get.Value["cache_ttl_minutes"] == nil {
		t.Fatalf("get --json web: exit %d, %q", code, out)
	}
	if code, out, _ = cli(t, home, "config", "path", "--json"); code != 0 || !strings.Contains(out, `"path": "`+filepath.Join(home, "config.yaml")) {
		t.Fatalf("path --json: exit %d, %q", code, out)
	}
	for _, c := range []struct {
		args []string
		want reason.Code
	}{
		{[]string{"config", "get", "--json", "nope.x"}, reason.ConfigUnknownKey},
		{[]string{"config", "set", "web.extract_timeout", "banana", "--json"}, reason.ConfigBadValue},
	} {
		code, out, errs := cli(t, home, c.args...)
		var e errorJSON
		if code != 1 || json.Unmarshal([]byte(out), &e) != nil || e.Success || e.Reason != c.want || e.Error == "" || errs != "" {
			t.Errorf("%v: exit %d, %q, stderr %q; want %s", c.args, code, out, errs, c.want)
		}
	}
}

// TestConfigFailuresPrintedAsFailed: every failure of config get and set
// prints as every failed command does (breaker7 D9): one "FAILED [reason]:
// message" line on stderr in text mode, nothing on stdout, exit 1, with a
// code naming what went wrong (an unknown or legacy key, a value the key
// does not take, a config.yaml that does not parse), and the same code and
// message as the JSON error object under --json.
func TestConfigFailuresPrintedAsFailed(t *testing.T) {
	home := t.TempDir()
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "config.yaml"), []byte("web:\n  backend: [exa\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		home string
		args []string
		want reason.Code
		says string
	}{
		{home, []string{"config", "get", "nosuch.key"}, reason.ConfigUnknownKey, `unknown key "nosuch.key"; valid top-level keys: web, security`},
		{home, []string{"config", "set", "web.extract_render", "sometimes"}, reason.ConfigBadValue, "want one of auto, always, never"},
		{home, []string{"config", "set", "browser.allow_private_urls", "true"}, reason.ConfigUnknownKey, "set security.allow_private_urls instead"},
		{home, []string{"config", "set", "web", "x"}, reason.ConfigUnknownKey, "web is a block"},
		// "*." is a blocklist pattern, not a YAML alias; this one can
		// match no host (breaker7 D11), so it is refused.
		{home, []string{"config", "set", "security.website_blocklist.domains", "*.8.8.8"}, reason.ConfigBadValue, "ends in a number"},
		{broken, []string{"config", "get", "web"}, reason.ConfigInvalid, "config.yaml:2:12 is not valid YAML"},
		{broken, []string{"config", "set", "web.backend", "exa"}, reason.ConfigInvalid, "config.yaml:2:12 is not valid YAML"},
	} {
		code, out, errs := cli(t, c.home, c.args...)
		prefix := "FAILED [" + string(c.want) + "]: "
		if code != 1 || out != "" || !strings.HasPrefix(errs, prefix) || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.says) ||
			strings.Contains(errs, "gatehouse: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line %s… naming %q", c.args, code, out, errs, prefix, c.says)
		}
		code, out, errs = cli(t, c.home, append(c.args, "--json")...)
		var e errorJSON
		if code != 1 || errs != "" || json.Unmarshal([]byte(out), &e) != nil || e.Success || e.Reason != c.want || !strings.Contains(e.Error, c.says) {
			t.Errorf("%v --json: exit %d, stdout %q, stderr %q; want reason %s", c.args, code, out, errs, c.want)
		}
	}
	if code, _, errs := cli(t, home, "config", "set", "security.website_blocklist.domains", "*.ads.example, b.example"); code != 0 {
		t.Fatalf("set a \"*.\" pattern: exit %d, %s", code, errs)
	}
	if _, out, _ := cli(t, home, "config", "get", "security.website_blocklist.domains"); !strings.Contains(out, "*.ads.example") || !strings.Contains(out, "b.example") {
		t.Errorf("get after set: %q", out)
	}
}

// search --limit out of 1..100 is a usage error naming the range (exit 2,
// JSON under --json), before any backend is resolved.
func TestSearchLimitRange(t *testing.T) {
	home := t.TempDir()
	for _, n := range []string{"0", "101", "-3"} {
		code, out, errs := cli(t, home, "search", "--json", "--limit", n, "q")
		if code != 2 || !strings.Contains(out, `"reason": "usage_error"`) || !strings.Contains(out, "use 1 to 100") {
			t.Errorf("--limit %s: exit %d, %q, %q", n, code, out, errs)
		}
	}
}

// sendSIGTERM sends this process SIGTERM and checks that a signalContext's
// ctx is cancelled by it and its code is 128+15.
func sendSIGTERM(t *testing.T, ctx context.Context, code func() int) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("context not cancelled by SIGTERM")
	}
	if code() != 143 {
		t.Fatalf("exit code %d, want 143", code())
	}
}
