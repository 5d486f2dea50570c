package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/vectors"
	"github.com/goccy/go-yaml"
)

// writeConfig writes config.yaml into a fresh home and returns the home.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(Path(home), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func mustLoad(t *testing.T, home string) (*Config, []Warning) {
	t.Helper()
	c, w, err := Load(home)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c, w
}

func readConfig(t *testing.T, home string) string {
	t.Helper()
	b, err := os.ReadFile(Path(home))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// findWarning returns the first warning for key, failing if there is none.
func findWarning(t *testing.T, ws []Warning, key string) Warning {
	t.Helper()
	for _, w := range ws {
		if w.Key == key {
			return w
		}
	}
	t.Fatalf("no warning for %s in %v", key, ws)
	return Warning{}
}

func TestLoadMissingGivesDefaults(t *testing.T) {
	for name, home := range map[string]string{
		"empty home":   t.TempDir(),
		"missing home": filepath.Join(t.TempDir(), "nope"),
	} {
		t.Run(name, func(t *testing.T) {
			c, w := mustLoad(t, home)
			if len(w) != 0 {
				t.Errorf("warnings: %v", w)
			}
			if !reflect.DeepEqual(c, Default()) {
				t.Errorf("Load = %+v, want Default()", c)
			}
		})
	}
}

// The spec defaults, written independently of the code (spec §A12, §B13).
func TestDefaultValues(t *testing.T) {
	c := Default()
	checks := []struct {
		name      string
		got, want any
	}{
		{"web.extract_char_limit", c.Web.ExtractCharLimit, 15000},
		{"web.keyless_fallback", c.Web.KeylessFallback, true},
		{"web.keyless_rescue", c.Web.KeylessRescue, true},
		{"web.cache_enabled", c.Web.CacheEnabled, true},
		{"web.cache_ttl_minutes", c.Web.CacheTTLMinutes, 20},
		{"web.extract_timeout", c.Web.ExtractTimeout, 120 * time.Second},
		{"web.keyed_backstop", c.Web.KeyedBackstop, false},
		{"web.direct.connect_timeout", c.Web.Direct.ConnectTimeout, 10 * time.Second},
		{"web.direct.timeout", c.Web.Direct.Timeout, 30 * time.Second},
		{"web.direct.max_body_bytes", c.Web.Direct.MaxBodyBytes, int64(10485760)},
		{"security.allow_private_urls", c.Security.AllowPrivateURLs, false},
		{"security.redact_secrets", c.Security.RedactSecrets, true},
		{"security.website_blocklist.enabled", c.Security.WebsiteBlocklist.Enabled, false},
		{"browser.inactivity_timeout", c.Browser.InactivityTimeout, 120 * time.Second},
		{"browser.command_timeout", c.Browser.CommandTimeout, 30 * time.Second},
		{"browser.snapshot_threshold", c.Browser.SnapshotThreshold, 15000},
		{"browser.engine", c.Browser.Engine, "auto"},
		{"browser.auto_local_for_private_urls", c.Browser.AutoLocalForPrivateURLs, true},
		{"browser.dialog_policy", c.Browser.DialogPolicy, "must_respond"},
		{"browser.dialog_timeout_s", c.Browser.DialogTimeout, 300 * time.Second},
		{"browser.camofox.loopback_host_alias", c.Browser.Camofox.LoopbackHostAlias, "host.docker.internal"},
		{"browser.cloud_provider", c.Browser.CloudProvider, ""},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s = %#v, want %#v", ck.name, ck.got, ck.want)
		}
	}
	if c.Web.ProviderTier == nil || c.Web.AgentVisiblePaths == nil || c.Web.CacheExemptHosts == nil ||
		c.Security.FakeIPRanges == nil || c.Security.WebsiteBlocklist.Domains == nil || c.Security.WebsiteBlocklist.SharedFiles == nil {
		t.Error("Default has nil maps or slices")
	}
	// Fresh values: mutating one Default must not leak into the next.
	c.Web.ProviderTier["exa"] = "free"
	if len(Default().Web.ProviderTier) != 0 {
		t.Error("Default shares maps between calls")
	}
}

