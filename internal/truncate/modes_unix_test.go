//go:build unix

package truncate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStoreModesPrivate: the full-text store directory is 0700 (narrowed when
// it existed with wider bits, as older versions created it) and stored files
// are 0600, also when an identical copy from an older version is refreshed.
func TestStoreModesPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := Store{Dir: dir}
	p, err := s.Save("https://example.com/a", "full text")
	if err != nil {
		t.Fatal(err)
	}
	check := func(path string, want os.FileMode) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode %o, want %o", path, got, want)
		}
	}
	check(dir, 0o700)
	check(p, 0o600)
	// An identical copy left 0644 by an older version is narrowed on refresh.
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save("https://example.com/a", "full text"); err != nil {
		t.Fatal(err)
	}
	check(p, 0o600)
}
