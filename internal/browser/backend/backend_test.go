package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

var (
	once    sync.Once
	shared  *backend.Local
	sharedP *egress.ProxySession
	initErr error
)

// browser returns the one Chromium of this test binary, or skips when Chromium
// is absent and CI is unset.
func browser(t *testing.T) *backend.Local {
	t.Helper()
	once.Do(func() {
		path, err := backend.FindChromium("")
		if err != nil {
			initErr = err
			return
		}
		g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
		sharedP, err = egress.NewProxySession(egress.ProxyOptions{Name: "default", Guard: g})
		if err != nil {
			initErr = err
			return
		}
		shared, initErr = backend.Launch(context.Background(), backend.Options{ExecPath: path, DefaultProxy: sharedP.URL()})
	})
	if initErr != nil {
		if os.Getenv("CI") == "" && strings.Contains(initErr.Error(), "not found") {
			t.Skipf("Chromium missing: %v", initErr)
		}
		t.Fatal(initErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
		}
		sharedP.Close()
		if left := backend.MarkedProcesses(os.Getpid()); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "leaked Chromium processes: %v\n", left)
			code = 1
		}
		if _, err := os.Stat(shared.UserDataDir()); err == nil {
			fmt.Fprintln(os.Stderr, "user-data-dir left behind:", shared.UserDataDir())
			code = 1
		}
	}
	// Exited Chromium children are reaped (the process is their subreaper).
	deadline := time.Now().Add(3 * time.Second)
	for len(backend.Zombies()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if z := backend.Zombies(); len(z) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: unreaped Chromium zombies: %v\n", z)
		code = 1
	}
	os.Exit(code)
}

func newTab(t *testing.T, l *backend.Local) *backend.Tab {
	t.Helper()
	g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: t.Name(), Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tab, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	return tab
}

func TestIsolatedWorldPersistsPerDocument(t *testing.T) {
	l := browser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<html><head><title>T</title></head><body><button id=b onclick="document.title='clicked'">Go</button><script>window.pageVar=1</script></body></html>`)
	}))
	defer srv.Close()
	tab := newTab(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := tab.Navigate(ctx, srv.URL)
	if err != nil || res.ErrorText != "" {
		t.Fatalf("navigate: %v %q", err, res.ErrorText)
	}
	if res.Title != "T" {
		t.Fatalf("title %q", res.Title)
	}
	if _, err := tab.CallIsolated(ctx, `function(){ globalThis.__x = 42; return typeof window.pageVar }`); err != nil {
		t.Fatal(err)
	}
	raw, err := tab.CallIsolated(ctx, `function(){ return [globalThis.__x, typeof window.pageVar] }`)
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	json.Unmarshal(raw, &got)
	if len(got) != 2 || got[0] != float64(42) || got[1] != "undefined" {
		t.Fatalf("isolated world state %s: want [42,\"undefined\"] (same world reused, page globals hidden)", raw)
	}
	pv, err := tab.EvalPage(ctx, "window.pageVar + 1")
	if err != nil || string(pv.Value) != "2" {
		t.Fatalf("page world eval %s %v", pv.Value, err)
	}
	raw, err = tab.CallIsolated(ctx, `function(){ const r = document.getElementById('b').getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2] }`)
	if err != nil {
		t.Fatal(err)
	}
	var xy []float64
	json.Unmarshal(raw, &xy)
	if err := tab.Click(ctx, xy[0], xy[1]); err != nil {
		t.Fatal(err)
	}
	cur, _ := tab.Current(ctx)
	if cur.Title != "clicked" {
		t.Fatalf("title after click %q", cur.Title)
	}
}