// Rendering the defaults and loading the rendering gives the defaults back,
// with no warnings; Normalized is the identity on Default().
func TestDefaultsRoundTrip(t *testing.T) {
	full, err := Get(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	home := writeConfig(t, full)
	c, w := mustLoad(t, home)
	if len(w) != 0 {
		t.Errorf("warnings loading the rendered defaults: %v", w)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("round trip = %+v\nwant %+v", c, Default())
	}
	n, w := Default().Normalized()
	if len(w) != 0 || !reflect.DeepEqual(n, Default()) {
		t.Errorf("Default().Normalized() = %+v, %v", n, w)
	}
	// Every leaf key appears once in the rendering.
	for _, k := range Keys() {
		if _, err := Get(home, k); err != nil {
			t.Errorf("Get(%s): %v", k, err)
		}
	}
}

func TestNormalizedClamps(t *testing.T) {
	c := Default()
	c.Web.ExtractCharLimit = 10
	c.Web.CacheTTLMinutes = 99999
	c.Browser.InactivityTimeout = time.Second
	c.Browser.Engine = "firefox"
	n, w := c.Normalized()
	if n.Web.ExtractCharLimit != 2000 || n.Web.CacheTTLMinutes != 1440 || n.Browser.InactivityTimeout != 30*time.Second || n.Browser.Engine != "auto" {
		t.Errorf("Normalized = %+v", n)
	}
	if len(w) != 4 {
		t.Errorf("warnings = %v, want 4", w)
	}
	if c.Web.ExtractCharLimit != 10 {
		t.Error("Normalized modified its receiver")
	}
}

// The §B13 key list, kept by hand as an oracle for the key table. The legacy
// allow_private_urls is left out: its one key is security.allow_private_urls
// (issue 16, TestAllowPrivateURLsOneKey).
var b13Keys = []string{
	"backend", "executable_path" /* Gatehouse addition, issue 8 */, "inactivity_timeout", "command_timeout", "snapshot_threshold", "record_sessions", "headed",
	"engine", "auto_local_for_private_urls", "cdp_url", "node_allow", "standby_replicas", "use_real_profile",
	"real_profile_autoclose", "real_profile_pin", "allow_unsafe_evaluate", "restrict_evaluate", "dialog_policy",
	"dialog_timeout_s", "camofox", "extension_control", "cloud_provider",
}

func TestGetBrowserListsEveryKey(t *testing.T) {
	out, err := Get(t.TempDir(), "browser")
	if err != nil {
		t.Fatal(err)
	}
	var m yaml.MapSlice
	if err := yaml.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("output is not YAML: %v\n%s", err, out)
	}
	var got []string
	for _, it := range m {
		got = append(got, it.Key.(string))
	}
	if !slices.Equal(got, b13Keys) {
		t.Errorf("browser keys = %v\nwant %v", got, b13Keys)
	}
	var camofox struct {
		Camofox map[string]any `yaml:"camofox"`
	}
	if err := yaml.Unmarshal([]byte(out), &camofox); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"managed_persistence", "user_id", "session_key", "adopt_existing_tab", "rewrite_loopback_urls", "loopback_host_alias"} {
		if _, ok := camofox.Camofox[k]; !ok {
			t.Errorf("browser.camofox.%s missing from Get output", k)
		}
	}
}

func TestGet(t *testing.T) {
	home := writeConfig(t, `web:
  backend: Exa
  cache_ttl_minutes: 5000
  provider_tier: {parallel: paid}
security:
  website_blocklist:
    domains: [evil.example]
`)
	tests := []struct {
		key, want string
	}{
		{key: "web.backend", want: "exa"},
		{key: "web.cache_ttl_minutes", want: "1440"}, // the merged value is the clamped one
		{key: "web.extract_timeout", want: "120"},
		{key: "web.search_backend", want: `""`},
		{key: "web.provider_tier.parallel", want: "paid"},
		{key: "browser.dialog_timeout_s", want: "300"},
		{key: "security.website_blocklist", want: "enabled: false\ndomains:\n  - evil.example\nshared_files: []"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := Get(home, tt.key)
			if err != nil || got != tt.want {
				t.Errorf("Get(%s) = %q, %v; want %q", tt.key, got, err, tt.want)
			}
		})
	}
}

