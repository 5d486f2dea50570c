package browser

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/camofox"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// camofoxBackend is Camofox mode (spec §B1, §B11): every session is a tab of
// the Camofox server at CAMOFOX_URL, driven through its REST API. There is
// no CDP, so no ::local sidecar and no egress proxy: the URL gates before
// each navigation, the post-redirect check and the page-URL probe are the
// controls. Camofox counts as a local backend (private URLs allowed, spec
// §B8.1) only when CAMOFOX_URL's host is loopback, i.e. its browser shares
// this host's network like the local Chromium would.
//
// It is a driver (driver.go): the gates around each call are the Manager's;
// this file only maps the calls onto the tab table and REST calls of package
// camofox.
type camofoxDriver struct {
	m       *Manager
	tabs    *camofox.Tabs
	err     *reason.Error // set when Camofox mode is pinned but unusable (no CAMOFOX_URL, refused host)
	local   bool
	rewrite bool   // browser.camofox.rewrite_loopback_urls
	alias   string // browser.camofox.loopback_host_alias
}

// initCamofox enters Camofox mode when browser.cloud_provider is camofox, or
// when no cloud provider is named and CAMOFOX_URL is set (spec §B11); a CDP
// override always wins.
func (m *Manager) initCamofox(env map[string]string) []string {
	bc := m.cfg.Browser
	raw, on := camofoxSelected(m.cfg, env)
	if !on {
		if bc.CloudProviderSet && bc.CloudProvider == "camofox" {
			return []string{"browser.cloud_provider camofox is ignored: a CDP override (BROWSER_CDP_URL / browser.cdp_url) wins (spec §B11)"}
		}
		return nil
	}
	b := &camofoxDriver{m: m, tabs: &camofox.Tabs{}, rewrite: bc.Camofox.RewriteLoopbackURLs, alias: bc.Camofox.LoopbackHostAlias}
	if b.alias == "" {
		b.alias = config.DefaultLoopbackAlias
	}
	b.tabs.UserID = firstNonEmpty(config.Lookup(env, "CAMOFOX_USER_ID"), bc.Camofox.UserID)
	if b.tabs.UserID == "" {
		if bc.Camofox.ManagedPersistence {
			// A stable id per Gatehouse home: the server keeps that profile.
			h := sha256.Sum256([]byte(filepath.Clean(m.home)))
			b.tabs.UserID = "gatehouse_" + hex.EncodeToString(h[:6])
		} else {
			var r [6]byte
			rand.Read(r[:])
			b.tabs.UserID = "gatehouse_" + hex.EncodeToString(r[:])
		}
	}
	b.tabs.SessionKey = firstNonEmpty(config.Lookup(env, "CAMOFOX_SESSION_KEY"), bc.Camofox.SessionKey)
	m.camo = b
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		b.err = reason.New(reason.SessionCreateFailed, "", "browser.cloud_provider is camofox, but CAMOFOX_URL is not set: set it to the Camofox server's address (e.g. http://localhost:9377) in the environment or $GATEHOUSE_HOME/.env.")
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		b.err = reason.Newf(reason.SessionCreateFailed, "", "CAMOFOX_URL %q is not an http(s) URL of the Camofox server.", urlsafe.Redact(raw))
	default:
		if rerr := m.gates.JudgeStatic("http://"+u.Host+"/", false); rerr != nil {
			b.err = reason.Wrap(rerr.Code, rerr.Gate, "Blocked: CAMOFOX_URL's host is refused by the gates: "+rerr.Message, rerr)
		}
		b.local = camofox.IsLoopbackHost(u.Hostname())
	}
	b.tabs.C = &camofox.Client{BaseURL: raw, APIKey: config.Lookup(env, "CAMOFOX_API_KEY"),
		HTTP: m.gates.Open.Client(egress.ClientOptions{Timeout: 5 * time.Minute})}
	if b.err != nil {
		return []string{b.err.Message}
	}
	return nil
}

