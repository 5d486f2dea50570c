package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestFailClosed: problems that would silently weaken the website policy are
// errors (KeyError, with position and fix); everything else stays a warning.
func TestFailClosed(t *testing.T) {
	fatal := []struct{ name, yaml, key string }{
		{"blocklist at top level", "website_blocklist:\n  enabled: true\n", "website_blocklist"},
		{"blocklist under web", "web:\n  website_blocklist: {enabled: true}\n", "web.website_blocklist"},
		{"domains under security", "security:\n  domains: [x.example]\n", "security.domains"},
		{"security under web", "web:\n  security: {}\n", "web.security"},
		{"typo in blocklist", "security:\n  website_blocklist:\n    enable: true\n", "security.website_blocklist.enable"},
		{"blocklist not a mapping", "security:\n  website_blocklist: [x.example]\n", "security.website_blocklist"},
		{"security not a mapping", "security: true\n", "security"},
		{"top level not a mapping", "- a\n- b\n", "(top level)"},
		{"enabled not a boolean", "security:\n  website_blocklist:\n    enabled: maybe\n", "security.website_blocklist.enabled"},
		{"non-string domain", "security:\n  website_blocklist:\n    domains: [a.example, 3]\n", "security.website_blocklist.domains"},
	}
	for _, c := range fatal {
		t.Run(c.name, func(t *testing.T) {
			home := writeConfig(t, c.yaml)
			cfg, _, err := Load(home)
			var ke *KeyError
			if cfg != nil || !errors.As(err, &ke) {
				t.Fatalf("Load = %v, %v; want a KeyError", cfg, err)
			}
			if ke.Key != c.key || ke.Line == 0 || ke.Fix == "" {
				t.Fatalf("KeyError = %+v, want key %s with position and fix", ke, c.key)
			}
			rerr := Invalid(Path(home), err)
			if rerr.Code != reason.ConfigInvalid || !strings.Contains(rerr.Message, Path(home)+":") || !strings.Contains(rerr.Message, ke.Fix) {
				t.Fatalf("Invalid = %+v", rerr)
			}
			if d := Diagnose(home); d.OK() || d.Refusal.Code != reason.ConfigInvalid {
				t.Fatalf("Diagnose = %+v", d)
			}
		})
	}
	warnOnly := []string{
		"security:\n  tirith_enabled: true\n",      // the described system's unrelated security keys
		"web:\n  backend_x: 1\n",                   // a typo elsewhere keeps the tools running
		"security:\n  allow_private_urls: maybe\n", // default (off) is the safe side
		"browser:\n  engine: firefox\n",
	}
	for _, y := range warnOnly {
		home := writeConfig(t, y)
		if _, warns, err := Load(home); err != nil || len(warns) == 0 {
			t.Errorf("Load(%q) = %v, %v; want warnings only", y, warns, err)
		}
	}
}

func TestDiagnose(t *testing.T) {
	home := t.TempDir()
	if d := Diagnose(home); !d.OK() || d.Exists {
		t.Fatalf("missing file: %+v", d)
	}
	os.WriteFile(filepath.Join(home, "have.txt"), []byte("x.example\n"), 0o600)
	os.WriteFile(Path(home), []byte("security:\n  website_blocklist:\n    shared_files: [have.txt, gone.txt]\n"), 0o600)
	d := Diagnose(home)
	if !d.OK() || !d.Exists || len(d.SharedFiles) != 2 {
		t.Fatalf("Diagnose = %+v", d)
	}
	if m := d.MissingSharedFiles(); len(m) != 1 || !strings.HasSuffix(m[0], "gone.txt") {
		t.Fatalf("missing = %v", m)
	}
	os.WriteFile(Path(home), []byte("web: [\n"), 0o600)
	if d := Diagnose(home); d.OK() || !strings.Contains(d.Refusal.Message, ":1:") {
		t.Fatalf("broken: %+v", d)
	}
}