func TestGetErrors(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		key      string
		contains []string
	}{
		{key: "nope", contains: []string{`"nope"`, "web, security, browser"}},
		{key: "web.nope", contains: []string{"valid keys in web", "backend"}},
		{key: "web.backend.x", contains: []string{"not a block"}},
		{key: "web.provider_tier.exa", contains: []string{"no entry"}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			_, err := Get(home, tt.key)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

const commented = `# Gatehouse settings
# keep this header

web:
  # which provider
  backend: exa   # chosen after testing
  cache_exempt_hosts:
    - a.dev
  extract_char_limit: 20000
browser:
    headed: true  # for debugging
x_unrelated: {a: 1}
# trailing note
`

func TestSetPreservesCommentsAndKeys(t *testing.T) {
	home := writeConfig(t, commented)
	if err := Set(home, "web.cache_ttl_minutes", "45"); err != nil {
		t.Fatal(err)
	}
	if err := Set(home, "web.backend", "tavily"); err != nil {
		t.Fatal(err)
	}
	got := readConfig(t, home)
	for _, want := range []string{
		"# Gatehouse settings\n# keep this header\n",
		"# which provider\n",
		"backend: tavily # chosen after testing\n", // inline comment on the changed key survives
		"headed: true # for debugging\n",           // inline comment on another key survives
		"extract_char_limit: 20000\n",              // unrelated key survives
		"x_unrelated: {a: 1}\n",                    // unknown key survives
		"# trailing note\n",
		"cache_ttl_minutes: 45\n",
		"- a.dev\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("after Set, file lacks %q:\n%s", want, got)
		}
	}
	c, w := mustLoad(t, home)
	if c.Web.Backend != "tavily" || c.Web.CacheTTLMinutes != 45 || c.Web.ExtractCharLimit != 20000 || !c.Browser.Headed {
		t.Errorf("Load after Set = %+v", c.Web)
	}
	if len(w) != 1 || w[0].Key != "x_unrelated" {
		t.Errorf("warnings = %v, want one for x_unrelated", w)
	}
}

func TestSetThenLoad(t *testing.T) {
	tests := []struct {
		key, value string
		check      func(c *Config) bool
	}{
		{"web.backend", "Parallel", func(c *Config) bool { return c.Web.Backend == "parallel" }},
		{"web.cache_enabled", "false", func(c *Config) bool { return !c.Web.CacheEnabled }},
		{"web.extract_timeout", "0", func(c *Config) bool { return c.Web.ExtractTimeout == 0 }},
		{"web.extract_timeout", "none", func(c *Config) bool { return c.Web.ExtractTimeout == 0 }},
		{"web.extract_timeout", "2.5", func(c *Config) bool { return c.Web.ExtractTimeout == 2500*time.Millisecond }},
		{"web.cache_exempt_hosts", "[a.dev, '*.b.dev']", func(c *Config) bool {
			return slices.Equal(c.Web.CacheExemptHosts, []string{"a.dev", "*.b.dev"})
		}},
		{"web.provider_tier.exa", "free", func(c *Config) bool { return c.Web.ProviderTier["exa"] == "free" }},
		{"web.agent_visible_paths./home/me/data.v2", "/workspace/data", func(c *Config) bool {
			return c.Web.AgentVisiblePaths["/home/me/data.v2"] == "/workspace/data"
		}},
		{"web.direct.user_agent", "Gatehouse/1.0 (+https://example.org)", func(c *Config) bool {
			return c.Web.Direct.UserAgent == "Gatehouse/1.0 (+https://example.org)"
		}},
		{"web.direct.max_body_bytes", "1048576", func(c *Config) bool { return c.Web.Direct.MaxBodyBytes == 1<<20 }},
		{"security.website_blocklist.enabled", "true", func(c *Config) bool { return c.Security.WebsiteBlocklist.Enabled }},
		{"security.fake_ip_ranges", "[198.18.0.0/15]", func(c *Config) bool {
			return slices.Equal(c.Security.FakeIPRanges, []string{"198.18.0.0/15"})
		}},
		{"browser.node_allow", "[10.0.0.0/8, Node1.Internal., '192.0.2.7']", func(c *Config) bool {
			return slices.Equal(c.Browser.NodeAllow, []string{"10.0.0.0/8", "node1.internal", "192.0.2.7"})
		}},
		{"browser.standby_replicas", "0", func(c *Config) bool { return c.Browser.StandbyReplicas == 0 }},
		{"browser.standby_replicas", "2", func(c *Config) bool { return c.Browser.StandbyReplicas == 2 }},
		{"browser.camofox.user_id", "30", func(c *Config) bool { return c.Browser.Camofox.UserID == "30" }}, // string key: literal text
		{"browser.real_profile_pin", `"Profile 1"`, func(c *Config) bool { return c.Browser.RealProfilePin == "Profile 1" }},
		{"browser.engine", "lightpanda", func(c *Config) bool { return c.Browser.Engine == "lightpanda" }},
		{"browser.inactivity_timeout", "600", func(c *Config) bool { return c.Browser.InactivityTimeout == 10*time.Minute }},
		{"browser.cloud_provider", "local", func(c *Config) bool {
			return c.Browser.CloudProvider == "local" && c.Browser.CloudProviderSet
		}},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home") // created by Set
			if err := Set(home, tt.key, tt.value); err != nil {
				t.Fatal(err)
			}
			c, w := mustLoad(t, home)
			if len(w) != 0 {
				t.Errorf("warnings: %v", w)
			}
			if !tt.check(c) {
				t.Errorf("after Set(%s, %s): %+v\nfile:\n%s", tt.key, tt.value, c, readConfig(t, home))
			}
		})
	}
}

