// Package realprofile finds and copies the user's Chromium-family browser
// profile for browser.use_real_profile (spec §B10, issue 9 item 6): Resolve
// picks the default browser's profile (stable Chrome, Edge, Brave or Chromium
// only; anything else fails closed with real_profile_unavailable) and refuses
// a live one (real_profile_locked); Copy copies Local State, Preferences,
// Bookmarks and the cookie and login databases (SQLite online backup) into a
// fresh user-data-dir. It launches nothing: package browser runs the
// copy-browser on what Copy wrote.
package realprofile

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
	"syscall"
	"time"

	"modernc.org/sqlite"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Options configures how the real profile's source is found
// (tests inject both).
type Options struct {
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

// Source is the profile a copy is made from.
type Source struct {
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

// Resolve finds the source profile of spec §B10: the default
// browser's family, its user-data-dir and the profile named by pin (""
// = Default; an absolute path names the profile directory itself). Errors are
// real_profile_unavailable (fail closed) or real_profile_locked.
func Resolve(pin string, o Options) (Source, error) {
	get := o.DefaultBrowser
	if get == nil {
		get = xdgDefaultBrowser
	}
	desktop, err := get()
	if err != nil {
		return Source{}, unavailable("the default browser could not be determined (%v); make a stable Chrome, Edge, Brave or Chromium the default browser, or turn browser.use_real_profile off.", err)
	}
	fam, err := familyOf(desktop)
	if err != nil {
		return Source{}, err
	}
	src := Source{Browser: fam.name}
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
				return Source{}, unavailable("no home directory to find the %s profile in: %v.", fam.name, err)
			}
			home = filepath.Join(h, ".config")
		}
		if pin == "" {
			pin = "Default"
		}
		if strings.ContainsAny(pin, `/\`) || pin == ".." || pin == "." {
			return Source{}, unavailable("browser.real_profile_pin %q is neither a profile directory name (e.g. \"Profile 1\") nor an absolute path.", pin)
		}
		src.UserDataDir = filepath.Join(home, fam.dir)
		src.ProfileDir = filepath.Join(src.UserDataDir, pin)
	}
	st, err := os.Stat(src.ProfileDir)
	if err != nil || !st.IsDir() {
		return Source{}, unavailable("the %s profile %q does not exist; set browser.real_profile_pin to an existing profile directory (fails closed, spec §B10).", fam.name, src.ProfileDir)
	}
	if pid, live := singletonLive(src.UserDataDir); live {
		return Source{}, reason.Newf(reason.RealProfileLocked, "",
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

// Copy copies src into the fresh user-data-dir dst (profile →
// dst/Default). A locked database is real_profile_locked; other failures are
// real_profile_unavailable.
func Copy(src Source, dst string) error {
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
