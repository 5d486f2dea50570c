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
		// A later YAML document is never read: a blocklist there is dropped.
		{"blocklist in a later document", "security:\n  allow_private_urls: true\n---\nsecurity:\n  website_blocklist:\n    enabled: true\n", "security"},
		{"blocklist nested in a later document", "web: {}\n---\nx:\n  website_blocklist: {enabled: true}\n", "website_blocklist"},
		// A misspelt website_blocklist is ignored, which leaves the blocklist off.
		{"misspelt blocklist key", "security:\n  website_blocklst:\n    enabled: true\n    domains: [x.example]\n", "security.website_blocklst"},
		{"blocklist key in other case", "security:\n  Website-Blocklist: {enabled: true}\n", "security.Website-Blocklist"},
		{"blocklist under another name", "security:\n  blocked_sites:\n    domains: [x.example]\n", "security.blocked_sites"},
		// breaker5 D17: a miscased or misspelt security block was only a
		// warning, which left the blocklist off.
		{"security capitalised", "Security:\n  website_blocklist:\n    enabled: true\n    domains: [x.example]\n", "Security"},
		{"security upper case", "SECURITY:\n  website_blocklist: {enabled: true}\n", "SECURITY"},
		{"security misspelt", "securty:\n  website_blocklist: {enabled: true}\n", "securty"},
		{"security transposed", "secuirty:\n  allow_private_urls: false\n", "secuirty"},
		{"security misspelt, empty", "secutiry: {}\n", "secutiry"},
		{"blocklist capitalised at top level", "Website_Blocklist:\n  enabled: true\n", "Website_Blocklist"},
		{"fake ranges miscased", "security:\n  Fake_IP_Ranges: [198.18.0.0/15]\n", "security.Fake_IP_Ranges"},
		{"blocklist under an unknown key", "settings:\n  website_blocklist:\n    enabled: true\n", "settings"},
		{"blocklist deep under an unknown key", "sec:\n  a:\n    b: {Website-Blocklist: {enabled: true}}\n", "sec"},
		{"allow_private_urls under an unknown key", "safety:\n  allow_private_urls: false\n", "safety"},
		{"fake_ip_ranges under an unknown web key", "web:\n  net:\n    fake_ip_ranges: [198.18.0.0/15]\n", "web.net"},
		{"misspelt security in a later document", "web: {}\n---\nSecurity:\n  website_blocklist: {enabled: true}\n", "Security"},
		// An invalid fake-IP range is an error naming it, never dropped.
		{"invalid fake_ip_ranges entry", "security:\n  fake_ip_ranges: [198.18.0.0/15, 10.0.0.0/33]\n", "security.fake_ip_ranges"},
		{"invalid fake_ip_ranges string", "security:\n  fake_ip_ranges: \"198.18.0.0/15 bogus\"\n", "security.fake_ip_ranges"},
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
			if c.key == "security.fake_ip_ranges" && !strings.Contains(ke.Message, "is not a CIDR") {
				t.Fatalf("KeyError does not name the bad entry: %+v", ke)
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
		"web: {}\n---\nweb:\n  backend: exa\n",         // a later document without security keys
		"security:\n  tirith_policy: {mode: strict}\n", // an unrelated mapping under security
		"secure_mode: true\n",                          // three edits from "security"
		"browser:\n  engine_x: {enabled: true}\n",      // no security setting inside
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

// TestInvalidNeverEchoesASecret: the YAML parser quotes what it stumbled on
// (a duplicate key, a bad scalar); an API key pasted into config.yaml must
// not come back in the config_invalid message (it did: `mapping key
// "sk-proj-…" already defined`).
func TestInvalidNeverEchoesASecret(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	for _, y := range []string{
		"web:\n  " + key + ": 1\n  " + key + ": 2\n",
		"web: {a: 1, a: " + key + "}\n",
		"security:\n  " + key + "_blocklist: {enabled: true}\n",
		"\"" + key + "\": [\n",
	} {
		home := writeConfig(t, y)
		_, _, err := Load(home)
		if err == nil {
			t.Fatalf("Load(%q) accepted the file", y)
		}
		rerr := Invalid(Path(home), err)
		if strings.Contains(rerr.Message, "abcdefghij") {
			t.Errorf("config_invalid message carries the key: %s", rerr.Message)
		}
		if d := Diagnose(home); d.Refusal == nil || strings.Contains(d.Refusal.Message, "abcdefghij") {
			t.Errorf("Diagnose refusal carries the key: %+v", d.Refusal)
		}
	}
}

// TestMeantAsSecurityMessage: the refusal for a miscased security block
// names the line:column and says to rename it; one nested under an unknown
// key names the setting's line and where it belongs (breaker5 D17).
func TestMeantAsSecurityMessage(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"web: {}\nSecurity:\n  website_blocklist: {enabled: true}\n", ":2:1: Security: unknown key that looks like security written differently; it would be ignored. Rename it to security (key names are case-sensitive)."},
		{"web:\n  Security: {}\n", ":2:3: web.Security: unknown key that looks like security written differently; it would be ignored. Move it to security."},
		{"settings:\n  website_blocklist:\n    enabled: true\n", ":1:1: settings: unknown key holding the security setting website_blocklist (line 2:3), which would be ignored with it. Move website_blocklist to security.website_blocklist."},
	} {
		home := writeConfig(t, c.yaml)
		_, _, err := Load(home)
		rerr := Invalid(Path(home), err)
		if rerr == nil || rerr.Code != reason.ConfigInvalid || !strings.Contains(rerr.Message, Path(home)+c.want) {
			t.Errorf("Load(%q) refusal = %+v, want it to contain %q", c.yaml, rerr, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"security", "security", 0}, {"securty", "security", 1}, {"secuirty", "security", 2},
		{"secure", "security", 3}, {"", "ab", 2}, {"abc", "", 3}, {"kitten", "sitting", 3},
	} {
		if got := editDistance(c.a, c.b, 2); min(got, 3) != min(c.want, 3) {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestRefusalHasNoContradictingWarning: when a problem makes the file fail
// closed, the warning written for it ("… those entries were dropped", "…
// unknown key ignored") is not returned next to the refusal, which says
// the opposite (breaker5 D5 nit); warnings of other keys stay.
func TestRefusalHasNoContradictingWarning(t *testing.T) {
	for _, y := range []string{
		"web:\n  backend_x: 1\nsecurity:\n  website_blocklist:\n    enabled: true\n    domains: [a.example, 3]\n",
		"web:\n  backend_x: 1\nSecurity:\n  website_blocklist: {enabled: true}\n",
		"web:\n  backend_x: 1\nsecurity:\n  website_blocklist:\n    domain: [a.example]\n",
	} {
		home := writeConfig(t, y)
		_, warns, err := Load(home)
		var ke *KeyError
		if !errors.As(err, &ke) {
			t.Fatalf("Load(%q) = %v; want a KeyError", y, err)
		}
		if len(warns) != 1 || warns[0].Key != "web.backend_x" {
			t.Errorf("Load(%q) warnings = %v; want only web.backend_x's", y, warns)
		}
		for _, w := range warns {
			if w.Key == ke.Key || strings.Contains(w.Message, "dropped") {
				t.Errorf("Load(%q): warning %q contradicts the refusal %v", y, w, ke)
			}
		}
	}
}