func TestSetBadValueErrors(t *testing.T) {
	tests := []struct {
		key, value string
		contains   string
	}{
		{"web.cache_ttl_minutes", "soon", "expected integer"},
		{"web.cache_ttl_minutes", "5000", "outside 1–1440"},
		{"web.keyless_fallback", "maybe", "want true or false"},
		{"web.cache_exempt_hosts", "a.dev", "want a list"},
		{"web.extract_char_limit", "[1, 2]", "want an integer"},
		{"web.provider_tier.exa", "cheap", "unknown value"},
		{"web.direct.timeout", "-1", "must be positive"},
		{"browser.engine", "firefox", "unknown value"},
		{"browser.command_timeout", "1", "below the minimum"},
		{"browser.command_timeout", "", "needs a value"},
		{"security.fake_ip_ranges", "[not-a-cidr]", "not a CIDR"},
		{"browser.node_allow", "[10.0.0.0/8, 'http://x/']", "not a CIDR, IP address or host name"},
		{"browser.standby_replicas", "-1", "below the minimum 0"},
		{"browser.standby_replicas", "many", "want an integer"},
		{"browser.standby_replicas", "99999999999999999999", "above the maximum 16"},
		{"browser.standby_replicas", "17", "above the maximum 16"},
		{"web.backend", `"unterminated`, "not valid YAML"},
		{"browser", "x", "is a block"},
		{"", "x", "needs a key"},
		{"nope.x", "1", "valid top-level keys"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			home := writeConfig(t, commented)
			err := Set(home, tt.key, tt.value)
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("Set(%q, %q) = %v, want error containing %q", tt.key, tt.value, err, tt.contains)
			}
			if got := readConfig(t, home); got != commented {
				t.Errorf("file changed by a failed Set:\n%s", got)
			}
		})
	}
}

func TestSetEdgeLayouts(t *testing.T) {
	tests := []struct {
		name, initial, key, value string
		wantText                  []string
	}{
		{name: "no file", key: "web.backend", value: "exa", wantText: []string{"web:\n  backend: exa\n"}},
		{name: "comment-only file", initial: "# just a note\n", key: "browser.headed", value: "true",
			wantText: []string{"# just a note\n", "browser:\n  headed: true\n"}},
		{name: "flow mapping stays flow", initial: "web: {backend: exa}\n", key: "web.direct.timeout", value: "5",
			wantText: []string{"web: {backend: exa, direct: {timeout: 5}}"}},
		{name: "null block", initial: "web:\nbrowser:\n  headed: true\n", key: "web.backend", value: "exa",
			wantText: []string{"backend: exa", "headed: true"}},
		{name: "replace block list with flow list", initial: "web:\n  cache_exempt_hosts:\n    - a.dev\n  backend: exa\n",
			key: "web.cache_exempt_hosts", value: "[b.dev]", wantText: []string{"backend: exa"}},
		{name: "deep intermediate", initial: "security:\n  redact_secrets: true\n", key: "security.website_blocklist.domains",
			value: "[x.example]", wantText: []string{"redact_secrets: true", "website_blocklist:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.initial != "" {
				home = writeConfig(t, tt.initial)
			}
			if err := Set(home, tt.key, tt.value); err != nil {
				t.Fatal(err)
			}
			got := readConfig(t, home)
			for _, w := range tt.wantText {
				if !strings.Contains(got, w) {
					t.Errorf("file lacks %q:\n%s", w, got)
				}
			}
			want, _ := Get(home, tt.key)
			if _, w := mustLoad(t, home); len(w) != 0 {
				t.Errorf("warnings after Set: %v\n%s", w, got)
			}
			if want == "" {
				t.Errorf("Get(%s) empty", tt.key)
			}
		})
	}
}

func TestSetRefusesUnsafeLayouts(t *testing.T) {
	for name, initial := range map[string]string{
		"block is a scalar":  "web: 5\n",
		"top level is list":  "- a\n- b\n",
		"block is an alias":  "base: &b {backend: exa}\nweb: *b\n",
		"invalid YAML stays": "web: [\n",
	} {
		t.Run(name, func(t *testing.T) {
			home := writeConfig(t, initial)
			if err := Set(home, "web.backend", "tavily"); err == nil {
				t.Errorf("Set succeeded on %q:\n%s", initial, readConfig(t, home))
			}
			if got := readConfig(t, home); got != initial {
				t.Errorf("file changed: %q", got)
			}
		})
	}
}

