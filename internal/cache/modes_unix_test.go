//go:build unix

package cache_test

import (
	"os"
	"path/filepath"
	"strings"
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

// TestSymlinkedCacheDirRefused: a symlink at the cache directory (planted,
// or left by hand) is never followed: Put fails without writing into or
// chmod-ing the link's target, and Get misses even when the target holds a
// valid-looking cache (index and entry).
func TestSymlinkedCacheDirRefused(t *testing.T) {
	const u = "https://example.com/a"
	home := t.TempDir()
	real := filepath.Join(home, "real")
	c0 := cache.New(cache.Options{Dir: real, Enabled: true, TTL: time.Hour})
	if err := c0.Put(u, cache.Entry{URL: u, Content: "page held elsewhere"}, "markdown", "direct"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(real, 0o755); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(real)
	link := filepath.Join(home, "web")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	c := cache.New(cache.Options{Dir: link, Enabled: true, TTL: time.Hour})
	if _, ok := c.Get(u, "markdown", "direct"); ok {
		t.Fatal("Get read through a symlinked cache directory")
	}
	err := c.Put("https://example.com/b", cache.Entry{URL: "https://example.com/b", Content: "private"}, "markdown", "direct")
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("Put through a symlinked directory: err = %v, want a symlink refusal", err)
	}
	after, _ := os.ReadDir(real)
	if len(after) != len(before) {
		t.Fatalf("Put wrote into the link's target: %d → %d entries", len(before), len(after))
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o755 {
		t.Fatalf("Put chmod-ed the link's target to %o", fi.Mode().Perm())
	}
}

// TestSymlinkedEntryRefused: an entry file (or a directory on its way) that
// is a symlink is a miss, even when it points at a file inside the cache.
func TestSymlinkedEntryRefused(t *testing.T) {
	const u = "https://example.com/a"
	dir := filepath.Join(t.TempDir(), "web")
	c := cache.New(cache.Options{Dir: dir, Enabled: true, TTL: time.Hour})
	if err := c.Put(u, cache.Entry{URL: u, Content: "the page"}, "markdown", "direct"); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(dir, cache.FileName(u, "markdown", "direct"))
	if _, ok := c.Get(u, "markdown", "direct"); !ok {
		t.Fatal("no hit before the swap")
	}
	moved := filepath.Join(dir, "moved.cache.md")
	if err := os.Rename(entry, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, entry); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(u, "markdown", "direct"); ok {
		t.Fatal("Get followed a symlinked entry file")
	}
}

// TestForeignCacheDirRefused: a cache directory owned by another user is
// neither read nor written (needs root to hand the directory away).
func TestForeignCacheDirRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	const u = "https://example.com/a"
	dir := filepath.Join(t.TempDir(), "web")
	c := cache.New(cache.Options{Dir: dir, Enabled: true, TTL: time.Hour})
	if err := c.Put(u, cache.Entry{URL: u, Content: "the page"}, "markdown", "direct"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(u, "markdown", "direct"); ok {
		t.Fatal("Get read a foreign cache directory")
	}
	if err := c.Put(u, cache.Entry{URL: u, Content: "x"}, "markdown", "direct"); err == nil || !strings.Contains(err.Error(), "another user") {
		t.Fatalf("Put into a foreign directory: err = %v", err)
	}
}
