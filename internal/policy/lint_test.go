package policy

import (
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