func TestSetAtomicWrite(t *testing.T) {
	home := filepath.Join(t.TempDir(), "gh")
	for i, kv := range [][2]string{{"web.backend", "exa"}, {"web.cache_ttl_minutes", "30"}, {"browser.headed", "true"}} {
		if err := Set(home, kv[0], kv[1]); err != nil {
			t.Fatalf("Set %d: %v", i, err)
		}
	}
	ents, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.Name() != filepath.Base(lockPath(home)) { // the persistent Set lock
			names = append(names, e.Name())
		}
	}
	if len(names) != 1 || names[0] != FileName {
		t.Errorf("home holds %v, want only %s and the lock (no temp files)", names, FileName)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(Path(home))
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("config.yaml mode %o, want 600", fi.Mode().Perm())
		}
		di, _ := os.Stat(home)
		if di.Mode().Perm() != 0o700 {
			t.Errorf("home mode %o, want 700", di.Mode().Perm())
		}
	}
}

func TestSetThroughSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "gatehouse.yaml")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("web:\n  backend: exa\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, Path(home)); err != nil {
		t.Fatal(err)
	}
	if err := Set(home, "web.backend", "tavily"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(Path(home)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink replaced by a file")
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "backend: tavily") {
		t.Errorf("target not updated: %s", b)
	}
}

func TestSyntaxErrorNamesPosition(t *testing.T) {
	home := writeConfig(t, "web:\n  backend: exa\n  cache_exempt_hosts: [a.dev,\nbrowser:\n  headed: true\n")
	c, _, err := Load(home)
	if err == nil || c != nil {
		t.Fatalf("Load = %v, %v; want a syntax error", c, err)
	}
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not *SyntaxError", err)
	}
	if se.Line != 3 || se.Column == 0 {
		t.Errorf("position = %d:%d, want line 3", se.Line, se.Column)
	}
	if !strings.Contains(err.Error(), "config.yaml:3:") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error text %q lacks config.yaml:3:COL or spans lines", err)
	}
	// Get and Set report the same error and do not touch the file.
	if _, err := Get(home, "web"); !errors.As(err, &se) {
		t.Errorf("Get error = %v", err)
	}
	if err := Set(home, "web.backend", "x"); !errors.As(err, &se) {
		t.Errorf("Set error = %v", err)
	}
}

func TestSyntaxErrorDuplicateKey(t *testing.T) {
	home := writeConfig(t, "web:\n  backend: exa\n  backend: tavily\n")
	_, _, err := Load(home)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 {
		t.Fatalf("Load = %v; want a SyntaxError on line 3", err)
	}
}

func TestUnknownKeyWarns(t *testing.T) {
	home := writeConfig(t, "web:\n  backend: exa\n  bakend: tavily\nbrowzer: {}\n")
	c, w := mustLoad(t, home)
	if c.Web.Backend != "exa" {
		t.Errorf("known key not applied: %q", c.Web.Backend)
	}
	wb := findWarning(t, w, "web.bakend")
	if wb.Line != 3 || wb.Column != 3 || wb.File != Path(home) {
		t.Errorf("warning position = %s:%d:%d", wb.File, wb.Line, wb.Column)
	}
	if !strings.Contains(wb.String(), "config.yaml:3:3: web.bakend: unknown key") {
		t.Errorf("warning text = %q", wb.String())
	}
	if w := findWarning(t, w, "browzer"); w.Line != 4 || !strings.Contains(w.Message, "web, security, browser") {
		t.Errorf("top-level warning = %+v", w)
	}
}

