package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
)

func popupPages(t *testing.T) func(path string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/opener":
			html(w, "Opener", `<a href="/child" target="_blank">Open child</a>
<button onclick="window.open('/child?via=js')">Pop up</button>
<a href="/file.bin">Get file</a> <a href="/big.bin">Get big</a>
<button onclick="alert('nobody answers')">Alert</button>`)
		case "/onload": // opens a tab while it loads, with no click
			html(w, "Onload", `<p>onload opener</p><script>window.open('/child?via=onload')</script>`)
		case "/plain":
			html(w, "Plain", `<p>plain page `+r.URL.Query().Get("n")+`</p>`)
		case "/child":
			html(w, "Child", `<p>child page `+r.URL.Query().Get("via")+`</p>`)
		case "/file.bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="../report.csv"`)
			w.Write([]byte("a,b\n1,2\n"))
		case "/big.bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="big.bin"`)
			chunk := make([]byte, 64<<10)
			for i := 0; i < 64; i++ { // 4 MiB, slowly enough to see progress
				if _, err := w.Write(chunk); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(5 * time.Millisecond)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return func(path string) string { return "http://popup.test:" + u.Port() + path }
}

func TestPopupIsFollowedAndBackReturnsToTheOpener(t *testing.T) {
	m, _ := manager(t)
	at := popupPages(t)
	task := "popup-task"
	defer m.CloseTask(task)
	for _, link := range []struct{ role, name, via string }{{"link", "Open child", ""}, {"button", "Pop up", "js"}} {
		nav := mustNav(t, m, task, at("/opener"))
		cl := m.Click(context.Background(), task, RefInput{Ref: refOf(t, nav.Snapshot, link.role, link.name)})
		if !cl.Success || cl.Popup == nil || !cl.Popup.Followed || !strings.Contains(cl.URL, "/child") || !cl.Navigated {
			t.Fatalf("%s: %+v", link.name, cl)
		}
		if !strings.Contains(cl.Snapshot, strings.TrimSpace("child page "+link.via)) {
			t.Fatalf("%s: snapshot of the new tab:\n%s", link.name, cl.Snapshot)
		}
		sn := m.Snapshot(context.Background(), task, SnapshotInput{})
		if !sn.Success || !strings.Contains(sn.Snapshot, "child page") {
			t.Fatalf("%s: later calls act on the new tab: %+v", link.name, sn)
		}
		b := m.Back(context.Background(), task)
		if !b.Success || !strings.HasSuffix(b.URL, "/opener") || !strings.Contains(b.Snapshot, "Open child") {
			t.Fatalf("%s: back to the opener: %+v", link.name, b)
		}
	}
}

// A tab a page opens while browser_navigate (or browser_back) loads it is
// reported, not followed, and a later, unrelated call never reports or
// follows it. Before, browser_back two navigations later switched to such a
// tab ("popup": {"followed": true, "opened": 2}: the stale one and the one
// the page opened again when back loaded it) instead of going back
// (breaker7 D7).
func TestPopupOfAnEarlierNavigationIsNotFollowedByBack(t *testing.T) {
	m, _ := manager(t)
	at := popupPages(t)
	task := "popup-stale-task"
	defer m.CloseTask(task)
	mustNav(t, m, task, at("/plain?n=1"))
	nav := mustNav(t, m, task, at("/onload"))
	if !strings.HasSuffix(nav.URL, "/onload") || (nav.Popup != nil && nav.Popup.Followed) {
		t.Fatalf("navigate to a page that opens a tab: the session must stay on it: url=%s popup=%+v", nav.URL, nav.Popup)
	}
	t.Logf("navigate's popup field: %+v", nav.Popup)
	mustNav(t, m, task, at("/plain?n=2"))
	b := m.Back(context.Background(), task)
	if !b.Success || (b.Popup != nil && (b.Popup.Followed || b.Popup.Opened > 1)) || !strings.HasSuffix(b.URL, "/onload") || strings.Contains(b.Snapshot, "child page") {
		t.Fatalf("back after an unrelated navigation: want /onload, no popup followed; got url=%s popup=%+v snapshot=%q (%s %s)", b.URL, b.Popup, b.Snapshot, b.Reason, b.Error)
	}
	cl := m.Snapshot(context.Background(), task, SnapshotInput{})
	if !cl.Success || !strings.Contains(cl.Snapshot, "onload opener") {
		t.Fatalf("the session left the page back went to: %+v", cl)
	}
}

func TestDownloadIsSavedAndTheSessionKeepsWorking(t *testing.T) {
	m, _ := manager(t)
	at := popupPages(t)
	task := "download-task"
	defer m.CloseTask(task)
	nav := mustNav(t, m, task, at("/opener"))
	cl := m.Click(context.Background(), task, RefInput{Ref: refOf(t, nav.Snapshot, "link", "Get file")})
	if !cl.Success || len(cl.Downloads) != 1 {
		t.Fatalf("click: %+v", cl)
	}
	d := cl.Downloads[0]
	// The server suggested "../report.csv": saved under one path element.
	if !strings.HasSuffix(d.Name, "report.csv") || strings.ContainsAny(d.Name, `/\`) || d.State != "completed" || d.Size != 8 || filepath.Base(d.Path) != d.Name {
		t.Fatalf("download: %+v", d)
	}
	if b, err := os.ReadFile(d.Path); err != nil || string(b) != "a,b\n1,2\n" {
		t.Fatalf("saved file: %q %v", b, err)
	}
	if !strings.HasPrefix(d.Path, filepath.Join(itHome, "downloads")+string(filepath.Separator)) {
		t.Fatalf("saved outside the session's download dir: %s", d.Path)
	}
	// Private modes, like every other file Gatehouse keeps.
	for p, want := range map[string]os.FileMode{d.Path: 0o600, filepath.Dir(d.Path): 0o700, filepath.Join(itHome, "downloads"): 0o700} {
		if st, err := os.Stat(p); err != nil {
			t.Error(err)
		} else if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), want)
		}
	}
	// The session still works: snapshot, and a popup from the same page.
	sn := m.Snapshot(context.Background(), task, SnapshotInput{})
	if !sn.Success || !strings.Contains(sn.Snapshot, "Open child") {
		t.Fatalf("after the download: %+v", sn)
	}
	cl = m.Click(context.Background(), task, RefInput{Ref: refOf(t, sn.Snapshot, "link", "Open child")})
	if !cl.Success || cl.Popup == nil {
		t.Fatalf("click after the download: %+v", cl)
	}
}

// On a Manager of its own (its own Chromium): a 1 MiB download cap and a 1 s
// dialog timeout.
func TestDownloadCapAndDialogTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own Chromium")
	}
	manager(t) // skips without Chromium
	at := popupPages(t)
	home := t.TempDir()
	cfg := config.Default()
	cfg.Browser.DialogTimeout = time.Second
	m, _ := New(Options{Config: cfg, Home: home, Resolver: hostResolver{}, DownloadCap: 1 << 20})
	defer m.Close()
	task := "big-download"
	nav := mustNav(t, m, task, at("/opener"))
	cl := m.Click(context.Background(), task, RefInput{Ref: refOf(t, nav.Snapshot, "link", "Get big")})
	if !cl.Success || len(cl.Downloads) != 1 || cl.Downloads[0].State != "too_large" || cl.Downloads[0].Path != "" {
		t.Fatalf("click: %+v", cl)
	}
	time.Sleep(500 * time.Millisecond)
	var left []string
	filepath.Walk(filepath.Join(home, "downloads"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Fatalf("partial files left: %v", left)
	}
	sn := m.Snapshot(context.Background(), task, SnapshotInput{})
	if !sn.Success {
		t.Fatalf("after the cancelled download: %+v", sn)
	}
	// must_respond with nobody answering: dismissed after dialog_timeout_s.
	cl = m.Click(context.Background(), task, RefInput{Ref: refOf(t, sn.Snapshot, "button", "Alert")})
	if len(cl.PendingDialogs) != 1 {
		t.Fatalf("alert click: %+v", cl)
	}
	time.Sleep(1500 * time.Millisecond)
	sn = m.Snapshot(context.Background(), task, SnapshotInput{})
	if !sn.Success || len(sn.PendingDialogs) != 0 || len(sn.RecentDialogs) != 1 || sn.RecentDialogs[0].By != "timeout" || sn.RecentDialogs[0].Action != "dismissed" {
		t.Fatalf("after the dialog timeout: %+v", sn)
	}
}
