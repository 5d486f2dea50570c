package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestRedisURLPasswordNeverInConfig (issue 18, breaker8 #4): config set
// refuses a state.redis_url carrying a password and writes nothing, and
// config get never prints one that a hand-edited config.yaml holds.
func TestRedisURLPasswordNeverInConfig(t *testing.T) {
	home := t.TempDir()
	err := Set(home, "state.redis_url", "redis://:Pw-Zq9x@127.0.0.1:6379/0")
	if reason.Of(err) != reason.ConfigBadValue || strings.Contains(err.Error(), "Pw-Zq9x") {
		t.Fatalf("set with a password: %v, want config_bad_value without the password", err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.yaml")); strings.Contains(string(b), "Pw-Zq9x") {
		t.Fatalf("config.yaml holds the password:\n%s", b)
	}
	if err := Set(home, "state.redis_url", "redis://127.0.0.1:6379/0"); err != nil {
		t.Fatalf("set without a password: %v", err)
	}
	// A hand-edited file: get shows the URL, never the password.
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("state:\n  redis_url: redis://u:Pw-Zq9x@127.0.0.1:6379/0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"state.redis_url", "state"} {
		out, err := Get(home, key)
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		if strings.Contains(out, "Pw-Zq9x") || !strings.Contains(out, "127.0.0.1:6379") {
			t.Fatalf("get %s = %q: want the URL with the password hidden", key, out)
		}
	}
}
