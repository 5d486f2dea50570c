package backend_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// TestAttachedTabDownloads: a tab attached to (AttachTab: a spare session
// a browser node made, or a handle session another replica opened) gets
// its downloads in its own BrowserContext, into the attaching side's
// DownloadDir, as a tab it created would.
func TestAttachedTabDownloads(t *testing.T) {
	l := browser(t)
	g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: t.Name(), Guard: g, AllowPrivateFromPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	made, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	bctx, target := made.BrowserContextID(), made.TargetID()
	made.Close() // detaches
	dir := t.TempDir()
	tab, err := l.AttachTab(ctx, target, bctx, backend.TabOptions{DownloadDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Dispose()
	// A data: URL download: no network, only the context's download
	// behaviour decides.
	if _, err := tab.EvalPage(ctx, `(() => { const a = document.createElement("a"); a.href = "data:text/plain,hello"; a.download = "x.txt"; document.body.appendChild(a); a.click(); return 1 })()`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ds := tab.DownloadsSince(0); len(ds) == 1 && ds[0].State == "completed" {
			if b, err := os.ReadFile(ds[0].Path); err != nil || string(b) != "hello" {
				t.Fatalf("download at %q: %q, %v", ds[0].Path, b, err)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no completed download in the attached tab: %+v", tab.DownloadsSince(0))
}