func TestWrongTypeWarnsAndDefaults(t *testing.T) {
	home := writeConfig(t, `web:
  cache_enabled: maybe
  extract_char_limit: [1, 2]
  cache_exempt_hosts: mysite.dev
  cache_ttl_minutes: 0.5
  extract_timeout: abc
  backend: 42
  search_backend: exa
  provider_tier: {exa: cheap, PARALLEL: Free}
  direct:
    timeout: -4
security:
  allow_private_urls: "sure"
  fake_ip_ranges: "198.18.0.0/15"
  website_blocklist:
    enabled: yes
    domains: [a.example, b.example]
browser:
  inactivity_timeout: 10
  command_timeout: 1
  snapshot_threshold: 500
  dialog_timeout_s: -1
  engine: firefox
  dialog_policy: ignore
  camofox: true
`)
	c, w := mustLoad(t, home)
	byKey := map[string]Warning{}
	for _, x := range w {
		byKey[x.Key] = x
	}
	wantWarn := map[string]int{ // key → line
		"web.cache_enabled": 2, "web.extract_char_limit": 3, "web.cache_exempt_hosts": 4, "web.cache_ttl_minutes": 5,
		"web.extract_timeout": 6, "web.backend": 7, "web.provider_tier": 9, "web.direct.timeout": 11,
		"security.allow_private_urls": 13,
		"browser.inactivity_timeout":  19, "browser.command_timeout": 20, "browser.snapshot_threshold": 21,
		"browser.dialog_timeout_s": 22, "browser.engine": 23, "browser.dialog_policy": 24, "browser.camofox": 25,
	}
	for k, line := range wantWarn {
		x, ok := byKey[k]
		if !ok {
			t.Errorf("no warning for %s", k)
			continue
		}
		if x.Line != line {
			t.Errorf("%s warned at line %d, want %d (%s)", k, x.Line, line, x)
		}
	}
	if len(w) != len(wantWarn) {
		t.Errorf("got %d warnings, want %d: %v", len(w), len(wantWarn), w)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"cache_enabled default", c.Web.CacheEnabled, true},
		{"char limit default", c.Web.ExtractCharLimit, 15000},
		{"non-list exempt hosts ignored", c.Web.CacheExemptHosts, []string{}},
		{"ttl 0.5 → 1", c.Web.CacheTTLMinutes, 1},
		{"timeout garbage → 120", c.Web.ExtractTimeout, 120 * time.Second},
		{"backend default", c.Web.Backend, ""},
		{"other keys still apply", c.Web.SearchBackend, "exa"},
		{"tiers", c.Web.ProviderTier, map[string]string{"exa": "auto", "parallel": "free"}},
		{"direct timeout default", c.Web.Direct.Timeout, 30 * time.Second},
		{"allow_private_urls stays off", c.Security.AllowPrivateURLs, false},
		{"fake ip", c.Security.FakeIPRanges, []string{"198.18.0.0/15"}},
		{"blocklist enabled (yes)", c.Security.WebsiteBlocklist.Enabled, true},
		{"domains keep strings", c.Security.WebsiteBlocklist.Domains, []string{"a.example", "b.example"}},
		{"inactivity floor", c.Browser.InactivityTimeout, 30 * time.Second},
		{"command floor", c.Browser.CommandTimeout, 5 * time.Second},
		{"snapshot floor", c.Browser.SnapshotThreshold, 1000},
		{"dialog timeout default", c.Browser.DialogTimeout, 300 * time.Second},
		{"engine → auto", c.Browser.Engine, "auto"},
		{"dialog policy default", c.Browser.DialogPolicy, "must_respond"},
		{"camofox defaults", c.Browser.Camofox, Default().Browser.Camofox},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s: got %#v, want %#v", ck.name, ck.got, ck.want)
		}
	}
}

// The config side of the browser vectors: effective values after floors.
func TestBrowserFloorVectors(t *testing.T) {
	type row struct {
		area, key string
		count     int
		get       func(c *Config) int
		field     string
	}
	rows := []row{
		{"browser.snapshot_threshold", "browser.snapshot_threshold", 4, func(c *Config) int { return c.Browser.SnapshotThreshold }, "effective"},
		{"browser.command_timeout", "browser.command_timeout", 5, func(c *Config) int { return int(c.Browser.CommandTimeout / time.Second) }, "effective_s"},
		{"browser.inactivity_and_orphan", "browser.inactivity_timeout", 5, func(c *Config) int { return int(c.Browser.InactivityTimeout / time.Second) }, "inactivity_s"},
	}
	for _, r := range rows {
		for _, v := range vectors.Area(t, r.area, r.count) {
			var in map[string]any
			var want map[string]any
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			val := in[r.key]
			t.Run(r.area+"/"+v.Note, func(t *testing.T) {
				text := "browser:\n  " + strings.TrimPrefix(r.key, "browser.") + ": "
				if val == nil {
					text += "null\n"
				} else {
					b, _ := yaml.Marshal(val)
					text += string(b)
				}
				c, _ := mustLoad(t, writeConfig(t, text))
				if got, w := r.get(c), int(want[r.field].(float64)); got != w {
					t.Errorf("%s=%v: got %d, want %d", r.key, val, got, w)
				}
			})
		}
	}
}

func TestLegacyAllowPrivateURLs(t *testing.T) {
	tests := []struct {
		name, text string
		want       bool
	}{
		{"legacy only", "browser:\n  allow_private_urls: true\n", true},
		{"security wins when present", "security:\n  allow_private_urls: false\nbrowser:\n  allow_private_urls: true\n", false},
		{"security on", "security:\n  allow_private_urls: true\n", true},
		{"string false stays off", "security:\n  allow_private_urls: \"false\"\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, warns := mustLoad(t, writeConfig(t, tt.text))
			if c.Security.AllowPrivateURLs != tt.want {
				t.Errorf("AllowPrivateURLs = %t, want %t", c.Security.AllowPrivateURLs, tt.want)
			}
			// breaker7 D16: the legacy key opens every tool's private-address
			// gate (spec §A6.5); its warning says so and how to move it.
			var legacy []string
			for _, w := range warns {
				if w.Key == "browser.allow_private_urls" {
					legacy = append(legacy, w.String())
				}
			}
			if tt.name != "legacy only" {
				if len(legacy) != 0 {
					t.Errorf("warning for an unused legacy key: %v", legacy)
				}
				return
			}
			if len(legacy) != 1 {
				t.Fatalf("legacy key warnings = %v, want one", legacy)
			}
			for _, want := range []string{"security.allow_private_urls", "every tool", "web_extract", "not only the browser",
				"delete browser.allow_private_urls", "gatehouse config set security.allow_private_urls true"} {
				if !strings.Contains(legacy[0], want) {
					t.Errorf("legacy key warning %q does not say %q", legacy[0], want)
				}
			}
		})
	}
}

