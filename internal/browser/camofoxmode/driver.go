// Package camofoxmode is Camofox mode (spec §B1, §B11): every browser
// session is a tab of the Camofox server at CAMOFOX_URL, driven through its
// REST API (package camofox: the client and the tab table). There is no
// CDP, so no ::local sidecar and no egress proxy: the URL gates before each
// navigation, the post-redirect check and the page-URL probe are the
// controls. Camofox counts as a local backend (private URLs allowed, spec
// §B8.1) only when CAMOFOX_URL's host is loopback, i.e. its browser shares
// this host's network like the local Chromium would.
//
// Driver and Tab are one backend of the Manager (internal/browser,
// driver.go): the gate sequence around each call is the Manager's, run
// once for every backend; this package maps the calls onto the tab table
// and the REST calls, and reaches the Manager only through Host and Janitor.
package camofoxmode

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/camofox"
	"github.com/gatehouse-dev/gatehouse/internal/browser/navgate"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/browser/toolio"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Host is what Camofox mode uses of the Manager: the gates, the log and
// the last-active bindings it shares with every backend, and the way every
// backend writes a result (Fail, the snapshot rendering).
type Host interface {
	Gates() *navgate.Gates
	Logger() *slog.Logger
	Bindings() *sessionkey.Bindings
	// Route is the routing facts of spec §B3, read at each navigation.
	Route() sessionkey.Route
	// Fail writes err into p's error fields (a refusal's code and message;
	// any other error as browser_failed, never its protocol text).
	Fail(p *toolio.Page, err error)
	// Render applies the snapshot threshold (browser.snapshot_threshold,
	// the whole text stored when cut); RenderShown is Render for a whole
	// snapshot a result shows, cut to the call's find input when it has one.
	Render(ctx context.Context, text string) (out string, truncated bool, stored string)
	RenderShown(ctx context.Context, text string) (out string, truncated bool, stored string)
	// FindQuery is the call's find input ("" without one).
	FindQuery(ctx context.Context) string
	// CommandContext bounds a call by browser.command_timeout.
	CommandContext(ctx context.Context) (context.Context, context.CancelFunc)
}

// Janitor is the Manager's record of reaped sessions (spec §B7), which
// ReapIdle reports into.
type Janitor interface {
	// IdleTimeout is the inactivity timeout in effect.
	IdleTimeout() time.Duration
	// Failures is how many cleanups of key failed in a row.
	Failures(key string) int
	// ReapFailed records the (fails+1)-th failed cleanup of key; errv is logged.
	ReapFailed(key string, fails int, errv any)
	// Reaped records the reap of key (owner's session, idle for idle): the
	// next call of the key or its owner is session_expired.
	Reaped(key, owner string, idle time.Duration, now time.Time)
}

// Driver is Camofox mode's backend: the tab table of the server at
// CAMOFOX_URL and how the Manager's calls map onto it.
type Driver struct {
	h       Host
	tabs    *camofox.Tabs
	err     *reason.Error // set when Camofox mode is pinned but unusable (no CAMOFOX_URL, refused host)
	local   bool
	rewrite bool   // browser.camofox.rewrite_loopback_urls
	alias   string // browser.camofox.loopback_host_alias
}

