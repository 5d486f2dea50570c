package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConfigBOMTolerated: a UTF-8 byte-order mark at the start of
// config.yaml (YAML 1.2 §5.2; Notepad writes one) is no part of the first
// key, for Load (tools and doctor) and for Set (breaker6 D7).
func TestConfigBOMTolerated(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "config.yaml")
	body := "\xef\xbb\xbfsecurity:\n  website_blocklist:\n    enabled: true\n    domains: [localhost]\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, warns, err := Load(home)
	if err != nil {
		t.Fatalf("Load with a BOM: %v", err)
	}
	if len(warns) != 0 || !cfg.Security.WebsiteBlocklist.Enabled || !slices.Equal(cfg.Security.WebsiteBlocklist.Domains, []string{"localhost"}) {
		t.Fatalf("Load with a BOM: warnings %v, blocklist %+v", warns, cfg.Security.WebsiteBlocklist)
	}
	if err := Set(home, "web.extract_char_limit", "3000"); err != nil {
		t.Fatalf("Set with a BOM: %v", err)
	}
	cfg, _, err = Load(home)
	if err != nil || cfg.Web.ExtractCharLimit != 3000 || !cfg.Security.WebsiteBlocklist.Enabled {
		t.Fatalf("after Set: %+v, %v", cfg, err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "\ufeff") {
		t.Errorf("Set wrote the BOM inside the text:\n%s", b)
	}
}
