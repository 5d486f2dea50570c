package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrokenConfigFailsClosed (issue 6 item 2): an unparseable, unreadable
// or misplaced config.yaml makes every tool refuse with config_invalid,
// naming the file, line:column and the fix; doctor shows the same. (The
// described system falls back to defaults here; Gatehouse departs on purpose.)
func TestBrokenConfigFailsClosed(t *testing.T) {
	cases := []struct {
		name, yaml, where string
	}{
		{"unparseable", "security: [oops\n", "config.yaml:1:11"},
		{"misplaced blocklist", "website_blocklist:\n  enabled: true\n  domains: [evil.example]\n", "config.yaml:1:1"},
		{"typo inside blocklist", "security:\n  website_blocklist:\n    enabled: true\n    domain: [evil.example]\n", "config.yaml:4:5"},
		{"blocklist not a mapping", "security:\n  website_blocklist: evil.example\n", "config.yaml:2:22"},
		{"wrong type for domains", "security:\n  website_blocklist:\n    enabled: true\n    domains: {evil.example: 1}\n", "config.yaml:4:14"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"check", "--json", "https://example.com/"},
				{"extract", "--json", "https://example.com/"},
			} {
				code, out, errs := cli(t, home, args...)
				var got struct {
					Success *bool
					Error   string
					Reason  string
				}
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("%v: not JSON (%v): %s / %s", args, err, out, errs)
				}
				if code != 1 || got.Success == nil || *got.Success || got.Reason != "config_invalid" {
					t.Fatalf("%v: exit %d out %s", args, code, out)
				}
				if !strings.Contains(got.Error, c.where) || !strings.Contains(got.Error, "Fix") && !strings.Contains(got.Error, "Move") && !strings.Contains(got.Error, "Use one") && !strings.Contains(got.Error, "Write it") {
					t.Errorf("%v: message lacks position %s or fix: %s", args, c.where, got.Error)
				}
			}
			code, out, _ := cli(t, home, "check", "https://example.com/")
			_ = out
			if code != 1 {
				t.Errorf("text check: exit %d", code)
			}
			code, out, _ = cli(t, home, "doctor")
			if code != 1 || !strings.Contains(out, "BROKEN [config_invalid]") || !strings.Contains(out, c.where) {
				t.Errorf("doctor: exit %d out %s", code, out)
			}
		})
	}
}

func TestUnreadableConfigFailsClosed(t *testing.T) {
	home := t.TempDir()
	// A directory where the file should be.
	if err := os.Mkdir(filepath.Join(home, "config.yaml"), 0o700); err != nil {
		t.Fatal(err)
	}
	code, out, _ := cli(t, home, "check", "--json", "https://example.com/")
	if code != 1 || !strings.Contains(out, "config_invalid") || !strings.Contains(out, "is a directory") {
		t.Fatalf("directory: exit %d out %s", code, out)
	}
	if os.Geteuid() == 0 {
		return // root reads a 0000 file
	}
	home = t.TempDir()
	p := filepath.Join(home, "config.yaml")
	os.WriteFile(p, []byte("web: {}\n"), 0o000)
	code, out, _ = cli(t, home, "check", "--json", "https://example.com/")
	if code != 1 || !strings.Contains(out, "config_invalid") || !strings.Contains(out, "permission denied") {
		t.Fatalf("unreadable: exit %d out %s", code, out)
	}
}

// TestDoctorMissingSharedFile: a missing shared blocklist file is a warning,
// never a broken tool (spec §A8), and doctor lists it.
func TestDoctorMissingSharedFile(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  website_blocklist:\n    enabled: true\n    shared_files: [gone.txt]\n"), 0o600)
	code, out, errs := cli(t, home, "check", "--json", "http://127.0.0.1/")
	if code != 1 || !strings.Contains(out, "ssrf_private") || !strings.Contains(errs, "gone.txt") {
		t.Fatalf("check: exit %d out %s err %s", code, out, errs)
	}
	code, out, _ = cli(t, home, "doctor", "--json")
	var d struct {
		OK      bool     `json:"ok"`
		Missing []string `json:"missing_shared_files"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 || !d.OK || len(d.Missing) != 1 || !strings.HasSuffix(d.Missing[0], "gone.txt") {
		t.Fatalf("doctor: exit %d %s (%v)", code, out, err)
	}
}

// TestCheckOutputRedacted: neither the table nor the JSON of `check` prints
// a secret, also one in the host name (issue 6 item 3).
func TestCheckOutputRedacted(t *testing.T) {
	home := t.TempDir()
	const key = "sk-proj0123456789abcdefabcdef"
	for _, args := range [][]string{
		{"check", "https://" + key + ".evil.example/x"},
		{"check", "--json", "https://" + key + ".evil.example/x"},
		{"check", "--for", "browser", "https://evil.example/?t=" + key},
		{"check", "https://" + strings.ToUpper(key) + ".evil.example/x"}, // the host is lower-cased before it is sent
	} {
		code, out, errs := cli(t, home, args...)
		if code != 1 || strings.Contains(strings.ToLower(out+errs), key) || !strings.Contains(out, "secret_in_url") {
			t.Errorf("%v: exit %d out %s err %s", args, code, out, errs)
		}
	}
}