// camofoxSelected reports Camofox mode (spec §B11): browser.cloud_provider
// is camofox, or no provider is named and CAMOFOX_URL is set; a CDP override
// always wins. raw is CAMOFOX_URL.
func camofoxSelected(cfg *config.Config, env map[string]string) (raw string, on bool) {
	bc := cfg.Browser
	raw = config.Lookup(env, "CAMOFOX_URL")
	pinned := bc.CloudProviderSet && bc.CloudProvider == "camofox"
	if CDPOverride(cfg) != "" || (!pinned && (bc.CloudProviderSet || raw == "")) {
		return raw, false
	}
	return raw, true
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

func (d *camofoxDriver) navigationKey(_ context.Context, task, rawURL string) string {
	return sessionkey.NavigationKey(task, rawURL, d.m.route, nil) // Camofox: never ::local
}

func (d *camofoxDriver) unusable() *reason.Error { return d.err }

func (d *camofoxDriver) info() BackendInfo { return BackendInfo{Backend: "camofox"} }

func (d *camofoxDriver) lookup(key string) (sessionkey.Owner, bool) {
	t, ok := d.tabs.Lookup(key)
	if !ok {
		return sessionkey.Owner{}, false
	}
	return sessionkey.Owner{SessionKey: t.Key, OwnerTaskID: t.Owner}, true
}

func (d *camofoxDriver) expire(string) {}

// open returns key's tab: a navigation creates it (POST /tabs); another call
// needs one.
func (d *camofoxDriver) open(ctx context.Context, key, _ string, navigation bool) (tab, error) {
	if !navigation {
		t, ok := d.tabs.Lookup(key)
		if !ok {
			return nil, reason.New(reason.BrowserFailed, "", "No Camofox tab is open for this task: call browser_navigate first.")
		}
		return &camoTab{d: d, t: t}, nil
	}
	t, created, err := d.tabs.Open(ctx, key, sessionkey.BareTask(key))
	if err != nil {
		return nil, d.callErr(ctx, "create a tab", err)
	}
	if created {
		d.m.logger.Info("browser session created", "session", key, "owner", t.Owner, "backend", "camofox")
	}
	return &camoTab{d: d, t: t}, nil
}

// callErr turns a Camofox call failure into the result's reason.
func (d *camofoxDriver) callErr(ctx context.Context, what string, err error) *reason.Error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return reason.Wrap(reason.CommandTimeout, "", fmt.Sprintf("Camofox did not finish %s within the timeout (browser.command_timeout).", what), err)
	}
	return reason.Wrap(reason.BrowserFailed, "", "Camofox failed to "+what+": "+urlsafe.Redact(err.Error()), err)
}

// drop forgets key's tab (already gone on the server).
func (d *camofoxDriver) drop(key string) {
	if t, ok := d.tabs.Drop(key); ok {
		d.m.bindings.DropIf(t.Owner, key)
	}
}

func (d *camofoxDriver) closeTask(key string) []string {
	var reap []string
	ts := d.tabs.Take(func(keys []string) []string {
		reap = sessionkey.CleanupKeys(key, keys)
		return reap
	})
	for _, t := range ts {
		t.Lock()
		t.MarkClosed()
		if err := t.Close(); err != nil {
			d.m.logger.Warn("Camofox tab close failed", "session", t.Key, "err", urlsafe.Redact(err.Error()))
		}
		t.UnlockUnused()
		d.m.logger.Info("browser session closed", "session", t.Key, "backend", "camofox")
	}
	d.m.bindings.DropAfterCleanup(key)
	sort.Strings(reap)
	return reap
}

// closeAll closes every tab (Manager.Close).
func (d *camofoxDriver) closeAll() {
	for _, t := range d.tabs.Take(func(keys []string) []string { return keys }) {
		t.Lock()
		t.MarkClosed()
		t.Close() //nolint:errcheck // best effort at shutdown
		t.UnlockUnused()
	}
}

// reapIdle is the janitor's pass over Camofox tabs (spec §B7): a tab idle
// longer than the inactivity timeout and not in a call is closed, one log
// record each, and the task's next call is session_expired. A failed close
// is retried on later ticks; the ForceReapAfter-th failure drops the tab.
func (d *camofoxDriver) reapIdle() {
	m := d.m
	idle := m.idleTimeout()
	now := time.Now()
	for _, t := range d.tabs.TakeIdle(idle, now) {
		sat := now.Sub(t.LastUsed())
		fails := m.life.failures(t.Key)
		err := t.Close()
		if err != nil && fails+1 < ForceReapAfter {
			m.reapFailed(t.Key, fails, urlsafe.Redact(err.Error()))
			d.tabs.Restore(t)
			t.UnlockUnused()
			continue
		}
		t.MarkClosed()
		m.reaped(t.Key, t.Owner, sat, now)
		t.UnlockUnused()
		m.logger.Info("Cleaning up inactive session", "session", t.Key, "idle_s", int(sat.Seconds()), "timeout_s", int(idle.Seconds()), "forced", err != nil, "backend", "camofox")
	}
}

// camoTab is a Camofox tab for one call; a navigation keeps its landing
// (load → landed → show).
type camoTab struct {
	d      *camofoxDriver
	t      *camofox.Tab
	active bool
	pg     camofox.Page     // where the navigation landed
	snap   camofox.Snapshot // the landing's snapshot
}

func (c *camoTab) lock() func() {
	c.t.Lock()
	return c.t.Unlock
}

func (c *camoTab) closed() bool { return c.t.Closed() }

func (c *camoTab) guardActive() bool { return c.d.m.gates.GuardActive(c.d.m.localBackend(), c.t.Key) }

func (c *camoTab) claim(*Page) {}

