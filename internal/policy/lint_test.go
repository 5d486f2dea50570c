package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLint(t *testing.T) {
	for _, c := range []struct{ rule, want string }{
		{"example.com", ""},
		{"*.tracking.example", ""},
		{"https://example.com/path", ""},
		{"2001:db8::1", ""},
		{"10.0.0.1", ""},
		{"bücher.example", ""},
		{"# comment", ""},
		{"127.0.0.1, 10.0.0.1", "several entries"},
		{"a.com b.com", "several entries"},
		{"10.0.0.1/8", "CIDR"},
		{"192.0.2.2:8703", "port"},
		{"[2001:db8::1]:443", "port"},
		{"https://example.com:8443/", "port"},
		{"*", "matches no host"},
		{"ads.*", "matches no host"},
		{"a*b.example", "matches no host"},
		// Hostile review session 5, D5: inside a "*." pattern every '*'
		// (and '?', '[…]') is fnmatch syntax the matcher honours.
		{"*.*.x.test", ""},
		{"*.ad?.example", ""},
		{"*.ads[0-9].example", ""},
		{"exa$mple.com", "no host name can"},
		// breaker7 D11: a rule ending in a number is part of an address,
		// which only a rule naming the whole address matches.
		{"*.8.8.8", "ends in a number"},
		{"8.8", "ends in a number"},
		{"*.0x7f", "ends in a number"},
		{"8.8.8.8", ""},
		{"*.8.8.8.example", ""},
		{"a1.example", ""},
	} {
		got := Lint(c.rule)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("Lint(%q) = %q, want %q", c.rule, got, c.want)
		}
	}
	if p, _ := Load(true, []string{"*.*.x.test"}, nil, t.TempDir()); p.Check("http://a.b.x.test/") == nil || p.Check("http://b.x.test/") != nil {
		t.Errorf("*.*.x.test: a.b.x.test must be blocked and b.x.test not")
	}
	_, warns := Load(true, []string{"127.0.0.1, 10.0.0.1", "ok.example"}, nil, t.TempDir())
	if len(warns) != 1 || !strings.Contains(warns[0], "several entries") {
		t.Errorf("Load warnings: %q", warns)
	}
}

// TestSharedFileLineAdvice: a bad line of a shared blocklist file gets
// advice about that file's format (one host or pattern per line), naming
// the file and the line, never the YAML list advice meant for
// security.website_blocklist.domains (issue 16 item 13); a bad entry of
// the config list keeps the YAML advice.
func TestSharedFileLineAdvice(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "blocklist.txt")
	os.WriteFile(path, []byte("# shared list\nads.example, tracker.example\nok.example\nads.*\n10.0.0.0/8\n"), 0o600)
	_, warns := Load(true, []string{"a.example b.example"}, []string{"blocklist.txt"}, home)
	real, _ := filepath.EvalSymlinks(path)
	want := map[string]string{
		real + ":2: ": "one host or \"*.\" pattern per line: write ads.example, tracker.example on lines of their own",
		real + ":4: ": "matches no host",
		real + ":5: ": "CIDR",
	}
	for prefix, text := range want {
		found := false
		for _, w := range warns {
			if strings.HasPrefix(w, prefix) {
				found = true
				if !strings.Contains(w, text) || strings.Contains(w, "Write a list") || strings.Contains(w, "[") {
					t.Errorf("%q: want the file format's advice (%q), no YAML list", w, text)
				}
			}
		}
		if !found {
			t.Errorf("no warning starts with %q: %q", prefix, warns)
		}
	}
	if !slices.ContainsFunc(warns, func(w string) bool {
		return strings.Contains(w, "Write a list: [a.example, b.example]") && strings.HasSuffix(w, "(from config)")
	}) {
		t.Errorf("the config entry lost its YAML advice: %q", warns)
	}
}
