package browser

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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
type camofoxBackend struct {
	c          *camofox.Client
	err        *reason.Error // set when Camofox mode is pinned but unusable (no CAMOFOX_URL, refused host)
	local      bool
	userID     string
	sessionKey string // CAMOFOX_SESSION_KEY / browser.camofox.session_key; "" = the Gatehouse session key
	rewrite    bool   // browser.camofox.rewrite_loopback_urls
	alias      string // browser.camofox.loopback_host_alias

	mu   sync.Mutex
	tabs map[string]*camoTab // by session key
}

// camoTab is one Camofox tab serving a session key.
type camoTab struct {
	key, owner, id string
	mu             sync.Mutex // one call at a time
	lastUsed       time.Time  // under camofoxBackend.mu
	navs           int
	lastSnap       string
	lastURL        string
	closed         bool // under mu
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
	b := &camofoxBackend{tabs: map[string]*camoTab{}, rewrite: bc.Camofox.RewriteLoopbackURLs, alias: bc.Camofox.LoopbackHostAlias}
	if b.alias == "" {
		b.alias = config.DefaultLoopbackAlias
	}
	b.userID = firstNonEmpty(config.Lookup(env, "CAMOFOX_USER_ID"), bc.Camofox.UserID)
	if b.userID == "" {
		if bc.Camofox.ManagedPersistence {
			// A stable id per Gatehouse home: the server keeps that profile.
			h := sha256.Sum256([]byte(filepath.Clean(m.home)))
			b.userID = "gatehouse_" + hex.EncodeToString(h[:6])
		} else {
			var r [6]byte
			rand.Read(r[:])
			b.userID = "gatehouse_" + hex.EncodeToString(r[:])
		}
	}
	b.sessionKey = firstNonEmpty(config.Lookup(env, "CAMOFOX_SESSION_KEY"), bc.Camofox.SessionKey)
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
		b.local = isLoopbackHost(u.Hostname())
	}
	b.c = &camofox.Client{BaseURL: raw, APIKey: config.Lookup(env, "CAMOFOX_API_KEY"),
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

func isLoopbackHost(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// rewriteLoopback maps a loopback URL onto the loopback host alias when
// browser.camofox.rewrite_loopback_urls is on (a Camofox in Docker reaches
// the host as host.docker.internal, spec §B11).
func (b *camofoxBackend) rewriteLoopback(href string) string {
	if !b.rewrite {
		return href
	}
	u, err := url.Parse(href)
	if err != nil || !isLoopbackHost(u.Hostname()) {
		return href
	}
	if p := u.Port(); p != "" {
		u.Host = b.alias + ":" + p
	} else {
		u.Host = b.alias
	}
	return u.String()
}

func (b *camofoxBackend) sessKey(key string) string {
	if b.sessionKey != "" {
		return b.sessionKey
	}
	return key
}

// camoErr turns a Camofox call failure into the result's reason.
func (m *Manager) camoErr(ctx context.Context, what string, err error) *reason.Error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return reason.Wrap(reason.CommandTimeout, "", fmt.Sprintf("Camofox did not finish %s within the timeout (browser.command_timeout).", what), err)
	}
	return reason.Wrap(reason.BrowserFailed, "", "Camofox failed to "+what+": "+urlsafe.Redact(err.Error()), err)
}

func (m *Manager) camoLookup(key string) (sessionkey.Owner, bool) {
	m.camo.mu.Lock()
	defer m.camo.mu.Unlock()
	t, ok := m.camo.tabs[key]
	if !ok {
		return sessionkey.Owner{}, false
	}
	return sessionkey.Owner{SessionKey: t.key, OwnerTaskID: t.owner}, true
}

