package config

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestLoadEnv(t *testing.T) {
	home := t.TempDir()
	text := "\ufeff# API keys\n" +
		"EXA_API_KEY=exa-123\n" +
		"export TAVILY_API_KEY = tvly-abc  \n" +
		"\n" +
		`DQ="a \"quoted\" value\n2" # comment` + "\n" +
		"SQ='lit\\n  '\n" +
		"INLINE=value # trailing comment\n" +
		"HASH=abc#def\n" +
		"EMPTY=\n" +
		"CRLF=yes\r\n" +
		"DUP=first\n" +
		"DUP=second\n" +
		"not a pair\n" +
		"1BAD=x\n" +
		"OPEN=\"never closed\n" +
		"TRAIL=\"x\" y\n" +
		"exportX=1\n"
	if err := os.WriteFile(EnvPath(home), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env, warns, err := LoadEnv(home)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"EXA_API_KEY":    "exa-123",
		"TAVILY_API_KEY": "tvly-abc",
		"DQ":             "a \"quoted\" value\n2",
		"SQ":             `lit\n`,
		"INLINE":         "value",
		"HASH":           "abc#def",
		"EMPTY":          "",
		"CRLF":           "yes",
		"DUP":            "second",
		"exportX":        "1",
	}
	for k, v := range want {
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("env[%s] = %q (present %t), want %q", k, got, ok, v)
		}
	}
	if len(env) != len(want) {
		t.Errorf("env has %d keys, want %d: %v", len(env), len(want), env)
	}
	lines := map[int]bool{}
	for _, w := range warns {
		lines[w.Line] = true
		if strings.Contains(w.String(), "never closed") {
			t.Errorf("warning echoes a value: %s", w)
		}
	}
	for _, l := range []int{13, 14, 15, 16} {
		if !lines[l] {
			t.Errorf("no warning for line %d: %v", l, warns)
		}
	}
	if len(warns) != 4 {
		t.Errorf("warnings = %v, want 4", warns)
	}
}

func TestLoadEnvMissingAndPerms(t *testing.T) {
	env, w, err := LoadEnv(t.TempDir())
	if err != nil || env == nil || len(env) != 0 || len(w) != 0 {
		t.Errorf("missing .env = %v, %v, %v", env, w, err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	// A world-readable .env is warned about when it holds a secret, naming
	// the variables (never the values); one holding only endpoints and
	// settings is not said to hold API keys (issue 16 item 13).
	for _, c := range []struct{ body, names string }{
		{"K=v\n", ""},
		{"SEARXNG_URL=http://10.0.0.2:8080\nGATEHOUSE_LOG_LEVEL=info\n", ""},
		{"EXA_API_KEY=\n", ""},
		{"TAVILY_API_KEY=tvly-secretvalue\nSEARXNG_URL=http://s.lan/\n", "(TAVILY_API_KEY)"},
		{"SEARXNG_URL=https://me:hunter2@s.lan/\nGATEHOUSE_MCP_TOKEN=tok\n", "(GATEHOUSE_MCP_TOKEN, SEARXNG_URL)"},
	} {
		home := t.TempDir()
		if err := os.WriteFile(EnvPath(home), []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(EnvPath(home), 0o644); err != nil {
			t.Fatal(err)
		}
		_, w, err = LoadEnv(home)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.names == "" && len(w) != 0:
			t.Errorf("%q: warnings %v, want none (no secret in the file)", c.body, w)
		case c.names != "" && (len(w) != 1 || !strings.Contains(w[0].Message, "chmod 600") || !strings.Contains(w[0].Message, "holds secrets "+c.names)):
			t.Errorf("%q: warnings %v, want one naming %s and chmod 600", c.body, w, c.names)
		case len(w) == 1 && (strings.Contains(w[0].Message, "secretvalue") || strings.Contains(w[0].Message, "hunter2")):
			t.Errorf("%q: a value leaked into %q", c.body, w[0].Message)
		}
	}
}

func TestLookup(t *testing.T) {
	t.Setenv("GH_TEST_KEY", "  from-os  ")
	t.Setenv("GH_TEST_ONLY_OS", "os")
	env := map[string]string{"GH_TEST_KEY": " from-file ", "GH_TEST_EMPTY": "  "}
	tests := []struct{ key, want string }{
		{"GH_TEST_KEY", "from-file"},
		{"GH_TEST_ONLY_OS", "os"},
		{"GH_TEST_EMPTY", ""},
		{"GH_TEST_UNSET_ANYWHERE", ""},
	}
	for _, tt := range tests {
		if got := Lookup(env, tt.key); got != tt.want {
			t.Errorf("Lookup(%s) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if got := Lookup(nil, "GH_TEST_KEY"); got != "from-os" {
		t.Errorf("Lookup(nil) = %q", got)
	}
}
