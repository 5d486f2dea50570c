//go:build unix

package cache_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
)

// TestFileModesPrivate: cached pages can hold private content, so the cache
// directory is 0700 (also when it existed with wider bits) and every file in
// it (entries, index, lock) is 0600, whatever the umask allows.
func TestFileModesPrivate(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "cache", "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := cache.New(cache.Options{Dir: dir, Enabled: true, TTL: time.Hour})
	if err := c.Put("https://example.com/a", cache.Entry{URL: "https://example.com/a", Content: "private page"}, "markdown", "direct"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("cache dir mode %o, want 700", got)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) < 2 {
		t.Fatalf("expected entry and index files, got %v", ents)
	}
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode %o, want 600", e.Name(), got)
		}
	}
}
