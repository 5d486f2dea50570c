package config

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentSetsAllPersist (issue 6 item 6): ten parallel Sets of
// distinct keys on one home all persist (the read-modify-write is locked).
func TestConcurrentSetsAllPersist(t *testing.T) {
	home := t.TempDir()
	sets := [][2]string{
		{"web.backend", "exa"}, {"web.search_backend", "tavily"}, {"web.extract_backend", "direct"},
		{"web.extract_char_limit", "20000"}, {"web.cache_ttl_minutes", "30"}, {"security.allow_private_urls", "true"},
		{"security.redact_secrets", "false"}, {"browser.headed", "true"}, {"browser.record_sessions", "true"},
		{"web.keyless_rescue", "false"},
	}
	for round := 0; round < 3; round++ {
		os.Remove(Path(home))
		var wg sync.WaitGroup
		errs := make([]error, len(sets))
		for i, kv := range sets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = Set(home, kv[0], kv[1])
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Set %s: %v", sets[i][0], err)
			}
		}
		for _, kv := range sets {
			got, err := Get(home, kv[0])
			if err != nil || got != kv[1] {
				t.Fatalf("round %d: %s = %q (%v), want %q", round, kv[0], got, err, kv[1])
			}
		}
	}
}

// TestSetBoolWritesBoolean: a YAML-ish bool word is accepted for a boolean
// key and written as the boolean, never as the word; a non-boolean word is
// refused with the expected type.
func TestSetBoolWritesBoolean(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct{ in, want string }{{"yes", "true"}, {"off", "false"}, {"ON", "true"}, {"0", "false"}, {"true", "true"}} {
		if err := Set(home, "security.allow_private_urls", c.in); err != nil {
			t.Fatalf("Set %q: %v", c.in, err)
		}
		b, _ := os.ReadFile(Path(home))
		if !strings.Contains(string(b), "allow_private_urls: "+c.want+"\n") {
			t.Fatalf("Set %q wrote:\n%s", c.in, b)
		}
		cfg, _, err := Load(home)
		if err != nil || cfg.Security.AllowPrivateURLs != (c.want == "true") {
			t.Fatalf("reload after %q: %v %v", c.in, cfg.Security.AllowPrivateURLs, err)
		}
	}
	err := Set(home, "security.allow_private_urls", "sure")
	if err == nil || !strings.Contains(err.Error(), "boolean") {
		t.Fatalf("Set sure = %v, want a boolean type error", err)
	}
}

// TestConcurrentSetProcesses runs the same race across processes, as ten
// parallel `gatehouse config set` calls do.
func TestConcurrentSetProcesses(t *testing.T) {
	if os.Getenv("GATEHOUSE_SET_CHILD") != "" {
		kv := strings.SplitN(os.Getenv("GATEHOUSE_SET_CHILD"), "=", 2)
		if err := Set(os.Getenv("GATEHOUSE_SET_HOME"), kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	home := t.TempDir()
	keys := []string{"web.backend=exa", "web.search_backend=tavily", "web.cache_ttl_minutes=30", "browser.headed=true",
		"browser.record_sessions=true", "security.redact_secrets=false", "web.keyless_rescue=false", "web.keyless_fallback=false",
		"web.extract_char_limit=20000", "browser.engine=chrome"}
	var wg sync.WaitGroup
	for _, kv := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentSetProcesses$")
			cmd.Env = append(os.Environ(), "GATEHOUSE_SET_CHILD="+kv, "GATEHOUSE_SET_HOME="+home)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("child %s: %v %s", kv, err, out)
			}
		}()
	}
	wg.Wait()
	for _, kv := range keys {
		k, v, _ := strings.Cut(kv, "=")
		if got, err := Get(home, k); err != nil || got != v {
			t.Errorf("%s = %q (%v), want %q", k, got, err, v)
		}
	}
}
