package browser

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Real profile (spec §B10, issue 9 item 6). With browser.use_real_profile on
// (read on every call), a task's session — never a ::local sidecar, never
// with a CDP override — runs in a dedicated Chromium launched on a copy of
// the user's Chromium-family profile:
//
//  1. The source is the default browser's profile (xdg-settings
//     default-web-browser must name a stable Chrome, Edge, Brave or Chromium;
//     anything else, a pre-release channel or no answer fails closed with
//     real_profile_unavailable). browser.real_profile_pin names the profile
//     directory ("Profile 1", or an absolute path); a missing one fails closed.
//  2. A profile whose SingletonLock names a live process, or whose Cookies,
//     Login Data or Web Data database is locked (a running browser holds
//     them), fails with real_profile_locked naming the browser to quit: a live
//     profile is never copied.
//  3. The copy goes into a fresh Gatehouse-owned user-data-dir (the
//     backend's marker dir, so the orphan reaper knows it): Local State,
//     Preferences and Bookmarks as files, the three databases by SQLite's
//     online backup (modernc.org/sqlite), into <copy>/Default.
//  4. One copy-browser serves every task (all real-profile sessions share it
//     and its copy). Each task's session is a BrowserContext of its own in
//     that browser, with its own egress proxy, seeded with the cookies the
//     copy-browser decrypted from the copy (Chromium reads the v10 cookies of
//     --password-store=basic; cookies a desktop keyring encrypted (v11) cannot
//     be read and are skipped by Chromium). Storage other than cookies
//     (localStorage, IndexedDB) does not carry over.
//  5. Turning the setting off closes the copy-browser and its sessions and
//     deletes the copy. Navigate results carry used_real_profile: true.

// RealProfileOptions configures how the real profile's source is found
// (tests inject both).
type RealProfileOptions struct {
	// DefaultBrowser returns the desktop id of the user's default web browser
	// (e.g. "google-chrome.desktop"); nil runs `xdg-settings get
	// default-web-browser` (5 s).
	DefaultBrowser func() (string, error)
	// ConfigHome replaces $XDG_CONFIG_HOME (default ~/.config), where the
	// browsers keep their user-data-dirs.
	ConfigHome string
}

// browserFamily is a stable Chromium-family browser: its desktop ids, its
// name for messages and its user-data-dir under ~/.config.
type browserFamily struct {
	ids       []string
	name, dir string
}

var families = []browserFamily{
	{[]string{"google-chrome", "google-chrome-stable", "com.google.chrome"}, "Google Chrome", "google-chrome"},
	{[]string{"chromium", "chromium-browser", "org.chromium.chromium"}, "Chromium", "chromium"},
	{[]string{"microsoft-edge", "microsoft-edge-stable", "com.microsoft.edge"}, "Microsoft Edge", "microsoft-edge"},
	{[]string{"brave-browser", "com.brave.browser"}, "Brave", "BraveSoftware/Brave-Browser"},
	{[]string{"brave-origin", "brave-origin-browser"}, "Brave Origin", "BraveSoftware/Brave-Origin"},
}

// preRelease names channel suffixes that fail closed (spec §B10).
var preRelease = []string{"beta", "unstable", "dev", "canary", "nightly"}

// profileSource is the profile a copy is made from.
type profileSource struct {
	Browser     string // "Google Chrome", …: the browser to quit when locked
	UserDataDir string
	ProfileDir  string
}

func unavailable(format string, args ...any) *reason.Error {
	return reason.Newf(reason.RealProfileUnavailable, "", "browser.use_real_profile: "+format, args...)
}

// familyOf maps a desktop id to its stable Chromium family, or explains why
// it has none.
func familyOf(desktop string) (browserFamily, error) {
	id := strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(desktop), ".desktop")))
	if id == "" {
		return browserFamily{}, unavailable("no default browser is set (xdg-settings get default-web-browser answered nothing); make a stable Chrome, Edge, Brave or Chromium the default browser, or turn browser.use_real_profile off.")
	}
	for _, f := range families {
		for _, x := range f.ids {
			if id == x {
				return f, nil
			}
			for _, p := range preRelease {
				if id == x+"-"+p {
					return browserFamily{}, unavailable("the default browser %q is a pre-release channel; only stable Chrome, Edge, Brave or Chromium profiles are copied (fails closed, spec §B10).", desktop)
				}
			}
		}
	}
	return browserFamily{}, unavailable("the default browser %q is not a Chromium-family browser (Chrome, Edge, Brave, Chromium); its profile cannot be used (fails closed, spec §B10).", desktop)
}

