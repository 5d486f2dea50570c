package config

import (
	"os"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load as config.yaml: it must never panic,
// and must return either a complete Config or an error, never both or
// neither. When it loads, Set's edit of a known key must not panic either.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"", "web:\n  backend: exa\n", commented, "web: [\n", "a: &a [*a]\n", "<<: *x\n",
		"web: {extract_char_limit: !!str 9000, cache_ttl_minutes: .nan}\n",
		"web:\n  <<: [*a, *b]\n", "---\n...\n---\nweb: 1\n", "? [a]\n: b\n", "web: !!binary aGVsbG8=\n",
		"browser:\n  camofox: {user_id: |\n    multi\n    line\n  }\n",
		"security:\n  fake_ip_ranges: \"198.18.0.0/15 ::/0 x\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		home := t.TempDir()
		if err := os.WriteFile(Path(home), data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, _, err := Load(home)
		if (c == nil) == (err == nil) {
			t.Fatalf("Load = %v, %v", c, err)
		}
		if err != nil {
			return
		}
		if c.Web.ExtractCharLimit < MinExtractCharLimit || c.Web.ExtractCharLimit > MaxExtractCharLimit ||
			c.Web.CacheTTLMinutes < MinCacheTTLMinutes || c.Web.CacheTTLMinutes > MaxCacheTTLMinutes ||
			c.Browser.InactivityTimeout < MinInactivityTimeout || c.Browser.CommandTimeout < MinCommandTimeout ||
			c.Browser.SnapshotThreshold < MinSnapshotThreshold || c.Browser.DialogTimeout <= 0 || c.Web.ExtractTimeout < 0 {
			t.Fatalf("clamp violated: %+v", c)
		}
		// The Set edit (in memory, to keep the fuzzer off the disk) must
		// either fail or give a file that loads with the new value.
		out, err := editYAML(Path(home), data, []string{"web", "cache_ttl_minutes"}, uint64(33))
		if err != nil {
			return
		}
		c2, _, err := parseConfig(Path(home), home, out)
		if err != nil || c2.Web.CacheTTLMinutes != 33 {
			t.Fatalf("after edit: %v, %v\n%s", c2, err, out)
		}
	})
}