// New enters Camofox mode when browser.cloud_provider is camofox, or when
// no cloud provider is named and CAMOFOX_URL is set (spec §B11); a CDP
// override (cdpOverride, the raw BROWSER_CDP_URL / browser.cdp_url) always
// wins. It returns nil outside Camofox mode. env is the parsed .env
// (config.Lookup: it before the process environment); home is
// GATEHOUSE_HOME (browser.camofox.managed_persistence's stable user id).
// The warnings name why the mode is unusable or ignored; an unusable mode
// still returns its Driver, whose every call is refused (Unusable).
func New(cfg *config.Config, env map[string]string, home, cdpOverride string, h Host) (*Driver, []string) {
	bc := cfg.Browser
	raw, on := Selected(cfg, env, cdpOverride)
	if !on {
		if bc.CloudProviderSet && bc.CloudProvider == "camofox" {
			return nil, []string{"browser.cloud_provider camofox is ignored: a CDP override (BROWSER_CDP_URL / browser.cdp_url) wins (spec §B11)"}
		}
		return nil, nil
	}
	b := &Driver{h: h, tabs: &camofox.Tabs{}, rewrite: bc.Camofox.RewriteLoopbackURLs, alias: bc.Camofox.LoopbackHostAlias}
	if b.alias == "" {
		b.alias = config.DefaultLoopbackAlias
	}
	b.tabs.UserID = firstNonEmpty(config.Lookup(env, "CAMOFOX_USER_ID"), bc.Camofox.UserID)
	if b.tabs.UserID == "" {
		if bc.Camofox.ManagedPersistence {
			// A stable id per Gatehouse home: the server keeps that profile.
			h := sha256.Sum256([]byte(filepath.Clean(home)))
			b.tabs.UserID = "gatehouse_" + hex.EncodeToString(h[:6])
		} else {
			var r [6]byte
			rand.Read(r[:])
			b.tabs.UserID = "gatehouse_" + hex.EncodeToString(r[:])
		}
	}
	b.tabs.SessionKey = firstNonEmpty(config.Lookup(env, "CAMOFOX_SESSION_KEY"), bc.Camofox.SessionKey)
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		b.err = reason.New(reason.SessionCreateFailed, "", "browser.cloud_provider is camofox, but CAMOFOX_URL is not set: set it to the Camofox server's address (e.g. http://localhost:9377) in the environment or $GATEHOUSE_HOME/.env.")
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		b.err = reason.Newf(reason.SessionCreateFailed, "", "CAMOFOX_URL %q is not an http(s) URL of the Camofox server.", urlsafe.Redact(raw))
	default:
		if rerr := h.Gates().JudgeStatic("http://"+u.Host+"/", false); rerr != nil {
			b.err = reason.Wrap(rerr.Code, rerr.Gate, "Blocked: CAMOFOX_URL's host is refused by the gates: "+rerr.Message, rerr)
		}
		b.local = camofox.IsLoopbackHost(u.Hostname())
	}
	b.tabs.C = &camofox.Client{BaseURL: raw, APIKey: config.Lookup(env, "CAMOFOX_API_KEY"),
		HTTP: h.Gates().Open.Client(egress.ClientOptions{Timeout: 5 * time.Minute})}
	if b.err != nil {
		return b, []string{b.err.Message}
	}
	return b, nil
}

// Selected reports Camofox mode (spec §B11): browser.cloud_provider is
// camofox, or no provider is named and CAMOFOX_URL is set; a CDP override
// (cdpOverride non-empty) always wins. raw is CAMOFOX_URL.
func Selected(cfg *config.Config, env map[string]string, cdpOverride string) (raw string, on bool) {
	bc := cfg.Browser
	raw = config.Lookup(env, "CAMOFOX_URL")
	pinned := bc.CloudProviderSet && bc.CloudProvider == "camofox"
	if cdpOverride != "" || (!pinned && (bc.CloudProviderSet || raw == "")) {
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

// Local reports whether CAMOFOX_URL's host is loopback: the Camofox browser
// shares this host's network, so its sessions are a local backend's (SSRF
// guard off, spec §B8.1).
func (d *Driver) Local() bool { return d.local }

// NavigationKey is the session key of a navigation (spec §B3): Camofox has
// no ::local sidecar.
func (d *Driver) NavigationKey(_ context.Context, task, rawURL string) string {
	return sessionkey.NavigationKey(task, rawURL, d.h.Route(), nil) // Camofox: never ::local
}

// Unusable is the refusal of every call when Camofox mode is selected but
// cannot run (no CAMOFOX_URL, a refused host); nil when it can.
func (d *Driver) Unusable() *reason.Error { return d.err }

// Info is a Camofox result's provenance.
func (d *Driver) Info() toolio.BackendInfo { return toolio.BackendInfo{Backend: "camofox"} }

// Lookup is the owner record of key's open tab.
func (d *Driver) Lookup(key string) (sessionkey.Owner, bool) {
	t, ok := d.tabs.Lookup(key)
	if !ok {
		return sessionkey.Owner{}, false
	}
	return sessionkey.Owner{SessionKey: t.Key, OwnerTaskID: t.Owner}, true
}

// Open returns key's tab: a navigation creates it (POST /tabs); another
// call needs one.
func (d *Driver) Open(ctx context.Context, key string, navigation bool) (*Tab, error) {
	if !navigation {
		t, ok := d.tabs.Lookup(key)
		if !ok {
			return nil, reason.New(reason.BrowserFailed, "", "No Camofox tab is open for this task: call browser_navigate first.")
		}
		return &Tab{d: d, t: t}, nil
	}
	t, created, err := d.tabs.Open(ctx, key, sessionkey.BareTask(key))
	if err != nil {
		return nil, d.callErr(ctx, "create a tab", err)
	}
	if created {
		d.h.Logger().Info("browser session created", "session", key, "owner", t.Owner, "backend", "camofox")
	}
	return &Tab{d: d, t: t}, nil
}

// callErr turns a Camofox call failure into the result's reason.
func (d *Driver) callErr(ctx context.Context, what string, err error) *reason.Error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return reason.Wrap(reason.CommandTimeout, "", fmt.Sprintf("Camofox did not finish %s within the timeout (browser.command_timeout).", what), err)
	}
	return reason.Wrap(reason.BrowserFailed, "", "Camofox failed to "+what+": "+urlsafe.Redact(err.Error()), err)
}