func xdgDefaultBrowser() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "xdg-settings", "get", "default-web-browser").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// resolveProfile finds the source profile of spec §B10: the default
// browser's family, its user-data-dir and the profile named by pin (""
// = Default; an absolute path names the profile directory itself). Errors are
// real_profile_unavailable (fail closed) or real_profile_locked.
func resolveProfile(pin string, o RealProfileOptions) (profileSource, error) {
	get := o.DefaultBrowser
	if get == nil {
		get = xdgDefaultBrowser
	}
	desktop, err := get()
	if err != nil {
		return profileSource{}, unavailable("the default browser could not be determined (%v); make a stable Chrome, Edge, Brave or Chromium the default browser, or turn browser.use_real_profile off.", err)
	}
	fam, err := familyOf(desktop)
	if err != nil {
		return profileSource{}, err
	}
	src := profileSource{Browser: fam.name}
	switch {
	case filepath.IsAbs(pin):
		src.ProfileDir = filepath.Clean(pin)
		src.UserDataDir = filepath.Dir(src.ProfileDir)
	default:
		home := o.ConfigHome
		if home == "" {
			home = os.Getenv("XDG_CONFIG_HOME")
		}
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return profileSource{}, unavailable("no home directory to find the %s profile in: %v.", fam.name, err)
			}
			home = filepath.Join(h, ".config")
		}
		if pin == "" {
			pin = "Default"
		}
		if strings.ContainsAny(pin, `/\`) || pin == ".." || pin == "." {
			return profileSource{}, unavailable("browser.real_profile_pin %q is neither a profile directory name (e.g. \"Profile 1\") nor an absolute path.", pin)
		}
		src.UserDataDir = filepath.Join(home, fam.dir)
		src.ProfileDir = filepath.Join(src.UserDataDir, pin)
	}
	st, err := os.Stat(src.ProfileDir)
	if err != nil || !st.IsDir() {
		return profileSource{}, unavailable("the %s profile %q does not exist; set browser.real_profile_pin to an existing profile directory (fails closed, spec §B10).", fam.name, src.ProfileDir)
	}
	if pid, live := singletonLive(src.UserDataDir); live {
		return profileSource{}, reason.Newf(reason.RealProfileLocked, "",
			"%s is running on the profile %q (process %d holds its SingletonLock); quit %s and retry — a live profile is never copied.", fam.name, src.UserDataDir, pid, fam.name)
	}
	return src, nil
}

// singletonLive reads Chromium's SingletonLock symlink ("<host>-<pid>") in
// dir and reports whether it names a live process on this host.
func singletonLive(dir string) (int, bool) {
	target, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(target, '-')
	if i < 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(target[i+1:])
	if err != nil || pid <= 0 {
		return 0, false
	}
	if host, _ := os.Hostname(); host != "" && target[:i] != host {
		return 0, false // another machine's lock (a shared home): not ours to judge
	}
	err = syscall.Kill(pid, 0)
	return pid, err == nil || errors.Is(err, syscall.EPERM)
}

// profileDBs are the SQLite databases copied by online backup, relative to
// the profile directory (Cookies moved to Network/ in Chromium 96).
var profileDBs = []string{"Cookies", filepath.Join("Network", "Cookies"), "Login Data", "Web Data"}

// profileFiles are plain files copied as they are.
var profileFiles = []string{"Preferences", "Secure Preferences", "Bookmarks"}

// snapshotProfile copies src into the fresh user-data-dir dst (profile →
// dst/Default). A locked database is real_profile_locked; other failures are
// real_profile_unavailable.
func snapshotProfile(src profileSource, dst string) error {
	if err := copyFile(filepath.Join(src.UserDataDir, "Local State"), filepath.Join(dst, "Local State")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return unavailable("copying Local State failed: %v.", err)
	}
	pd := filepath.Join(dst, "Default")
	if err := os.MkdirAll(filepath.Join(pd, "Network"), 0o700); err != nil {
		return unavailable("creating the profile copy failed: %v.", err)
	}
	for _, f := range profileFiles {
		if err := copyFile(filepath.Join(src.ProfileDir, f), filepath.Join(pd, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return unavailable("copying %s failed: %v.", f, err)
		}
	}
	for _, db := range profileDBs {
		sp := filepath.Join(src.ProfileDir, db)
		if _, err := os.Stat(sp); err != nil {
			continue
		}
		if err := backupSQLite(sp, filepath.Join(pd, db)); err != nil {
			if isLocked(err) {
				return reason.Newf(reason.RealProfileLocked, "",
					"The %s database of the %s profile %q is locked: %s is running on it. Quit %s and retry — a live profile is never copied.", db, src.Browser, src.ProfileDir, src.Browser, src.Browser)
			}
			return unavailable("copying the %s database failed: %v.", db, err)
		}
	}
	return nil
}

// lockWait is how long a backup waits for a locked source database.
const lockWait = 750 * time.Millisecond

// backupSQLite copies the SQLite database at src to dst with SQLite's online
// backup API (a consistent snapshot even while readers are active), opening
// the source read-only.
func backupSQLite(src, dst string) error {
	dsn := "file:" + (&url.URL{Path: src}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(" + strconv.Itoa(int(lockWait.Milliseconds())) + ")"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The backup takes the read lock at its first step; check it answers
	// first so a lock surfaces as SQLITE_BUSY from a plain read too.
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		return err
	}
	return conn.Raw(func(dc any) error {
		bk, ok := dc.(interface {
			NewBackup(string) (*sqlite.Backup, error)
		})
		if !ok {
			return errors.New("the SQLite driver has no online backup")
		}
		b, err := bk.NewBackup(dst)
		if err != nil {
			return err
		}
		for {
			more, err := b.Step(-1)
			if err != nil {
				b.Finish() //nolint:errcheck // the step error is the one to report
				return err
			}
			if !more {
				break
			}
		}
		return b.Finish()
	})
}

// isLocked reports SQLITE_BUSY or SQLITE_LOCKED (any extended code).
func isLocked(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == 5 || c == 6
	}
	s := err.Error()
	return strings.Contains(s, "database is locked") || strings.Contains(s, "SQLITE_BUSY")
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// realProfile is the Manager's copy-browser state.
type realProfile struct {
	mu    sync.Mutex // serialises launch and stop
	opts  RealProfileOptions
	local *backend.Local
	src   profileSource
	proxy *egress.ProxySession // the copy-browser's default context: refuses everything
}

// wantRealProfile reports whether key's session belongs in the copy-browser
// (spec §B4 precedence: a CDP override wins, a sidecar never gets it).
func (m *Manager) wantRealProfile(key string) bool {
	return m.cfg.Browser.UseRealProfile && !IsSidecar(key) && m.cdpOverride() == ""
}

// ensureRealProfile returns the running copy-browser, launching it on a fresh
// copy of the source profile when none runs.
func (m *Manager) ensureRealProfile(ctx context.Context) (*backend.Local, error) {
	if m.execErr != nil {
		return nil, m.execErr
	}
	rp := &m.rp
	rp.mu.Lock()
	defer rp.mu.Unlock()
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, reason.New(reason.BrowserFailed, "", "The browser service is shut down.")
	}
	if rp.local != nil && rp.local.Alive() {
		return rp.local, nil
	}
	if rp.local != nil {
		rp.local.Close()
		rp.local = nil
	}
	src, err := resolveProfile(m.cfg.Browser.RealProfilePin, rp.opts)
	if err != nil {
		return nil, err
	}
	if rp.proxy == nil {
		p, err := egress.NewProxySession(egress.ProxyOptions{
			Name: "(real-profile default context)", Guard: m.gates.Strict,
			Decider: egress.HostDeciderFunc(func(string, string, uint16) *reason.Error {
				return reason.New(reason.PolicyBlocked, reason.GatePolicy, "Blocked: the copy-browser's default context has no network access.")
			}),
		})
		if err != nil {
			return nil, reason.Wrap(reason.BrowserFailed, "", "Could not start the egress proxy.", err)
		}
		rp.proxy = p
	}
	l, err := backend.Launch(ctx, backend.Options{
		ExecPath: m.execPath, DefaultProxy: rp.proxy.URL(), Headed: m.cfg.Browser.Headed, Logger: m.logger,
		Prepare: func(dir string) error { return snapshotProfile(src, dir) },
	})
	if err != nil {
		return nil, err
	}
	rp.local, rp.src = l, src
	m.logger.Info("real-profile browser started", "browser", src.Browser, "profile", src.ProfileDir, "copy", l.UserDataDir())
	return l, nil
}

// seedRealProfile copies the copy-browser's cookie jar into s's own
// BrowserContext.
func (m *Manager) seedRealProfile(ctx context.Context, l *backend.Local, s *Session) error {
	cookies, err := l.DefaultCookies(ctx)
	if err == nil {
		err = s.tab.SetCookies(ctx, cookies)
	}
	if err != nil {
		return reason.Wrap(reason.RealProfileUnavailable, "", "browser.use_real_profile: seeding the session with the profile's cookies failed: "+err.Error(), err)
	}
	s.realProfile = true
	return nil
}

// stopRealProfile closes every real-profile session and the copy-browser,
// deleting the copy (browser.use_real_profile turned off, or Close).
func (m *Manager) stopRealProfile() {
	rp := &m.rp
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.local == nil && rp.proxy == nil {
		return
	}
	m.mu.Lock()
	var ss []*Session
	for k, s := range m.sessions {
		if s.realProfile {
			ss = append(ss, s)
			delete(m.sessions, k)
		}
	}
	m.mu.Unlock()
	for _, s := range ss {
		s.tab.Close()
		s.proxy.Close()
		m.bindings.DropIf(s.Owner, s.Key)
	}
	if rp.local != nil {
		dir := rp.local.UserDataDir()
		if err := rp.local.Close(); err != nil {
			m.logger.Warn("real-profile browser close", "err", err)
		}
		m.logger.Info("real-profile browser stopped; copy deleted", "copy", dir)
		rp.local = nil
	}
	if rp.proxy != nil {
		rp.proxy.Close()
		rp.proxy = nil
	}
}

// RealProfileDir returns the copy-browser's user-data-dir (the profile copy),
// or "" when none runs.
func (m *Manager) RealProfileDir() string {
	m.rp.mu.Lock()
	defer m.rp.mu.Unlock()
	if m.rp.local == nil {
		return ""
	}
	return m.rp.local.UserDataDir()
}