// TestAllowPrivateURLsOneKey: the key `config get` shows is the key `config
// set` takes (issue 16: `get browser` showed allow_private_urls, which set
// refused as legacy). The legacy spelling is still read from files.
func TestAllowPrivateURLsOneKey(t *testing.T) {
	home := t.TempDir()
	out, err := Get(home, "browser")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "allow_private_urls") {
		t.Errorf("get browser shows allow_private_urls, which set refuses:\n%s", out)
	}
	if slices.Contains(Keys(), "browser.allow_private_urls") {
		t.Error("Keys lists the legacy browser.allow_private_urls")
	}
	for _, k := range Keys() {
		if err := Set(home, k, "true"); err != nil && strings.Contains(err.Error(), "legacy") {
			t.Errorf("Keys lists %s, which Set refuses as legacy: %v", k, err)
		}
	}
	for _, op := range []func() error{
		func() error { _, err := Get(home, "browser.allow_private_urls"); return err },
		func() error { return Set(home, "browser.allow_private_urls", "true") },
	} {
		if err := op(); err == nil || !strings.Contains(err.Error(), "security.allow_private_urls") {
			t.Errorf("legacy key: err = %v, want one naming security.allow_private_urls", err)
		}
	}
	if err := Set(home, "security.allow_private_urls", "true"); err != nil {
		t.Fatal(err)
	}
	if v, err := Get(home, "security.allow_private_urls"); err != nil || v != "true" {
		t.Errorf("get security.allow_private_urls = %q, %v; want true", v, err)
	}
	// A file written for the described system still loads the legacy key.
	c, _ := mustLoad(t, writeConfig(t, "browser:\n  allow_private_urls: true\n"))
	if !c.Security.AllowPrivateURLs {
		t.Error("legacy browser.allow_private_urls no longer read")
	}
}

func TestSharedFilesResolved(t *testing.T) {
	t.Setenv("HOME", "/home/tester")
	home := writeConfig(t, "security:\n  website_blocklist:\n    shared_files: [rules.txt, /etc/gh/rules.txt, ~/r.txt]\n")
	c, _ := mustLoad(t, home)
	want := []string{filepath.Join(home, "rules.txt"), "/etc/gh/rules.txt", "/home/tester/r.txt"}
	if runtime.GOOS != "windows" && !slices.Equal(c.Security.WebsiteBlocklist.SharedFiles, want) {
		t.Errorf("SharedFiles = %v, want %v", c.Security.WebsiteBlocklist.SharedFiles, want)
	}
}

func TestLoadWebExtras(t *testing.T) {
	home := writeConfig(t, `web:
  extract_timeout: 0
  extract_char_limit: "8000"
  agent_visible_paths:
    /home/me/.gatehouse: /agent/gatehouse
  cache_exempt_hosts: ["*.ngrok-free.app", "  "]
  direct: {connect_timeout: 3, timeout: 12.5, max_body_bytes: 2048, user_agent: " UA/1 "}
  xai: {model: grok-x, timeout: 10}
browser:
  cloud_provider: Browserbase
`)
	c, w := mustLoad(t, home)
	if len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
	want := Default()
	want.Web.ExtractTimeout = 0
	want.Web.ExtractCharLimit = 8000
	want.Web.AgentVisiblePaths = map[string]string{"/home/me/.gatehouse": "/agent/gatehouse"}
	want.Web.CacheExemptHosts = []string{"*.ngrok-free.app"}
	want.Web.Direct = Direct{ConnectTimeout: 3 * time.Second, Timeout: 12500 * time.Millisecond, MaxBodyBytes: 2048, UserAgent: "UA/1"}
	want.Web.XAI.Model, want.Web.XAI.Timeout = "grok-x", 10*time.Second
	want.Browser.CloudProvider, want.Browser.CloudProviderSet = "browserbase", true
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load =\n%+v\nwant\n%+v", c, want)
	}
	if got, _ := Get(home, "web.direct.timeout"); got != "12.5" {
		t.Errorf("Get(web.direct.timeout) = %q, want 12.5", got)
	}
}