// drop forgets key's tab (already gone on the server).
func (d *Driver) drop(key string) {
	if t, ok := d.tabs.Drop(key); ok {
		d.h.Bindings().DropIf(t.Owner, key)
	}
}

// CloseTask closes the tabs a cleanup of key reaps (spec §B3) and returns
// their keys, sorted.
func (d *Driver) CloseTask(key string) []string {
	var reap []string
	ts := d.tabs.Take(func(keys []string) []string {
		reap = sessionkey.CleanupKeys(key, keys)
		return reap
	})
	lg := d.h.Logger()
	for _, t := range ts {
		t.Lock()
		t.MarkClosed()
		if err := t.Close(); err != nil {
			lg.Warn("Camofox tab close failed", "session", t.Key, "err", urlsafe.Redact(err.Error()))
		}
		t.UnlockUnused()
		lg.Info("browser session closed", "session", t.Key, "backend", "camofox")
	}
	d.h.Bindings().DropAfterCleanup(key)
	sort.Strings(reap)
	return reap
}

// CloseAll closes every tab (Manager.Close).
func (d *Driver) CloseAll() {
	for _, t := range d.tabs.Take(func(keys []string) []string { return keys }) {
		t.Lock()
		t.MarkClosed()
		t.Close() //nolint:errcheck // best effort at shutdown
		t.UnlockUnused()
	}
}

// ReapIdle is the janitor's pass over Camofox tabs (spec §B7): a tab idle
// longer than the inactivity timeout and not in a call is closed, one log
// record each, and the task's next call is session_expired. A failed close
// is retried on later ticks; the forceAfter-th failure in a row drops the
// tab (lifespec.ForceReapAfter, the same for every backend).
func (d *Driver) ReapIdle(j Janitor, forceAfter int) {
	idle := j.IdleTimeout()
	now := time.Now()
	for _, t := range d.tabs.TakeIdle(idle, now) {
		sat := now.Sub(t.LastUsed())
		fails := j.Failures(t.Key)
		err := t.Close()
		if err != nil && fails+1 < forceAfter {
			j.ReapFailed(t.Key, fails, urlsafe.Redact(err.Error()))
			d.tabs.Restore(t)
			t.UnlockUnused()
			continue
		}
		t.MarkClosed()
		j.Reaped(t.Key, t.Owner, sat, now)
		t.UnlockUnused()
		d.h.Logger().Info("Cleaning up inactive session", "session", t.Key, "idle_s", int(sat.Seconds()), "timeout_s", int(idle.Seconds()), "forced", err != nil, "backend", "camofox")
	}
}

// Tab is a Camofox tab for one call; a navigation keeps its landing
// (Load → Landed → Show). Its methods are the Manager's tab interface
// (internal/browser, driver.go), where each is described.
type Tab struct {
	d      *Driver
	t      *camofox.Tab
	active bool
	pg     camofox.Page     // where the navigation landed
	snap   camofox.Snapshot // the landing's snapshot
}

func (c *Tab) Lock() func() {
	c.t.Lock()
	return c.t.Unlock
}

func (c *Tab) Closed() bool { return c.t.Closed() }

func (c *Tab) GuardActive() bool { return c.d.h.Gates().GuardActive(c.d.local, c.t.Key) }

func (c *Tab) Claim(*toolio.Page) {}

func (c *Tab) BackendInfo() toolio.BackendInfo { return c.d.Info() }

func (c *Tab) Navigations() int { return c.t.Navs }

func (c *Tab) Navigated() { c.t.Navs++ }

// Current probes the page URL (GET /tabs/{id}/stats, 5 s): a tab the server
// no longer has ends the session; a failed probe fails open with the last
// known URL (spec §B8.2), and no URL yet skips the page gate.
func (c *Tab) Current(ctx context.Context, p *toolio.Page) (string, bool, error) {
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
	p.URL = urlsafe.Redact(c.t.LastURL)
	return c.t.LastURL, c.t.LastURL != "", nil
}

