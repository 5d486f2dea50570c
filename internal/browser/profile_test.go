package browser

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/realprofile"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

func defaultIs(id string) func() (string, error) { return func() (string, error) { return id, nil } }

func TestRealProfileSourceFailsClosed(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "google-chrome", "Profile 1"), 0o700); err != nil {
		t.Fatal(err)
	}
	ok := realprofile.Options{DefaultBrowser: defaultIs("google-chrome.desktop"), ConfigHome: home}
	src, err := realprofile.Resolve("Profile 1", ok)
	if err != nil || src.Browser != "Google Chrome" || src.ProfileDir != filepath.Join(home, "google-chrome", "Profile 1") {
		t.Fatalf("pinned profile: %+v %v", src, err)
	}
	for _, c := range []struct {
		name, pin string
		o         realprofile.Options
		want      reason.Code
	}{
		{"missing pin", "Profile 9", ok, reason.RealProfileUnavailable},
		{"missing Default", "", ok, reason.RealProfileUnavailable},
		{"pin with a slash", "../x", ok, reason.RealProfileUnavailable},
		{"firefox", "Profile 1", realprofile.Options{DefaultBrowser: defaultIs("firefox.desktop"), ConfigHome: home}, reason.RealProfileUnavailable},
		{"beta channel", "Profile 1", realprofile.Options{DefaultBrowser: defaultIs("google-chrome-beta.desktop"), ConfigHome: home}, reason.RealProfileUnavailable},
		{"no default", "Profile 1", realprofile.Options{DefaultBrowser: defaultIs(""), ConfigHome: home}, reason.RealProfileUnavailable},
	} {
		if _, err := realprofile.Resolve(c.pin, c.o); reason.Of(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	// A SingletonLock naming a live process on this host: the browser runs.
	host, _ := os.Hostname()
	if err := os.Symlink(host+"-"+strconv.Itoa(os.Getpid()), filepath.Join(home, "google-chrome", "SingletonLock")); err != nil {
		t.Fatal(err)
	}
	_, err = realprofile.Resolve("Profile 1", ok)
	if reason.Of(err) != reason.RealProfileLocked || !strings.Contains(err.Error(), "quit Google Chrome") {
		t.Fatalf("live SingletonLock: %v", err)
	}
	if (&Manager{cfg: &config.Config{Browser: config.Browser{UseRealProfile: true}}}).wantRealProfile("task::local") {
		t.Error("a ::local sidecar must never get the real profile")
	}
}

// makeProfile builds a real Chromium profile in dir/Default by running
// Chromium on it (with --password-store=basic, as the copy-browser runs) and
// setting a persistent cookie for profile.test; Chromium writes its own
// Cookies database schema and v10-encrypts the value.
func makeProfile(t *testing.T, dir string) string {
	t.Helper()
	exe, err := backend.FindChromium("")
	if err != nil {
		t.Skip(err)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(exe), chromedp.UserDataDir(dir),
		chromedp.Flag("headless", "new"), chromedp.Flag("no-first-run", true), chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("no-sandbox", os.Geteuid() == 0)}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	exp := cdp.TimeSinceEpoch(float64(time.Now().Add(48 * time.Hour).Unix()))
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: "rp_cookie", Value: "from-the-profile", Domain: "profile.test", Path: "/", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Cancel(ctx); err != nil { // Browser.close: Chromium flushes the cookie store
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "Default", "Cookies"), filepath.Join(dir, "Default", "Network", "Cookies")} {
		if _, err := os.Stat(p); err == nil {
			db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: p}).EscapedPath()+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			var enc []byte
			var val string
			err = db.QueryRow("SELECT value, encrypted_value FROM cookies WHERE name='rp_cookie'").Scan(&val, &enc)
			db.Close()
			if err != nil {
				t.Fatalf("the test profile's Cookies database has no rp_cookie row: %v", err)
			}
			if val != "" || !strings.HasPrefix(string(enc), "v10") {
				t.Logf("note: cookie stored as value=%q encrypted prefix=%q", val, enc[:min(3, len(enc))])
			}
			return p
		}
	}
	t.Fatal("Chromium wrote no Cookies database")
	return ""
}

