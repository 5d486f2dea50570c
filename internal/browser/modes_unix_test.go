//go:build unix

package browser

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
)

// TestSnapshotAndScreenshotModesPrivate (issue 6 item 5, found again in the
// session 5 review): stored snapshots and screenshots can show private page
// content, so they are 0600 in a 0700 directory, also when the directory
// existed with wider bits.
func TestSnapshotAndScreenshotModesPrivate(t *testing.T) {
	home := t.TempDir()
	web := filepath.Join(home, "cache", "web")
	if err := os.MkdirAll(web, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(web, 0o755); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Save(web, "- heading \"Private\" [ref=e1]")
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{home: home}
	shot := m.saveScreenshot([]byte("\x89PNG\r\n\x1a\n"))
	if shot == "" {
		t.Fatal("screenshot not saved")
	}
	for path, want := range map[string]os.FileMode{
		web: 0o700, snap: 0o600,
		filepath.Join(home, "cache", "screenshots"): 0o700, shot: 0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", path, got, want)
		}
	}
}
