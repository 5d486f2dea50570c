package config

import (
	"strings"
	"testing"
)

// TestPrincipalLimitKeys: mcp.principal_max_calls and mcp.principal_rate
// default to limits one agent never meets, take user values, and refuse
// nonsense with a warning that names the key.
func TestPrincipalLimitKeys(t *testing.T) {
	c, _, err := Load(writeConfig(t, "web: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.PrincipalMaxCalls != DefaultPrincipalMaxCalls || c.MCP.PrincipalRate != DefaultPrincipalRate {
		t.Errorf("defaults: %d %g", c.MCP.PrincipalMaxCalls, c.MCP.PrincipalRate)
	}
	c, _, err = Load(writeConfig(t, "mcp:\n  principal_max_calls: 3\n  principal_rate: 2.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.PrincipalMaxCalls != 3 || c.MCP.PrincipalRate != 2.5 {
		t.Errorf("set: %d %g", c.MCP.PrincipalMaxCalls, c.MCP.PrincipalRate)
	}
	c, warns, err := Load(writeConfig(t, "mcp:\n  principal_max_calls: 0\n  principal_rate: -1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.PrincipalMaxCalls != 1 || c.MCP.PrincipalRate != DefaultPrincipalRate {
		t.Errorf("clamped: %d %g", c.MCP.PrincipalMaxCalls, c.MCP.PrincipalRate)
	}
	var all strings.Builder
	for _, w := range warns {
		all.WriteString(w.String() + "\n")
	}
	if !strings.Contains(all.String(), "mcp.principal_max_calls") || !strings.Contains(all.String(), "mcp.principal_rate") {
		t.Errorf("warnings do not name the keys:\n%s", all.String())
	}
}