func TestRealProfileCopyLockedThenCookieVisible(t *testing.T) {
	if _, err := backend.FindChromium(""); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	udd := filepath.Join(t.TempDir(), "chromium")
	cookiesDB := makeProfile(t, udd)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html(w, "Cookie page", `<p id=server>server saw: `+r.Header.Get("Cookie")+`</p><p id=js></p><script>document.getElementById('js').textContent='page sees: '+document.cookie</script>`)
	}))
	defer srv.Close()
	su, _ := url.Parse(srv.URL)
	page := "http://profile.test:" + su.Port() + "/"

	cfg := config.Default()
	cfg.Browser.UseRealProfile = true
	cfg.Browser.RealProfilePin = filepath.Join(udd, "Default")
	home := t.TempDir()
	m, _ := New(Options{Config: cfg, Home: home, Resolver: hostResolver{},
		RealProfile: realprofile.Options{DefaultBrowser: defaultIs("chromium.desktop")}})
	defer m.Close()

	// Another connection holds the Cookies database in a write transaction
	// (what a running browser does): the copy fails with the clear error.
	lock, err := sql.Open("sqlite", cookiesDB)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lc, err := lock.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.ExecContext(ctx, "UPDATE cookies SET last_access_utc = last_access_utc + 1"); err != nil {
		t.Fatal(err)
	}
	unlock := func() {
		lc.ExecContext(ctx, "ROLLBACK") //nolint:errcheck
		lc.Close()
		lock.Close()
	}
	r := m.Navigate(context.Background(), "rp-a", NavigateInput{URL: page})
	if r.Success || r.Reason != reason.RealProfileLocked || !strings.Contains(r.Error, "Quit Chromium") || !strings.Contains(r.Error, "Cookies") {
		unlock()
		t.Fatalf("navigate with the Cookies database locked: %+v", r)
	}
	if m.RealProfileDir() != "" {
		t.Fatal("a copy-browser started over a locked profile")
	}
	unlock()

	// Unlocked: the copy is made and its cookie reaches the page.
	r = m.Navigate(context.Background(), "rp-a", NavigateInput{URL: page})
	if !r.Success || !r.UsedRealProfile {
		t.Fatalf("navigate: %+v", r)
	}
	if !strings.Contains(r.Snapshot, "page sees: rp_cookie=from-the-profile") || !strings.Contains(r.Snapshot, "server saw: rp_cookie=from-the-profile") {
		t.Fatalf("the profile's cookie is not visible to the page:\n%s", r.Snapshot)
	}
	copyDir := m.RealProfileDir()
	if copyDir == "" || strings.HasPrefix(copyDir, udd) {
		t.Fatalf("copy dir %q", copyDir)
	}
	if _, err := os.Stat(filepath.Join(copyDir, "Default")); err != nil {
		t.Fatalf("no profile copy: %v", err)
	}
	// A second task shares the same copy-browser and sees the cookie too.
	pid := m.rp.local.PID()
	r2 := m.Navigate(context.Background(), "rp-b", NavigateInput{URL: page})
	if !r2.Success || !r2.UsedRealProfile || !strings.Contains(r2.Snapshot, "rp_cookie=from-the-profile") || m.rp.local.PID() != pid {
		t.Fatalf("second task: %+v", r2)
	}
	// Setting off: the copy-browser stops, the copy is deleted, sessions are
	// plain (no profile cookie).
	cfg.Browser.UseRealProfile = false
	r3 := m.Navigate(context.Background(), "rp-a", NavigateInput{URL: page})
	if !r3.Success || r3.UsedRealProfile || strings.Contains(r3.Snapshot, "rp_cookie") {
		t.Fatalf("after turning it off: %+v", r3)
	}
	if _, err := os.Stat(copyDir); !os.IsNotExist(err) {
		t.Fatalf("the profile copy %s survived turning the setting off: %v", copyDir, err)
	}
	if n := procsWithDir(copyDir); n != 0 {
		t.Fatalf("%d copy-browser processes survived", n)
	}
}
