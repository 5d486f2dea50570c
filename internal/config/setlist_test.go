package config

import (
	"strings"
	"testing"
)

// TestSetListAndBlocklistLint: a comma list is a list, and a blocklist
// entry that would silently do nothing useful is refused (hostile review:
// "127.0.0.1, 10.0.0.1" became one rule matching nothing, exit 0). The
// real check is policy.Lint, wired by the CLI (TestConfigSetRefusesLintedRule).
func TestSetListAndBlocklistLint(t *testing.T) {
	home := t.TempDir()
	if err := Set(home, "security.website_blocklist.domains", "127.0.0.1, 10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Security.WebsiteBlocklist.Domains; len(got) != 2 || got[0] != "127.0.0.1" || got[1] != "10.0.0.1" {
		t.Errorf("domains = %q", got)
	}
	if err := Set(home, "web.disabled_providers", "exa,tavily"); err != nil {
		t.Fatal(err)
	}
	if cfg, _, _ = Load(home); len(cfg.Web.DisabledProviders) != 2 {
		t.Errorf("disabled_providers = %q", cfg.Web.DisabledProviders)
	}
	EntryCheck = func(key, e string) string {
		if key == "security.website_blocklist.domains" && (strings.ContainsAny(e, "/:") || e == "*" || strings.Contains(e, ".*")) {
			return "website_blocklist rule " + e + " refused by the check"
		}
		return ""
	}
	defer func() { EntryCheck = nil }()
	for _, bad := range []string{"10.0.0.1/8", "192.0.2.2:8703", `"*"`, "[ok.example, 'ads.*']"} {
		err := Set(home, "security.website_blocklist.domains", bad)
		if err == nil || !strings.Contains(err.Error(), "website_blocklist rule") {
			t.Errorf("set %q: err %v", bad, err)
		}
	}
	if cfg, _, _ = Load(home); len(cfg.Security.WebsiteBlocklist.Domains) != 2 {
		t.Errorf("a refused set changed the file: %q", cfg.Security.WebsiteBlocklist.Domains)
	}
	if err := Set(home, "security.website_blocklist.domains", "[a.example, '*.b.example']"); err != nil {
		t.Errorf("flow list: %v", err)
	}
}
