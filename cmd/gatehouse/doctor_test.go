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
		{"blocklist in a later document", "web: {}\n---\nsecurity:\n  website_blocklist:\n    enabled: true\n    domains: [evil.example]\n", "config.yaml:3:1"},
		{"misspelt blocklist key", "security:\n  website_blocklst:\n    enabled: true\n    domains: [evil.example]\n", "config.yaml:2:3"},
		// breaker5 D17: a capitalised or misspelt security block was a warning.
		{"capitalised security", "Security:\n  website_blocklist:\n    enabled: true\n    domains: [evil.example]\n", "config.yaml:1:1"},
		{"misspelt security", "web: {}\nsecurty:\n  website_blocklist:\n    enabled: true\n", "config.yaml:2:1"},
		{"non-string domain", "security:\n  website_blocklist:\n    enabled: true\n    domains: [evil.example, 3]\n", "config.yaml:4:14"},
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
				{"search", "--json", "some query"},
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
				if !strings.Contains(got.Error, c.where) || !strings.Contains(got.Error, "Fix") && !strings.Contains(got.Error, "Move") && !strings.Contains(got.Error, "Use one") && !strings.Contains(got.Error, "Write it") && !strings.Contains(got.Error, "Rename it") {
					t.Errorf("%v: message lacks position %s or fix: %s", args, c.where, got.Error)
				}
			}
			// Text mode: every tool command says FAILED [config_invalid] on stderr.
			for _, args := range [][]string{{"check", "https://example.com/"}, {"extract", "https://example.com/"}, {"search", "some query"}} {
				code, _, errs := cli(t, home, args...)
				if code != 1 || !strings.Contains(errs, "FAILED [config_invalid]") || !strings.Contains(errs, c.where) {
					t.Errorf("text %v: exit %d stderr %s", args, code, errs)
				}
			}
			var code int
			var out string
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