func (c *Tab) Fail(ctx context.Context, p *toolio.Page, what string, err error) {
	if _, ok := err.(*reason.Error); ok || what == "" {
		c.d.h.Fail(p, err)
		return
	}
	c.d.h.Fail(p, c.d.callErr(ctx, what, err))
}

// ResetBlank navigates the tab to about:blank (10 s) so no later call reads
// a refused page.
func (c *Tab) ResetBlank(ctx context.Context, p *toolio.Page) {
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if _, err := c.t.Navigate(bctx, "about:blank"); err == nil {
		p.URL, p.Title = "about:blank", ""
	}
	cancel()
	c.t.LastSnap, c.t.LastURL = "", "about:blank"
}

// Load is POST /tabs/{id}/navigate (spec §B8.1 step 4 "Camofox → delegate")
// to u, mapped onto the loopback alias when browser.camofox.rewrite_loopback_urls
// is on.
func (c *Tab) Load(_, nctx context.Context, u *urlsafe.URL, active bool, r *toolio.NavigateResult) (string, string, bool) {
	c.active = active
	target := u.Href
	if c.d.rewrite {
		target = camofox.RewriteLoopback(target, c.d.alias)
	}
	pg, err := c.t.Navigate(nctx, target)
	if err != nil {
		c.d.h.Fail(&r.Page, c.d.callErr(nctx, "navigate", err))
		return "", "", false
	}
	c.pg = pg
	r.URL, r.Title = urlsafe.Redact(pg.URL), urlsafe.Redact(pg.Title)
	return target, pg.URL, true
}

// Landed snapshots the landing and applies the page gate to the snapshot's
// URL (the page may have moved on after the navigate call answered).
func (c *Tab) Landed(ctx context.Context, _, _ string, r *toolio.NavigateResult) (*reason.Error, bool) {
	sctx, cancel := c.d.h.CommandContext(ctx)
	defer cancel()
	snap, err := c.t.Snapshot(sctx)
	if err != nil {
		c.d.h.Fail(&r.Page, c.d.callErr(sctx, "snapshot", err))
		return nil, true
	}
	if rerr := c.d.h.Gates().PageRefusal(firstNonEmpty(snap.URL, c.pg.URL), c.active); rerr != nil {
		return rerr, false
	}
	c.snap = snap
	return nil, false
}

func (c *Tab) Show(ctx context.Context, r *toolio.NavigateResult) {
	text := urlsafe.Redact(c.snap.Text)
	c.t.LastSnap, c.t.LastURL = text, c.snap.URL
	r.Success = true
	r.Snapshot, r.Truncated, _ = c.d.h.RenderShown(ctx, text)
	r.Truncated = r.Truncated || c.snap.Truncated
	r.ElementCount = c.snap.Refs
	r.BotDetectionWarning = snapshot.BotDetectionWarning(c.pg.Title)
}

func (c *Tab) StartAction()            {}
func (c *Tab) ActionFailed(error) bool { return true }

// AfterAction snapshots after an action: the whole compact tree when the
// page moved to another URL (or no earlier snapshot), else the delta; the
// page gate judges where the action landed.
func (c *Tab) AfterAction(ctx context.Context, p *toolio.Page, ch *toolio.Change) {
	h, t := c.d.h, c.t
	snap, err := t.Snapshot(ctx)
	if err != nil {
		h.Fail(p, c.d.callErr(ctx, "snapshot", err))
		return
	}
	if rerr := h.Gates().PageRefusal(snap.URL, c.GuardActive()); rerr != nil {
		p.URL = urlsafe.Redact(snap.URL)
		h.Fail(p, rerr)
		return
	}
	p.Success, p.URL = true, urlsafe.Redact(snap.URL)
	text := urlsafe.Redact(snap.Text)
	if snap.URL != t.LastURL || t.LastSnap == "" {
		ch.Navigated = snap.URL != t.LastURL
		ch.Snapshot, _, _ = h.RenderShown(ctx, text)
		n := snap.Refs
		ch.ElementCount = &n
	} else {
		delta := snapshot.Delta(t.LastSnap, text)
		if q := h.FindQuery(ctx); q != "" {
			delta = snapshot.FindDelta(delta, q)
		}
		ch.Delta, _, _ = h.Render(ctx, delta)
	}
	t.LastSnap, t.LastURL = text, snap.URL
}