func (c *camoTab) backendInfo() BackendInfo { return c.d.info() }

func (c *camoTab) navigations() int { return c.t.Navs }

func (c *camoTab) navigated() { c.t.Navs++ }

// current probes the page URL (GET /tabs/{id}/stats, 5 s): a tab the server
// no longer has ends the session; a failed probe fails open with the last
// known URL (spec §B8.2), and no URL yet skips the page gate.
func (c *camoTab) current(ctx context.Context, p *Page) (string, bool, error) {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	st, err := c.t.Stats(pctx)
	cancel()
	switch {
	case camofox.TabGone(err):
		c.d.drop(c.t.Key)
		return "", false, reason.New(reason.BrowserFailed, "", "The Camofox server no longer has this session's tab (it restarted or expired the tab); call browser_navigate again.")
	case err == nil && st.URL != "":
		c.t.LastURL = st.URL
	}
	p.URL = redactText(c.t.LastURL)
	return c.t.LastURL, c.t.LastURL != "", nil
}

func (c *camoTab) fail(ctx context.Context, p *Page, what string, err error) {
	if _, ok := err.(*reason.Error); ok || what == "" {
		c.d.m.errOf(nil, p, err)
		return
	}
	c.d.m.errOf(nil, p, c.d.callErr(ctx, what, err))
}

// resetBlank navigates the tab to about:blank (10 s) so no later call reads
// a refused page.
func (c *camoTab) resetBlank(ctx context.Context, p *Page) {
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if _, err := c.t.Navigate(bctx, "about:blank"); err == nil {
		p.URL, p.Title = "about:blank", ""
	}
	cancel()
	c.t.LastSnap, c.t.LastURL = "", "about:blank"
}

// load is POST /tabs/{id}/navigate (spec §B8.1 step 4 "Camofox → delegate")
// to u, mapped onto the loopback alias when browser.camofox.rewrite_loopback_urls
// is on.
func (c *camoTab) load(_, nctx context.Context, u *urlsafe.URL, active bool, r *NavigateResult) (string, string, bool) {
	c.active = active
	target := u.Href
	if c.d.rewrite {
		target = camofox.RewriteLoopback(target, c.d.alias)
	}
	pg, err := c.t.Navigate(nctx, target)
	if err != nil {
		c.d.m.errOf(nil, &r.Page, c.d.callErr(nctx, "navigate", err))
		return "", "", false
	}
	c.pg = pg
	r.URL, r.Title = redactText(pg.URL), redactText(pg.Title)
	return target, pg.URL, true
}

// landed snapshots the landing and applies the page gate to the snapshot's
// URL (the page may have moved on after the navigate call answered).
func (c *camoTab) landed(ctx context.Context, _, _ string, r *NavigateResult) (*reason.Error, bool) {
	sctx, cancel := c.d.m.cmdCtx(ctx)
	defer cancel()
	snap, err := c.t.Snapshot(sctx)
	if err != nil {
		c.d.m.errOf(nil, &r.Page, c.d.callErr(sctx, "snapshot", err))
		return nil, true
	}
	if rerr := c.d.m.gates.PageRefusal(firstNonEmpty(snap.URL, c.pg.URL), c.active); rerr != nil {
		return rerr, false
	}
	c.snap = snap
	return nil, false
}

func (c *camoTab) show(ctx context.Context, r *NavigateResult) {
	text := redactText(c.snap.Text)
	c.t.LastSnap, c.t.LastURL = text, c.snap.URL
	r.Success = true
	r.Snapshot, r.Truncated, _ = c.d.m.renderShown(ctx, text)
	r.Truncated = r.Truncated || c.snap.Truncated
	r.ElementCount = c.snap.Refs
	r.BotDetectionWarning = snapshot.BotDetectionWarning(c.pg.Title)
}

func (c *camoTab) startAction()            {}
func (c *camoTab) actionFailed(error) bool { return true }

// afterAction snapshots after an action: the whole compact tree when the
// page moved to another URL (or no earlier snapshot), else the delta; the
// page gate judges where the action landed.
func (c *camoTab) afterAction(ctx context.Context, p *Page, ch *Change) {
	m, t := c.d.m, c.t
	snap, err := t.Snapshot(ctx)
	if err != nil {
		m.errOf(nil, p, c.d.callErr(ctx, "snapshot", err))
		return
	}
	if rerr := m.gates.PageRefusal(snap.URL, c.guardActive()); rerr != nil {
		p.URL = redactText(snap.URL)
		m.errOf(nil, p, rerr)
		return
	}
	p.Success, p.URL = true, redactText(snap.URL)
	text := redactText(snap.Text)
	if snap.URL != t.LastURL || t.LastSnap == "" {
		ch.Navigated = snap.URL != t.LastURL
		ch.Snapshot, _, _ = m.renderShown(ctx, text)
		n := snap.Refs
		ch.ElementCount = &n
	} else {
		delta := snapshot.Delta(t.LastSnap, text)
		if q := findQuery(ctx); q != "" {
			delta = snapshot.FindDelta(delta, q)
		}
		ch.Delta, _, _ = m.render(ctx, delta)
	}
	t.LastSnap, t.LastURL = text, snap.URL
}

