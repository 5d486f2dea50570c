//go:build unix

package truncate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
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

// TestSymlinkedStoreDirRefused: a symlink at the store directory is never
// followed: Save fails without writing into or chmod-ing its target, and
// Load (web_read) refuses to read through it with read_symlink.
func TestSymlinkedStoreDirRefused(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, "real")
	if _, err := (Store{Dir: real}).Save("https://example.com/a", "stored elsewhere"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "web")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := Store{Dir: link}
	if _, err := s.Save("https://example.com/b", "private"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("Save through a symlinked directory: err = %v", err)
	}
	if ents, _ := os.ReadDir(real); len(ents) != 1 {
		t.Fatalf("Save wrote into the link's target: %v", ents)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o755 {
		t.Fatalf("Save chmod-ed the link's target to %o", fi.Mode().Perm())
	}
	if _, _, err := s.Load(FileName("https://example.com/a")); reason.Of(err) != reason.ReadSymlink {
		t.Fatalf("Load through a symlinked store directory: %v, want read_symlink", err)
	}
	// A regular file where the directory should be is refused too.
	file := filepath.Join(home, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := (Store{Dir: file}).Save("https://example.com/c", "text"); err == nil {
		t.Fatal("Save into a regular file's path succeeded")
	}
}
