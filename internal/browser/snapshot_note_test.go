package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// A truncated snapshot's note names the stored file by its agent-visible
// path (web.agent_visible_paths) by default, and by its store name when the
// caller cannot see this disk (WithStoreNames, set for MCP), never by a
// host path then; web_read reads it by either (hostile review D10).
func TestSnapshotNoteNamesAgentPathOrStoreName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "web")
	m := &Manager{cfg: config.Default(), store: truncate.Store{Dir: dir, PathMap: map[string]string{dir: "/sandbox/web"}}}
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "- Line %d of a long page\n", i)
	}
	text := b.String()

	out, truncated, stored := m.render(context.Background(), text)
	if !truncated || !strings.HasPrefix(stored, "/sandbox/web/browser-snapshot-") || !strings.Contains(out, `web_read path="`+stored+`" offset=`) {
		t.Fatalf("default note names %q:\n%s", stored, out[len(out)-200:])
	}
	out, truncated, stored = m.render(WithStoreNames(context.Background()), text)
	if !truncated || strings.Contains(stored, "/") || !truncate.IsStoreName(stored) || !strings.Contains(out, `web_read path="`+stored+`" offset=`) {
		t.Fatalf("MCP note names %q:\n%s", stored, out[len(out)-200:])
	}
	if strings.Contains(out, dir) || strings.Contains(out, os.TempDir()) {
		t.Fatalf("MCP note shows a host path:\n%s", out[len(out)-200:])
	}
	r, err := m.store.Read(stored, 2, 1)
	if err != nil || r.Content != "- Line 1 of a long page\n" && r.Content != "- Line 1 of a long page" {
		t.Fatalf("web_read %s: %+v %v", stored, r, err)
	}
}