func (c *camoTab) click(ctx context.Context, ref string, _ *ClickResult) error {
	return c.t.Click(ctx, snapshot.RefID(ref))
}

func (c *camoTab) typeText(ctx context.Context, in TypeInput) error {
	return c.t.Type(ctx, snapshot.RefID(in.Ref), in.Text)
}

func (c *camoTab) scroll(ctx context.Context, direction string, dy int) error {
	return c.t.Scroll(ctx, direction, max(dy, -dy))
}

func (c *camoTab) press(ctx context.Context, key string) error { return c.t.Press(ctx, key) }

func (c *camoTab) back(ctx context.Context) error { return c.t.Back(ctx) }

func (c *camoTab) answerDialog(context.Context, DialogInput, bool, *DialogResult) error {
	return reason.New(reason.BackendUnsupported, "", "Camofox has no JavaScript dialog API; browser_dialog is not available on it.")
}

func (c *camoTab) snapshot(ctx, cctx context.Context, _ bool, r *SnapshotResult) {
	m, t := c.d.m, c.t
	snap, err := t.Snapshot(cctx)
	if err != nil {
		m.errOf(nil, &r.Page, c.d.callErr(cctx, "snapshot", err))
		return
	}
	if rerr := m.gates.PageRefusal(snap.URL, c.guardActive()); rerr != nil {
		m.errOf(nil, &r.Page, rerr)
		return
	}
	text := redactText(snap.Text)
	t.LastSnap, t.LastURL = text, snap.URL
	r.Success, r.URL = true, redactText(snap.URL)
	r.Snapshot, r.Truncated, _ = m.renderShown(ctx, text)
	r.Truncated = r.Truncated || snap.Truncated
	r.ElementCount = snap.Refs
}

func (c *camoTab) console(_ bool, r *ConsoleResult) {
	c.d.m.errOf(nil, &r.Page, reason.New(reason.BackendUnsupported, "", "Camofox does not expose console messages; call browser_console with an expression to evaluate JavaScript instead."))
}

// eval is POST /tabs/{id}/evaluate (404/405/501 → backend_unsupported), then
// the page-URL recheck: a refused page withholds the result.
func (c *camoTab) eval(ctx, cctx context.Context, expression string, r *ConsoleResult) {
	m, t := c.d.m, c.t
	v, err := t.Evaluate(cctx, expression)
	if err != nil {
		if camofox.Unsupported(err) {
			m.errOf(nil, &r.Page, reason.New(reason.BackendUnsupported, "", "This Camofox server has no evaluate endpoint (POST /tabs/{id}/evaluate); JavaScript evaluation is not supported on it."))
			return
		}
		m.errOf(nil, &r.Page, c.d.callErr(cctx, "evaluate the expression", err))
		return
	}
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	st, serr := t.Stats(pctx)
	pcancel()
	if serr == nil && st.URL != "" {
		t.LastURL = st.URL
		if rerr := m.gates.PageRefusal(st.URL, c.guardActive()); rerr != nil {
			r.URL = redactText(st.URL)
			m.errOf(nil, &r.Page, reason.Wrap(reason.PageBlocked, rerr.Gate, "The expression ran, but the page is now on a refused URL; its result is withheld. "+rerr.Message, rerr))
			return
		}
	}
	if len(v) == 0 {
		v = json.RawMessage("null")
	}
	r.Success, r.Result, r.ResultType = true, redactJSON(v), camofox.JSONType(v)
}

func (c *camoTab) images(_ context.Context, r *ImagesResult) {
	c.d.m.errOf(nil, &r.Page, reason.New(reason.BackendUnsupported, "", "browser_get_images is not available on Camofox; use browser_snapshot (images appear as img lines) or browser_vision."))
}

func (c *camoTab) vision(ctx context.Context, annotate bool, r *VisionResult) ([]byte, bool) {
	m := c.d.m
	if annotate {
		m.errOf(nil, &r.Page, reason.New(reason.BackendUnsupported, "", "Camofox screenshots cannot be annotated with refs; call browser_vision with annotate=false."))
		return nil, false
	}
	png, err := c.t.Screenshot(ctx)
	if err != nil {
		m.errOf(nil, &r.Page, c.d.callErr(ctx, "take a screenshot", err))
		return nil, false
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		m.errOf(nil, &r.Page, reason.New(reason.BrowserFailed, "", "Camofox's screenshot is not a PNG image."))
		return nil, false
	}
	return png, true
}
