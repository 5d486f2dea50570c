package main

import (
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