func (c *Tab) Click(ctx context.Context, ref string, _ *toolio.ClickResult) error {
	return c.t.Click(ctx, snapshot.RefID(ref))
}

func (c *Tab) TypeText(ctx context.Context, in toolio.TypeInput) error {
	return c.t.Type(ctx, snapshot.RefID(in.Ref), in.Text)
}

func (c *Tab) Scroll(ctx context.Context, direction string, dy int) error {
	return c.t.Scroll(ctx, direction, max(dy, -dy))
}

func (c *Tab) Press(ctx context.Context, key string) error { return c.t.Press(ctx, key) }

func (c *Tab) Back(ctx context.Context) error { return c.t.Back(ctx) }

func (c *Tab) AnswerDialog(context.Context, toolio.DialogInput, bool, *toolio.DialogResult) error {
	return reason.New(reason.BackendUnsupported, "", "Camofox has no JavaScript dialog API; browser_dialog is not available on it.")
}

func (c *Tab) Snapshot(ctx, cctx context.Context, _ bool, r *toolio.SnapshotResult) {
	h, t := c.d.h, c.t
	snap, err := t.Snapshot(cctx)
	if err != nil {
		h.Fail(&r.Page, c.d.callErr(cctx, "snapshot", err))
		return
	}
	if rerr := h.Gates().PageRefusal(snap.URL, c.GuardActive()); rerr != nil {
		h.Fail(&r.Page, rerr)
		return
	}
	text := urlsafe.Redact(snap.Text)
	t.LastSnap, t.LastURL = text, snap.URL
	r.Success, r.URL = true, urlsafe.Redact(snap.URL)
	r.Snapshot, r.Truncated, _ = h.RenderShown(ctx, text)
	r.Truncated = r.Truncated || snap.Truncated
	r.ElementCount = snap.Refs
}

func (c *Tab) Console(_ bool, r *toolio.ConsoleResult) {
	c.d.h.Fail(&r.Page, reason.New(reason.BackendUnsupported, "", "Camofox does not expose console messages; call browser_console with an expression to evaluate JavaScript instead."))
}

// Eval is POST /tabs/{id}/evaluate (404/405/501 → backend_unsupported), then
// the page-URL recheck: a refused page withholds the result.
func (c *Tab) Eval(ctx, cctx context.Context, expression string, r *toolio.ConsoleResult) {
	h, t := c.d.h, c.t
	v, err := t.Evaluate(cctx, expression)
	if err != nil {
		if camofox.Unsupported(err) {
			h.Fail(&r.Page, reason.New(reason.BackendUnsupported, "", "This Camofox server has no evaluate endpoint (POST /tabs/{id}/evaluate); JavaScript evaluation is not supported on it."))
			return
		}
		h.Fail(&r.Page, c.d.callErr(cctx, "evaluate the expression", err))
		return
	}
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	st, serr := t.Stats(pctx)
	pcancel()
	if serr == nil && st.URL != "" {
		t.LastURL = st.URL
		if rerr := h.Gates().PageRefusal(st.URL, c.GuardActive()); rerr != nil {
			r.URL = urlsafe.Redact(st.URL)
			h.Fail(&r.Page, reason.Wrap(reason.PageBlocked, rerr.Gate, "The expression ran, but the page is now on a refused URL; its result is withheld. "+rerr.Message, rerr))
			return
		}
	}
	if len(v) == 0 {
		v = json.RawMessage("null")
	}
	r.Success, r.Result, r.ResultType = true, toolio.RedactJSON(v), camofox.JSONType(v)
}

func (c *Tab) Images(_ context.Context, r *toolio.ImagesResult) {
	c.d.h.Fail(&r.Page, reason.New(reason.BackendUnsupported, "", "browser_get_images is not available on Camofox; use browser_snapshot (images appear as img lines) or browser_vision."))
}

func (c *Tab) Vision(ctx context.Context, annotate bool, r *toolio.VisionResult) ([]byte, bool) {
	h := c.d.h
	if annotate {
		h.Fail(&r.Page, reason.New(reason.BackendUnsupported, "", "Camofox screenshots cannot be annotated with refs; call browser_vision with annotate=false."))
		return nil, false
	}
	png, err := c.t.Screenshot(ctx)
	if err != nil {
		h.Fail(&r.Page, c.d.callErr(ctx, "take a screenshot", err))
		return nil, false
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		h.Fail(&r.Page, reason.New(reason.BrowserFailed, "", "Camofox's screenshot is not a PNG image."))
		return nil, false
	}
	return png, true
}