func TestLoadYAMLFeatures(t *testing.T) {
	home := writeConfig(t, `defaults: &d
  backend: exa
  cache_ttl_minutes: 30
web:
  <<: *d
  cache_ttl_minutes: 40
  extract_char_limit: !!str 9000
---
web:
  backend: ignored
`)
	c, w := mustLoad(t, home)
	if c.Web.Backend != "exa" || c.Web.CacheTTLMinutes != 40 || c.Web.ExtractCharLimit != 9000 {
		t.Errorf("Load = %+v", c.Web)
	}
	findWarning(t, w, "defaults")
	var sawDoc bool
	for _, x := range w {
		sawDoc = sawDoc || strings.Contains(x.Message, "first YAML document")
	}
	if !sawDoc {
		t.Errorf("no warning about the second document: %v", w)
	}
}

func TestLoadRefusesHugeFile(t *testing.T) {
	home := writeConfig(t, "# "+strings.Repeat("x", maxFileBytes)+"\n")
	if _, _, err := Load(home); err == nil {
		t.Error("Load accepted a file over the size cap")
	}
}

func TestHome(t *testing.T) {
	t.Setenv(EnvHome, "  /srv/gh  ")
	if h, err := Home(); err != nil || h != filepath.Clean("/srv/gh") {
		t.Errorf("Home() = %q, %v", h, err)
	}
	t.Setenv("HOME", "/home/tester")
	t.Setenv(EnvHome, "~/gh")
	if h, err := Home(); err != nil || h != "/home/tester/gh" {
		t.Errorf("Home() with ~ = %q, %v", h, err)
	}
	t.Setenv(EnvHome, "")
	if h, err := Home(); err != nil || h != "/home/tester/.gatehouse" {
		t.Errorf("Home() default = %q, %v", h, err)
	}
	if got := Path("/x"); got != filepath.Join("/x", "config.yaml") {
		t.Errorf("Path = %q", got)
	}
}

func TestKeys(t *testing.T) {
	ks := Keys()
	for _, k := range []string{"web.backend", "web.direct.max_body_bytes", "security.website_blocklist.shared_files", "browser.camofox.loopback_host_alias", "browser.cloud_provider"} {
		if !slices.Contains(ks, k) {
			t.Errorf("Keys() lacks %s", k)
		}
	}
}

// Alias and merge-key bombs load in bounded time: the node budget stops the
// expansion, the rest of the file still applies, and Set refuses to edit.
func TestAliasBombsBounded(t *testing.T) {
	merge := "a0: &a0 {x: 1}\n"
	list := "b0: &b0 [x]\n"
	for i := 1; i < 40; i++ {
		merge += fmt.Sprintf("a%d: &a%d\n  <<: [*a%d, *a%d]\n", i, i, i-1, i-1)
		list += fmt.Sprintf("b%d: &b%d [*b%d, *b%d]\n", i, i, i-1, i-1)
	}
	for name, text := range map[string]string{
		"merge keys": merge + "web:\n  backend: exa\n  <<: [*a39, *a39]\n",
		"lists":      list + "web:\n  backend: exa\n  cache_exempt_hosts: *b39\n",
	} {
		t.Run(name, func(t *testing.T) {
			home := writeConfig(t, text)
			start := time.Now()
			c, w := mustLoad(t, home)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Load took %v", d)
			}
			if c.Web.Backend != "exa" {
				t.Errorf("backend = %q", c.Web.Backend)
			}
			if len(w) > 100 {
				t.Errorf("%d warnings", len(w))
			}
			if err := Set(home, "web.cache_ttl_minutes", "33"); err == nil {
				t.Error("Set edited an alias bomb")
			}
		})
	}
}

// A timeout without a cap (set as -1, 0 or "none") reads back as "none":
// it showed as 0, which reads as a zero-second cap and is not what was set.
func TestExtractTimeoutNoCapShown(t *testing.T) {
	for _, v := range []string{"-1", "0", "none", "None"} {
		home := writeConfig(t, "web:\n  extract_timeout: 30\n")
		if err := Set(home, "web.extract_timeout", v); err != nil {
			t.Fatalf("Set %s: %v", v, err)
		}
		if got, err := Get(home, "web.extract_timeout"); err != nil || got != "none" {
			t.Errorf("after set %s: Get = %q, %v; want none", v, got, err)
		}
	}
	home := writeConfig(t, "web:\n  extract_timeout: 2.5\n")
	if got, _ := Get(home, "web.extract_timeout"); got != "2.5" {
		t.Errorf("Get = %q, want 2.5", got)
	}
}
