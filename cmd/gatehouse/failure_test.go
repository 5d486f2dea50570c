package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// failedLine is the one text-mode line of a failed command (printFailure).
var failedLine = regexp.MustCompile(`^FAILED \[([a-z_]+)\]: (\S.*)$`)

// TestTextModeFailuresOneFormat: every command reports a failure in text
// mode as "FAILED [reason]: message" on stderr (never raw JSON, nothing on
// stdout), with exit status 2 for a usage error and 1 for a refusal, and
// the message names the CLI flag or argument, never a schema property,
// the tool's schema or Go decoder/parser text (issue 16 item 10).
func TestTextModeFailuresOneFormat(t *testing.T) {
	t.Setenv("SEARXNG_URL", "")
	os.Unsetenv("SEARXNG_URL")
	for _, c := range []struct {
		name   string
		config string
		args   []string
		code   int
		reason string
		names  string // the flag or argument the message must name
	}{
		{"empty query", "", []string{"search", ""}, 2, "usage_error", "QUERY"},
		{"blank query", "", []string{"search", " ", "\t"}, 2, "usage_error", "QUERY"},
		{"searxng without its URL", "web:\n  search_backend: searxng\n", []string{"search", "golang"}, 1, "missing_key", "SEARXNG_URL"},
		{"search backend that cannot search", "", []string{"search", "--backend", "direct", "golang"}, 1, "no_provider", "--backend"},
		{"browse the metadata address", "", []string{"browse", "http://169.254.169.254/"}, 1, "ssrf_metadata", "metadata"},
		{"mcp port not a number", "", []string{"mcp", "--http", "127.0.0.1:notaport"}, 2, "usage_error", "--http"},
		{"mcp address without a port", "", []string{"mcp", "--http", "127.0.0.1"}, 2, "usage_error", "--http"},
		{"render outside its enum", "", []string{"extract", "--render", "sometimes", "http://x.test/"}, 2, "usage_error", "--render"},
		{"max-age below its minimum", "", []string{"extract", "--max-age", "-5", "http://x.test/"}, 2, "usage_error", "--max-age"},
		{"char-limit not a number", "", []string{"extract", "--char-limit", "abc", "http://x.test/"}, 2, "usage_error", "--char-limit"},
		{"links not a boolean", "", []string{"extract", "--links=maybe", "http://x.test/"}, 2, "usage_error", "--links"},
		{"search limit not a number", "", []string{"search", "--limit", "1.5", "golang"}, 2, "usage_error", "--limit"},
		{"read offset", "", []string{"read", "--offset", "0", "x.md"}, 2, "usage_error", "--offset"},
		{"read outside the store", "", []string{"read", "nope"}, 1, "read_outside_store", "path"},
		{"read an empty path", "", []string{"read", ""}, 2, "usage_error", "PATH: is empty"},
		{"mcp port out of range", "", []string{"mcp", "--http", ":99999"}, 2, "usage_error", "--http"},
		{"secret in an extract URL", "", []string{"extract", "http://x.test/?k=sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, 1, "secret_in_url", "URL"},
		{"missing URL", "", []string{"check"}, 2, "usage_error", "URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			if c.config != "" {
				os.WriteFile(filepath.Join(home, "config.yaml"), []byte(c.config), 0o600)
			}
			code, out, errs := cli(t, home, c.args...)
			first, _, _ := strings.Cut(errs, "\n")
			m := failedLine.FindStringSubmatch(first)
			if code != c.code || out != "" || m == nil || m[1] != c.reason {
				t.Fatalf("%q: exit %d, stdout %q, stderr %q; want exit %d, nothing on stdout and a first stderr line FAILED [%s]: …", c.args, code, out, errs, c.code, c.reason)
			}
			if !strings.Contains(m[2], c.names) {
				t.Errorf("%q: %q does not name %s", c.args, m[2], c.names)
			}
			for _, noise := range []string{"{", "input schema", "Go struct", "json:", "strconv", "minLength", "Invalid arguments for", " render:", "max_age_s", "lookup tcp"} {
				if strings.Contains(errs, noise) {
					t.Errorf("%q: stderr carries %q: %q", c.args, noise, errs)
				}
			}
		})
	}
}