// camoTabFor returns key's tab, creating it (POST /tabs).
func (m *Manager) camoTabFor(ctx context.Context, key string) (*camoTab, error) {
	b := m.camo
	b.mu.Lock()
	if t, ok := b.tabs[key]; ok {
		t.lastUsed = time.Now()
		b.mu.Unlock()
		return t, nil
	}
	b.mu.Unlock()
	p, err := b.c.CreateTab(ctx, b.userID, b.sessKey(key))
	if err != nil {
		return nil, m.camoErr(ctx, "create a tab", err)
	}
	t := &camoTab{key: key, owner: sessionkey.BareTask(key), id: p.TabID, lastUsed: time.Now()}
	b.mu.Lock()
	if old, ok := b.tabs[key]; ok { // another call created it meanwhile: the stored one wins
		b.mu.Unlock()
		m.camoClose(t)
		return old, nil
	}
	b.tabs[key] = t
	b.mu.Unlock()
	m.logger.Info("browser session created", "session", key, "owner", t.owner, "backend", "camofox")
	return t, nil
}

// camoClose closes t's Camofox tab (DELETE /tabs/{id}, 10 s), once.
func (m *Manager) camoClose(t *camoTab) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := m.camo.c.CloseTab(ctx, t.id, m.camo.userID)
	if camofox.TabGone(err) {
		err = nil
	}
	return err
}

func (m *Manager) camoTouch(t *camoTab) {
	m.camo.mu.Lock()
	t.lastUsed = time.Now()
	m.camo.mu.Unlock()
}

// camoNavigate is browser_navigate on Camofox (spec §B8.1 with step 4
// "Camofox → delegate"): the same gates before the URL leaves, then
// navigate, the post-redirect check (a refused final URL resets the tab to
// about:blank), the page gate on the snapshot's URL, the binding.
func (m *Manager) camoNavigate(ctx context.Context, task string, in NavigateInput) NavigateResult {
	task = sessionkey.TaskID(task)
	key := sessionkey.NavigationKey(task, in.URL, m.route, nil) // Camofox: never ::local
	r := NavigateResult{Page: Page{SessionKey: key}, BackendInfo: BackendInfo{Backend: "camofox"}}
	if m.camo.err != nil {
		m.errOf(nil, &r.Page, m.camo.err)
		return r
	}
	active := m.gates.GuardActive(m.localBackend(), key)
	chk := m.gates.CheckURL(ctx, in.URL, active)
	if !chk.Allowed {
		r.Error, r.Reason, r.BlockedByPolicy = chk.Message, *chk.Reason, chk.BlockedByPolicy
		return r
	}
	u, perr := urlsafe.Parse(in.URL)
	if perr != nil {
		m.errOf(nil, &r.Page, perr)
		return r
	}
	t, err := m.camoTabFor(ctx, key)
	if err != nil {
		m.errOf(nil, &r.Page, err)
		return r
	}
	t.mu.Lock()
	defer func() { m.camoTouch(t); t.mu.Unlock() }()
	if t.closed {
		m.errOf(nil, &r.Page, reason.New(reason.BrowserFailed, "", "The session was closed while this navigation waited; call browser_navigate again."))
		return r
	}
	to := m.timeouts.Open
	if t.navs == 0 {
		to = m.timeouts.FirstOpen
	}
	nctx, cancel := context.WithTimeout(ctx, time.Duration(to)*time.Second)
	defer cancel()
	target := m.camo.rewriteLoopback(u.Href)
	pg, err := m.camo.c.Navigate(nctx, t.id, m.camo.userID, target)
	if err != nil {
		m.errOf(nil, &r.Page, m.camoErr(nctx, "navigate", err))
		return r
	}
	blank := func(rerr *reason.Error) NavigateResult {
		bctx, bcancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := m.camo.c.Navigate(bctx, t.id, m.camo.userID, "about:blank"); err == nil {
			r.URL, r.Title = "about:blank", ""
		}
		bcancel()
		t.lastSnap, t.lastURL = "", "about:blank"
		r.Error, r.Reason = rerr.Message, rerr.Code
		return r
	}
	r.URL, r.Title = redactText(pg.URL), redactText(pg.Title)
	if rr := m.gates.RedirectRefusal(target, pg.URL, active); rr != nil {
		return blank(rr)
	}
	sctx, scancel := m.cmdCtx(ctx)
	defer scancel()
	snap, err := m.camo.c.Snapshot(sctx, t.id, m.camo.userID)
	if err != nil {
		m.errOf(nil, &r.Page, m.camoErr(sctx, "snapshot", err))
		return r
	}
	if rerr := m.gates.PageRefusal(firstNonEmpty(snap.URL, pg.URL), active); rerr != nil {
		return blank(rerr)
	}
	t.navs++
	m.bindings.Set(task, key)
	m.clearExpired(task)
	text := redactText(snap.Text)
	t.lastSnap, t.lastURL = text, snap.URL
	r.Success = true
	r.Snapshot, r.Truncated, _ = m.render(ctx, text)
	r.Truncated = r.Truncated || snap.Truncated
	r.ElementCount = snap.Refs
	r.BotDetectionWarning = snapshot.BotDetectionWarning(pg.Title)
	return r
}