// TestDoctorShowsDotEnvProblems: a skipped .env line (its key is then
// missing) and a .env others can read are in doctor's report, text and JSON,
// naming the line and never a value. Doctor used to discard them.
func TestDoctorShowsDotEnvProblems(t *testing.T) {
	home := t.TempDir()
	const val = "tvly-SECRETVALUE1234567890"
	os.WriteFile(filepath.Join(home, ".env"), []byte("TAVILY_API_KEY="+val+"\nEXA_API_KEY "+val+"\n"), 0o644)
	os.Chmod(filepath.Join(home, ".env"), 0o644)
	code, out, errs := cli(t, home, "doctor")
	if strings.Contains(out+errs, "SECRETVALUE") {
		t.Fatalf("doctor printed a key value: %s %s", out, errs)
	}
	if !strings.Contains(out, ".env:2:1") || !strings.Contains(out, "chmod 600") {
		t.Errorf("doctor (exit %d) does not show the .env problems:\n%s", code, out)
	}
	_, out, _ = cli(t, home, "doctor", "--json")
	var d struct {
		EnvWarnings []string `json:"env_warnings"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.EnvWarnings) != 2 || strings.Contains(out, "SECRETVALUE") {
		t.Fatalf("doctor --json env_warnings = %v (%v): %s", d.EnvWarnings, err, out)
	}
}

// TestDoctorSaysACloudBrowserNetworkIsNotOurs: with a cloud provider or
// Camofox, doctor names the backend and says the egress proxy does not cover
// its network; a pinned provider without credentials is a problem (exit 1).
func TestDoctorSaysACloudBrowserNetworkIsNotOurs(t *testing.T) {
	type bs struct {
		OK      bool `json:"ok"`
		Browser struct {
			Backend     string `json:"backend"`
			Provider    string `json:"provider"`
			Endpoint    string `json:"endpoint"`
			NetworkOurs bool   `json:"network_ours"`
			Note        string `json:"note"`
			Problem     string `json:"problem"`
		} `json:"browser_backend"`
	}
	for _, c := range []struct {
		yaml, env, backend, provider string
		ours, problem                bool
	}{
		{"", "", "local", "", true, false},
		{"browser:\n  cloud_provider: browserbase\n", "BROWSERBASE_API_KEY=bb_x\nBROWSERBASE_PROJECT_ID=p\n", "cloud", "browserbase", false, false},
		{"browser:\n  cloud_provider: firecrawl\n", "", "cloud", "firecrawl", false, true},
		{"", "CAMOFOX_URL=http://10.0.0.7:9377\n", "camofox", "", false, false},
	} {
		home := t.TempDir()
		os.WriteFile(filepath.Join(home, "config.yaml"), []byte(c.yaml), 0o600)
		os.WriteFile(filepath.Join(home, ".env"), []byte(c.env), 0o600)
		code, out, _ := cli(t, home, "doctor", "--json")
		var d bs
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%q: %v %s", c.yaml, err, out)
		}
		b := d.Browser
		if b.Backend != c.backend || b.Provider != c.provider || b.NetworkOurs != c.ours || (b.Problem != "") != c.problem || (code != 0) != c.problem {
			t.Errorf("%q %q: exit %d %+v", c.yaml, c.env, code, b)
		}
		if !c.ours && !strings.Contains(b.Note, "egress proxy does not cover") {
			t.Errorf("%q: note %q", c.yaml, b.Note)
		}
		if strings.Contains(out, "bb_x") {
			t.Error("doctor printed a key")
		}
		_, text, _ := cli(t, home, "doctor")
		if !strings.Contains(text, "browser backend → "+c.backend) {
			t.Errorf("text report lacks the browser backend line:\n%s", text)
		}
	}
}

// TestDoctorShowsBlocklistLint: a blocklist rule written by hand that does
// not do what it reads as (a CIDR range) is a doctor warning, text and
// JSON, instead of "No problems found".
func TestDoctorShowsBlocklistLint(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  website_blocklist:\n    domains: [\"10.0.0.1/8\", ok.example]\n"), 0o600)
	_, out, _ := cli(t, home, "doctor")
	if !strings.Contains(out, "CIDR range") || strings.Contains(out, "\nNo problems found.") {
		t.Errorf("doctor text:\n%s", out)
	}
	_, out, _ = cli(t, home, "doctor", "--json")
	var d struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "10.0.0.1/8") {
		t.Errorf("doctor json: %s (%v)", out, err)
	}
}

// TestConfigSetRefusesLintedRule: `config set` refuses a blocklist entry
// policy.Lint faults (exit 1, nothing written) and splits a comma list.
func TestConfigSetRefusesLintedRule(t *testing.T) {
	home := t.TempDir()
	for _, bad := range []string{"10.0.0.1/8", "192.0.2.2:8703", `"*"`} {
		code, _, errs := cli(t, home, "config", "set", "security.website_blocklist.domains", bad)
		if code == 0 || !strings.Contains(errs, "website_blocklist rule") {
			t.Errorf("set %s: exit %d err %s", bad, code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "config.yaml")); err == nil {
		t.Error("a refused set wrote config.yaml")
	}
	if code, _, errs := cli(t, home, "config", "set", "security.website_blocklist.domains", "127.0.0.1, 10.0.0.1"); code != 0 {
		t.Fatalf("comma list: exit %d %s", code, errs)
	}
	code, out, _ := cli(t, home, "check", "--json", "http://10.0.0.1/")
	if code != 1 || !strings.Contains(out, "policy_blocked") && !strings.Contains(out, "ssrf_private") {
		t.Errorf("check: exit %d %s", code, out)
	}
	_, out, _ = cli(t, home, "config", "get", "security.website_blocklist.domains")
	if !strings.Contains(out, "127.0.0.1") || !strings.Contains(out, "10.0.0.1") || strings.Contains(out, "127.0.0.1, 10") {
		t.Errorf("config get: %s", out)
	}
}

// TestDoctorShowsDroppedFakeIPRanges: security.fake_ip_ranges entries that
// overlap a network that can never be declared (spec §A6.1) are dropped with
// a warning every tool call prints; doctor lists the same warnings, text and
// JSON, once each, instead of "No problems found apart from the 1
// warning(s)" (breaker5 D11).
func TestDoctorShowsDroppedFakeIPRanges(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  fake_ip_ranges: [\"198.18.0.0/15\", \"127.0.0.0/8\", \"0.0.0.0/0\", \"fd00:ec2::/32\"]\n"), 0o600)
	_, _, errs := cli(t, home, "check", "http://93.184.216.34/")
	var printed []string
	for _, l := range strings.Split(errs, "\n") {
		if strings.Contains(l, "security.fake_ip_ranges: dropped") {
			printed = append(printed, strings.TrimPrefix(l, "gatehouse: warning: "))
		}
	}
	if len(printed) != 3 {
		t.Fatalf("check printed %d fake_ip_ranges warnings, want 3:\n%s", len(printed), errs)
	}
	_, out, _ := cli(t, home, "doctor", "--json")
	var d struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("doctor json: %v\n%s", err, out)
	}
	for _, p := range printed {
		n := 0
		for _, w := range d.Warnings {
			if w == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("doctor --json lists %q %d times, want once; warnings: %q", p, n, d.Warnings)
		}
	}
	_, out, _ = cli(t, home, "doctor")
	for _, p := range printed {
		if !strings.Contains(out, "warning: "+p) {
			t.Errorf("doctor text lacks %q:\n%s", p, out)
		}
	}
}

// TestRefusedConfigPrintsNoDroppedWarning: a non-string entry in
// security.website_blocklist.domains refuses the call (config_invalid); the
// CLI no longer also prints "warning: … those entries were dropped", which
// said the opposite (breaker5 D5 nit).
func TestRefusedConfigPrintsNoDroppedWarning(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  website_blocklist:\n    enabled: true\n    domains: [evil.example, 3]\n"), 0o600)
	code, _, errs := cli(t, home, "check", "https://example.com/")
	if code != 1 || !strings.Contains(errs, "FAILED [config_invalid]") || strings.Contains(errs, "dropped") || strings.Contains(errs, "warning:") {
		t.Errorf("exit %d stderr:\n%s", code, errs)
	}
}

// TestDoctorTokensFile: doctor --tokens FILE reports a principals file as
// gatehouse mcp --tokens would take it: the names when it is good (never a
// token or hash), the line that breaks it otherwise (exit 1).
func TestDoctorTokensFile(t *testing.T) {
	home := t.TempDir()
	const h = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	good := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(good, []byte("# team\nalice:"+h+"\n"), 0o600)
	code, out, errs := cli(t, home, "doctor", "--json", "--tokens", good)
	var d struct {
		OK         bool `json:"ok"`
		Principals struct {
			OK    bool     `json:"ok"`
			Names []string `json:"names"`
		} `json:"principals"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 || !d.OK || !d.Principals.OK || len(d.Principals.Names) != 1 || d.Principals.Names[0] != "alice" || strings.Contains(out, h) {
		t.Fatalf("good file: exit %d %s %s (%v)", code, out, errs, err)
	}
	bad := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(bad, []byte("alice:"+h+"\n\nbob\n"), 0o600)
	code, out, _ = cli(t, home, "doctor", "--tokens", bad)
	if code != 1 || !strings.Contains(out, "principals: "+bad+": BROKEN") || !strings.Contains(out, "line 3") || strings.Contains(out, h) {
		t.Fatalf("bad file: exit %d\n%s", code, out)
	}
}
