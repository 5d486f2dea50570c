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
