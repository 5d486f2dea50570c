package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPLimitFlagsRefuseOutOfRange: --max-calls, --max-body-bytes and
// --session-idle below their minimum are usage errors (exit 2, a message
// naming the flag and its range on stderr) before any server starts. (mcp
// has no --json: it serves on stdout, so it prints no JSON of its own.)
func TestMCPLimitFlagsRefuseOutOfRange(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{
		{"--max-calls", "0"}, {"--max-calls", "-1"},
		{"--max-body-bytes", "0"}, {"--max-body-bytes", "-5"},
		{"--session-idle", "0s"}, {"--session-idle", "-1s"},
	} {
		code, out, errs := cli(t, home, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, args[0]) || !strings.Contains(errs, "want") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// `gatehouse mcp --help` lists the tools in one aligned table: every title
// starts in the same column, also after the longest names (breaker5 D24).
func TestMCPHelpToolTableAligned(t *testing.T) {
	code, out, errs := cli(t, t.TempDir(), "mcp", "--help")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	_, table, ok := strings.Cut(out, "Tools served in this environment:\n")
	if !ok {
		t.Fatalf("no tool table:\n%s", out)
	}
	col := -1
	rows := 0
	for _, ln := range strings.Split(table, "\n") {
		if !strings.HasPrefix(ln, "  ") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSpace(ln), " ")
		rest := ln[2+len(name):]
		at := 2 + len(name) + len(rest) - len(strings.TrimLeft(rest, " "))
		if len(rest)-len(strings.TrimLeft(rest, " ")) < 2 {
			t.Errorf("name and title run together: %q", ln)
		}
		if col >= 0 && at != col {
			t.Errorf("title of %s starts at column %d, others at %d:\n%s", name, at, col, table)
		}
		col = at
		rows++
	}
	if rows < 3 {
		t.Fatalf("table has %d rows:\n%s", rows, table)
	}
}

// TestMCPTokensFileRefusesBadFiles: a --tokens file readable by others, with
// a junk line, or with a name or hash used twice refuses to start with a
// message naming the file and the line; --tokens with --token is a usage
// error. No token value or hash is echoed.
func TestMCPTokensFileRefusesBadFiles(t *testing.T) {
	home := t.TempDir()
	const h1 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" // sha256("test")
	const h2 = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
	for _, c := range []struct {
		name, text string
		mode       os.FileMode
		want       []string
	}{
		{"world-readable", "alice:" + h1 + "\n", 0o644, []string{"chmod 600", "0644"}},
		{"junk line 3", "# team\n\nalice " + h1 + "\n", 0o600, []string{"line 3", "NAME:SHA256-HEX-OF-TOKEN"}},
		{"short hash", "alice:" + h1[:20] + "\n", 0o600, []string{"line 1", "64 hex digits"}},
		{"duplicate name", "alice:" + h1 + "\nalice:" + h2 + "\n", 0o600, []string{"line 2", "already used on line 1"}},
		{"duplicate hash", "alice:" + h1 + "\n#\nbob:" + h1 + "\n", 0o600, []string{"line 3", "already used on line 1"}},
	} {
		path := filepath.Join(t.TempDir(), "tokens")
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, c.mode)
		code, _, errs := cli(t, home, "mcp", "--http", "127.0.0.1:0", "--tokens", path)
		if code == 0 || !strings.Contains(errs, path) || strings.Contains(errs, h1[20:]) {
			t.Errorf("%s: exit %d, stderr %q", c.name, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr %q lacks %q", c.name, errs, w)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(path, []byte("alice:"+h1+"\n"), 0o600)
	code, _, errs := cli(t, home, "mcp", "--http", "127.0.0.1:0", "--tokens", path, "--token", "x")
	if code != 2 || !strings.Contains(errs, "--tokens and --token") {
		t.Errorf("--tokens with --token: exit %d, stderr %q", code, errs)
	}
}