// camoBegin resolves the tab of a non-navigation call (binding and
// ownership, spec §B3; session_expired after a reap) and applies the page
// gate to its current URL (GET /tabs/{id}/stats; a failed probe fails open,
// spec §B8.2). The returned release unlocks the tab.
func (m *Manager) camoBegin(ctx context.Context, task string, p *Page) (*camoTab, func(), bool) {
	task = sessionkey.TaskID(task)
	key, _ := m.bindings.Resolve(task, m.camoLookup)
	p.SessionKey = key
	if m.camo.err != nil {
		m.errOf(nil, p, m.camo.err)
		return nil, nil, false
	}
	if rerr := m.expiredErr(task, key); rerr != nil {
		m.errOf(nil, p, rerr)
		return nil, nil, false
	}
	m.camo.mu.Lock()
	t, ok := m.camo.tabs[key]
	m.camo.mu.Unlock()
	if !ok {
		m.errOf(nil, p, reason.New(reason.BrowserFailed, "", "No Camofox tab is open for this task: call browser_navigate first."))
		return nil, nil, false
	}
	t.mu.Lock()
	release := func() { m.camoTouch(t); t.mu.Unlock() }
	if t.closed {
		release()
		if rerr := m.expiredErr(task, key); rerr != nil {
			m.errOf(nil, p, rerr)
		} else {
			m.errOf(nil, p, reason.New(reason.BrowserFailed, "", "The session was closed while this call waited for it; call browser_navigate again."))
		}
		return nil, nil, false
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	st, err := m.camo.c.Stats(pctx, t.id, m.camo.userID)
	cancel()
	switch {
	case camofox.TabGone(err):
		release()
		m.camoDrop(key)
		m.errOf(nil, p, reason.New(reason.BrowserFailed, "", "The Camofox server no longer has this session's tab (it restarted or expired the tab); call browser_navigate again."))
		return nil, nil, false
	case err == nil && st.URL != "":
		t.lastURL = st.URL
	}
	p.URL = redactText(t.lastURL)
	if rerr := m.gates.PageRefusal(t.lastURL, m.gates.GuardActive(m.localBackend(), key)); rerr != nil && t.lastURL != "" {
		m.errOf(nil, p, rerr)
		release()
		return nil, nil, false
	}
	return t, release, true
}

// camoAfter snapshots after an action: the whole compact tree when the page
// moved to another URL (or no earlier snapshot), else the delta.
func (m *Manager) camoAfter(ctx context.Context, t *camoTab, p *Page, c *Change) {
	snap, err := m.camo.c.Snapshot(ctx, t.id, m.camo.userID)
	if err != nil {
		m.errOf(nil, p, m.camoErr(ctx, "snapshot", err))
		return
	}
	active := m.gates.GuardActive(m.localBackend(), t.key)
	if rerr := m.gates.PageRefusal(snap.URL, active); rerr != nil {
		p.URL = redactText(snap.URL)
		m.errOf(nil, p, rerr)
		return
	}
	p.Success, p.URL = true, redactText(snap.URL)
	text := redactText(snap.Text)
	if snap.URL != t.lastURL || t.lastSnap == "" {
		c.Navigated = snap.URL != t.lastURL
		c.Snapshot, _, _ = m.render(ctx, text)
		n := snap.Refs
		c.ElementCount = &n
	} else {
		c.Delta, _, _ = m.render(ctx, snapshot.Delta(t.lastSnap, text))
	}
	t.lastSnap, t.lastURL = text, snap.URL
}

func (m *Manager) camoSnapshot(ctx context.Context, task string) SnapshotResult {
	var r SnapshotResult
	t, release, ok := m.camoBegin(ctx, task, &r.Page)
	if !ok {
		return r
	}
	defer release()
	cctx, cancel := m.cmdCtx(ctx)
	defer cancel()
	snap, err := m.camo.c.Snapshot(cctx, t.id, m.camo.userID)
	if err != nil {
		m.errOf(nil, &r.Page, m.camoErr(cctx, "snapshot", err))
		return r
	}
	if rerr := m.gates.PageRefusal(snap.URL, m.gates.GuardActive(m.localBackend(), t.key)); rerr != nil {
		m.errOf(nil, &r.Page, rerr)
		return r
	}
	text := redactText(snap.Text)
	t.lastSnap, t.lastURL = text, snap.URL
	r.Success, r.URL = true, redactText(snap.URL)
	r.Snapshot, r.Truncated, _ = m.render(ctx, text)
	r.Truncated = r.Truncated || snap.Truncated
	r.ElementCount = snap.Refs
	return r
}

// camoAct is the one sequence of a Camofox page action (browser_click,
// browser_type, browser_scroll, browser_press, browser_back): camoBegin, the
// timeout (browser.command_timeout when 0), do (a failure is camoErr's
// reason naming what), then camoAfter's snapshot or delta, whose page gate
// judges where the action landed. It reports whether the action was
// performed.
func (m *Manager) camoAct(ctx context.Context, task string, p *Page, c *Change, timeout time.Duration, what string, do func(context.Context, *camoTab) error) bool {
	t, release, ok := m.camoBegin(ctx, task, p)
	if !ok {
		return false
	}
	defer release()
	if timeout <= 0 {
		timeout = time.Duration(m.timeouts.Command) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := do(cctx, t); err != nil {
		m.errOf(nil, p, m.camoErr(cctx, what, err))
		return false
	}
	m.camoAfter(cctx, t, p, c)
	return true
}

func (m *Manager) camoClick(ctx context.Context, task string, in RefInput) ClickResult {
	var r ClickResult
	if m.camoAct(ctx, task, &r.Page, &r.Change, 0, "click "+snapshot.NormalizeRef(in.Ref), func(cctx context.Context, t *camoTab) error {
		_, err := m.camo.c.Click(cctx, t.id, m.camo.userID, snapshot.RefID(in.Ref))
		return err
	}) {
		r.Clicked = snapshot.NormalizeRef(in.Ref)
	}
	return r
}

func (m *Manager) camoType(ctx context.Context, task string, in TypeInput) TypeResult {
	var r TypeResult
	if m.camoAct(ctx, task, &r.Page, &r.Change, 0, "type into "+snapshot.NormalizeRef(in.Ref), func(cctx context.Context, t *camoTab) error {
		return m.camo.c.Type(cctx, t.id, m.camo.userID, snapshot.RefID(in.Ref), in.Text)
	}) {
		r.Typed, r.Element = redactText(in.Text), snapshot.NormalizeRef(in.Ref)
	}
	return r
}

func (m *Manager) camoScroll(ctx context.Context, task string, in ScrollInput) ScrollResult {
	var r ScrollResult
	dy, _ := snapshot.ScrollDelta(in.Direction)
	if m.camoAct(ctx, task, &r.Page, &r.Change, 0, "scroll", func(cctx context.Context, t *camoTab) error {
		return m.camo.c.Scroll(cctx, t.id, m.camo.userID, in.Direction, max(dy, -dy))
	}) {
		r.Scrolled = in.Direction
	}
	return r
}

func (m *Manager) camoPress(ctx context.Context, task string, in PressInput) PressResult {
	var r PressResult
	if m.camoAct(ctx, task, &r.Page, &r.Change, 0, "press "+in.Key, func(cctx context.Context, t *camoTab) error {
		return m.camo.c.Press(cctx, t.id, m.camo.userID, in.Key)
	}) {
		r.Pressed = in.Key
	}
	return r
}

func (m *Manager) camoBack(ctx context.Context, task string) BackResult {
	var r BackResult
	m.camoAct(ctx, task, &r.Page, &r.Change, time.Duration(m.timeouts.Open)*time.Second, "go back", func(nctx context.Context, t *camoTab) error {
		_, err := m.camo.c.Back(nctx, t.id, m.camo.userID)
		return err
	})
	return r
}

// camoConsole is browser_console on Camofox: with an expression, the eval
// policy (spec §B8.3 steps 1–2), POST /tabs/{id}/evaluate (404/405/501 →
// backend_unsupported), then the page-URL recheck; console messages are not
// in Camofox's API.
func (m *Manager) camoConsole(ctx context.Context, task string, in ConsoleInput) ConsoleResult {
	var r ConsoleResult
	t, release, ok := m.camoBegin(ctx, task, &r.Page)
	if !ok {
		return r
	}
	defer release()
	if in.Expression == "" {
		m.errOf(nil, &r.Page, reason.New(reason.BackendUnsupported, "", "Camofox does not expose console messages; call browser_console with an expression to evaluate JavaScript instead."))
		return r
	}
	active := m.gates.GuardActive(m.localBackend(), t.key)
	cctx, cancel := m.cmdCtx(ctx)
	defer cancel()
	if rerr := m.gates.CheckEval(cctx, in.Expression, m.evalSettings(), active); rerr != nil {
		m.errOf(nil, &r.Page, rerr)
		return r
	}
	v, err := m.camo.c.Evaluate(cctx, t.id, m.camo.userID, in.Expression)
	if err != nil {
		if camofox.Unsupported(err) {
			m.errOf(nil, &r.Page, reason.New(reason.BackendUnsupported, "", "This Camofox server has no evaluate endpoint (POST /tabs/{id}/evaluate); JavaScript evaluation is not supported on it."))
			return r
		}
		m.errOf(nil, &r.Page, m.camoErr(cctx, "evaluate the expression", err))
		return r
	}
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	st, serr := m.camo.c.Stats(pctx, t.id, m.camo.userID)
	pcancel()
	if serr == nil && st.URL != "" {
		t.lastURL = st.URL
		if rerr := m.gates.PageRefusal(st.URL, active); rerr != nil {
			r.URL = redactText(st.URL)
			m.errOf(nil, &r.Page, reason.Wrap(reason.PageBlocked, rerr.Gate, "The expression ran, but the page is now on a refused URL; its result is withheld. "+rerr.Message, rerr))
			return r
		}
	}
	if len(v) == 0 {
		v = json.RawMessage("null")
	}
	r.Success, r.Result, r.ResultType = true, redactJSON(v), jsonType(v)
	return r
}

// jsonType names a JSON value's type like spec §B8.3's result_type (Python
// type names).
func jsonType(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "str"
	}
	switch n := x.(type) {
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	case string:
		return "str"
	case bool:
		return "bool"
	case float64:
		if n == float64(int64(n)) && !strings.ContainsAny(string(v), ".eE") {
			return "int"
		}
		return "float"
	}
	return "NoneType"
}

func (m *Manager) camoVision(ctx context.Context, task string, in VisionInput) VisionResult {
	r := VisionResult{Question: in.Question}
	t, release, ok := m.camoBegin(ctx, task, &r.Page)
	if !ok {
		return r
	}
	defer release()
	if in.Annotate {
		m.errOf(nil, &r.Page, reason.New(reason.BackendUnsupported, "", "Camofox screenshots cannot be annotated with refs; call browser_vision with annotate=false."))
		return r
	}
	cctx, cancel := m.cmdCtx(ctx)
	defer cancel()
	png, err := m.camo.c.Screenshot(cctx, t.id, m.camo.userID)
	if err != nil {
		m.errOf(nil, &r.Page, m.camoErr(cctx, "take a screenshot", err))
		return r
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		m.errOf(nil, &r.Page, reason.New(reason.BrowserFailed, "", "Camofox's screenshot is not a PNG image."))
		return r
	}
	r.ScreenshotPath = m.saveScreenshot(png)
	r.Success, r.PNG = true, png
	return r
}

func (m *Manager) camoImages(ctx context.Context, task string) ImagesResult {
	r := ImagesResult{Images: []Image{}}
	_, release, ok := m.camoBegin(ctx, task, &r.Page)
	if !ok {
		return r
	}
	release()
	m.errOf(nil, &r.Page, reason.New(reason.BackendUnsupported, "", "browser_get_images is not available on Camofox; use browser_snapshot (images appear as img lines) or browser_vision."))
	return r
}

// camoDrop forgets key's tab (already gone on the server).
func (m *Manager) camoDrop(key string) {
	m.camo.mu.Lock()
	t, ok := m.camo.tabs[key]
	delete(m.camo.tabs, key)
	m.camo.mu.Unlock()
	if ok {
		m.bindings.DropIf(t.owner, key)
	}
}

// camoCloseTask closes the tabs a cleanup of key reaps (spec §B3) and
// returns their keys, sorted.
func (m *Manager) camoCloseTask(key string) []string {
	m.camo.mu.Lock()
	keys := make([]string, 0, len(m.camo.tabs))
	for k := range m.camo.tabs {
		keys = append(keys, k)
	}
	reap := sessionkey.CleanupKeys(key, keys)
	var ts []*camoTab
	for _, k := range reap {
		ts = append(ts, m.camo.tabs[k])
		delete(m.camo.tabs, k)
	}
	m.camo.mu.Unlock()
	for _, t := range ts {
		t.mu.Lock()
		t.closed = true
		if err := m.camoClose(t); err != nil {
			m.logger.Warn("Camofox tab close failed", "session", t.key, "err", urlsafe.Redact(err.Error()))
		}
		t.mu.Unlock()
		m.logger.Info("browser session closed", "session", t.key, "backend", "camofox")
	}
	m.bindings.DropAfterCleanup(key)
	sort.Strings(reap)
	return reap
}

// camoCloseAll closes every tab (Manager.Close).
func (m *Manager) camoCloseAll() {
	m.camo.mu.Lock()
	ts := m.camo.tabs
	m.camo.tabs = map[string]*camoTab{}
	m.camo.mu.Unlock()
	for _, t := range ts {
		t.mu.Lock()
		t.closed = true
		m.camoClose(t) //nolint:errcheck // best effort at shutdown
		t.mu.Unlock()
	}
}

// camoReapIdle is the janitor's pass over Camofox tabs (spec §B7): a tab idle
// longer than the inactivity timeout and not in a call is closed, one log
// record each, and the task's next call is session_expired. A failed close
// is retried on later ticks; the ForceReapAfter-th failure drops the tab.
func (m *Manager) camoReapIdle() {
	if m.camo == nil {
		return
	}
	idle := m.idleTimeout()
	now := time.Now()
	m.camo.mu.Lock()
	var reap []*camoTab
	for k, t := range m.camo.tabs {
		if now.Sub(t.lastUsed) > idle && t.mu.TryLock() {
			delete(m.camo.tabs, k)
			reap = append(reap, t)
		}
	}
	m.camo.mu.Unlock()
	for _, t := range reap {
		sat := now.Sub(t.lastUsed)
		m.life.mu.Lock()
		fails := m.life.fails[t.key]
		m.life.mu.Unlock()
		err := m.camoClose(t)
		if err != nil && fails+1 < ForceReapAfter {
			m.life.mu.Lock()
			m.life.fails[t.key] = fails + 1
			m.life.mu.Unlock()
			m.logger.Warn("browser session cleanup failed; retrying on the next tick", "session", t.key, "failures", fails+1, "err", urlsafe.Redact(err.Error()))
			m.camo.mu.Lock()
			if _, taken := m.camo.tabs[t.key]; !taken {
				m.camo.tabs[t.key] = t
			}
			m.camo.mu.Unlock()
			t.mu.Unlock()
			continue
		}
		t.closed = true
		m.bindings.DropIf(t.owner, t.key)
		m.life.mu.Lock()
		delete(m.life.fails, t.key)
		tb := tomb{key: t.key, idle: sat, at: now}
		m.life.tombs[t.key], m.life.tombs[t.owner] = tb, tb
		m.life.mu.Unlock()
		t.mu.Unlock()
		m.logger.Info("Cleaning up inactive session", "session", t.key, "idle_s", int(sat.Seconds()), "timeout_s", int(idle.Seconds()), "forced", err != nil, "backend", "camofox")
	}
}
