package browser

import (
	"context"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/realprofile"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
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

// realProfile is the Manager's copy-browser state.
type realProfile struct {
	mu    sync.Mutex // serialises launch and stop
	opts  realprofile.Options
	local *backend.Local
	src   realprofile.Source
	proxy *egress.ProxySession // the copy-browser's default context: refuses everything
}

// wantRealProfile reports whether key's session belongs in the copy-browser
// (spec §B4 precedence: a CDP override wins, a sidecar never gets it).
func (m *Manager) wantRealProfile(key string) bool {
	return m.cfg.Browser.UseRealProfile && !sessionkey.IsSidecar(key) && m.cdpOverride() == ""
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
	src, err := realprofile.Resolve(m.cfg.Browser.RealProfilePin, rp.opts)
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
		Prepare: func(dir string) error { return realprofile.Copy(src, dir) },
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
