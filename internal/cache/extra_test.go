package cache

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestExtraSidecarAndNoStaleOverFresh(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	c := New(Options{Dir: dir, Enabled: true, Now: func() time.Time { return now }})
	u := "https://example.com/a"
	fresh := Entry{Content: "fresh page", FinalURL: u, FetchedAt: now.Add(-10 * time.Second), Extra: []byte(`{"meta":{"author":"A"}}`)}
	if err := c.Put(u, fresh, "", "direct"); err != nil {
		t.Fatal(err)
	}
	e, ok := c.Get(u, "", "direct")
	if !ok || e.Content != "fresh page" || string(e.Extra) != `{"meta":{"author":"A"}}` {
		t.Fatalf("get %+v %v", e, ok)
	}
	// A page whose fetch began earlier never replaces it (content or sidecar).
	stale := Entry{Content: "stale page", FinalURL: u, FetchedAt: now.Add(-20 * time.Second)}
	if err := c.Put(u, stale, "", "direct"); err != nil {
		t.Fatal(err)
	}
	if e, _ := c.Get(u, "", "direct"); e.Content != "fresh page" || e.Extra == nil {
		t.Fatalf("stale write won: %+v", e)
	}
	// A later one does, and without Extra its sidecar goes.
	later := Entry{Content: "later page", FinalURL: u, FetchedAt: now}
	if err := c.Put(u, later, "", "direct"); err != nil {
		t.Fatal(err)
	}
	if e, _ := c.Get(u, "", "direct"); e.Content != "later page" || e.Extra != nil {
		t.Fatalf("later write: %+v", e)
	}
	if _, err := os.Stat(extraFile(filepath.Join(c.dir, FileName(u, "", "direct")))); !os.IsNotExist(err) {
		t.Fatalf("sidecar left behind: %v", err)
	}
}
