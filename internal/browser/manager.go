// Package browser is Gatehouse's browser toolset: the Manager that owns the
// sessions (spec §B3 routing through sessionkey), the navigation and page
// gates (§B8.1–§B8.2) run once for every backend, the accessibility snapshot
// with document-scoped refs (§B9, text side in snapshot), the eval policy
// (§B8.3, scanner in evalpolicy), and the tools of §B2 as plain Go functions
// (input struct → result struct). Chromium itself lives in browser/backend,
// and every byte it sends goes through an egress proxy session; Camofox is
// driven through browser/camofoxmode.
package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/browser/lifespec"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/pnanav"
	"github.com/gatehouse-dev/gatehouse/internal/browser/realprofile"
	"github.com/gatehouse-dev/gatehouse/internal/browser/renderstep"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/browser/standby"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/render"
	"github.com/gatehouse-dev/gatehouse/internal/safetext"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

//go:embed page.js
var pageJSSource string

// Options configures New.
type Options struct {
	// Config is the loaded configuration; nil means config.Default().
	Config *config.Config
	// Home is GATEHOUSE_HOME: snapshots are stored under <Home>/cache/web,
	// screenshots under <Home>/cache/screenshots.
	Home string
	// Resolver replaces the system resolver for the gates, the privacy
	// oracle and every session's egress proxy (tests); nil = system DNS.
	Resolver egress.Resolver
	// AllowAddrPorts lets the guards reach exactly these private IP:port pairs
	// (tests' loopback servers, with a strict guard); set from Go only.
	AllowAddrPorts []netip.AddrPort
	// Logger receives session and refusal records; nil discards.
	Logger *slog.Logger
	// StorePathMap translates host paths into agent-visible ones (see
	// truncate.Store.PathMap); nil shows host paths.
	StorePathMap map[string]string
	// StoreShared, when set, keeps truncated snapshots in the shared store
	// (Redis, GATEHOUSE_REDIS_URL) so web_read on any replica reads them;
	// nil writes them under <Home>/cache/web (truncate.Store.Shared).
	StoreShared truncate.PageStore
	// JanitorTick is how often idle sessions are reaped; 0 means 30 s
	// (spec §B7).
	JanitorTick time.Duration
	// Lifecycle shortens the janitor's and reaper's intervals (tests).
	Lifecycle LifecycleOptions
	// Env is the parsed <Home>/.env (config.LoadEnv) that cloud provider and
	// Camofox credentials are read from before the process environment; nil
	// loads <Home>/.env (manager_cloud.go).
	Env map[string]string
	// RealProfile says how browser.use_real_profile finds its source
	// (profile.go); zero = xdg-settings and ~/.config.
	RealProfile realprofile.Options
	// DownloadCap is the per-download size cap in bytes (popups.go); 0 =
	// backend.DefaultDownloadCap (100 MiB).
	DownloadCap int64
	// Nodes places new sessions on registered browser nodes (nodes.go,
	// issue 19); nil keeps every session in this process's Chromium.
	Nodes *NodeOptions
}

// Manager owns the local Chromium, every session of every task, the
// last-active bindings and the janitor. Tool methods are safe for concurrent
// use; calls on one session are serialised.
type Manager struct {
	cfg      *config.Config
	home     string
	logger   *slog.Logger
	gates    *Gates
	resolver egress.Resolver
	route    sessionkey.Route
	timeouts lifespec.Timeouts
	store    truncate.Store

	execPath string
	execErr  error

	// procMu serialises starting and stopping the Chromium process: an
	// idle stop (lifecycle.go) holds it until the old process and its
	// leftovers are gone, so a launch never overlaps the old browser's
	// cleanup (which kills processes carrying our profile marker).
	// Order: procMu before mu.
	procMu   sync.Mutex
	mu       sync.Mutex
	local    *backend.Local
	defProxy *egress.ProxySession
	sessions map[string]*Session
	spares   []*Session // pre-started sessions for the next new keys (spares.go)
	spare    spareState // the pool's makers, waiters and demand (spares.go)
	closed   bool
	stop     chan struct{}
	wg       sync.WaitGroup

	bindings sessionkey.Bindings

	rend renderstep.Renderer // web_extract's render step
	life lifecycle           // janitor state: reaped, suspect, failed cleanups (lifecycle.go)

	cloud cloudState     // cloud provider selection (manager_cloud.go)
	camo  *camofoxDriver // Camofox mode, else nil (camofox.go)
	rp    realProfile    // the real-profile copy-browser (profile.go)

	downloadCap int64 // Options.DownloadCap

	nodes *node.Pool // browser nodes (nodes.go), nil without Options.Nodes

	ht       handle.Table        // in-process session handles (handles.go)
	recs     *handle.Store       // session records in Redis (records.go), nil without nodes
	attached map[string]*Session // other replicas' record sessions served here, by handle (under mu)
	standby  *standby.Duty       // attaching ahead to other replicas' new record sessions (standby.go); nil: none

	// navTarget is navigateTarget (snapwalk.go); tests shorten it.
	navTarget time.Duration
}

// Session is one browser session: its key, owner task, tab (own
// BrowserContext) and egress proxy listener.
type Session struct {
	Key, Owner string
	active     bool // SSRF private-address guard on (spec §B8.2)
	tab        *backend.Tab
	proxy      sessionProxy // in-process, or a browser node's (nodes.go)

	mu       sync.Mutex  // one call at a time
	lastUsed time.Time   // under Manager.mu
	suspect  atomic.Bool // a command timed out: recycle at the next use (spec §B6)
	navs     int         // successful navigations
	nextRef  int
	lastSnap string
	lastDoc  int64
	lastCut  bool // lastSnap lists only part of the page (snapwalk.go)
	// lastTitle is the title of the page at lastSnap: a delta's result
	// omits a title that did not change (afterAction). lastWhole: the
	// agent was shown lastSnap whole (no find), so a navigation's snapshot
	// may fold the chrome it repeats (snapshot.Collapse).
	lastTitle string
	lastWhole bool

	// Frames of another origin (same process, or another site's process
	// through its own CDP target) are snapshotted in their own isolated
	// world; their refs are "f<k>e<n>" (k never reused in the tab).
	frameK   map[backend.FrameID]int
	frameOf  map[int]backend.FrameID
	frameRef map[int]int // next ref number per frame

	reaped   bool   // closed by the janitor (under mu)
	recycled string // set on a fresh session that replaced a suspect one (lifecycle.go)

	cloud       *cloud.Lease // a cloud provider's session, else nil (manager_cloud.go)
	fallback    *BackendInfo // the cloud provider failed and the local Chromium serves it
	realProfile bool         // a tab of the real-profile copy browser (profile.go)
	node        string       // the browser node serving the session (nodes.go), else ""

	// A session placed on a node with shared state is a handle.Record in
	// Redis (records.go): handle, principal and rec (its last-known
	// record); recFresh: not written yet; attached: another replica made
	// it and this one serves it (Manager.attached).
	handle    string
	principal string
	rec       *handle.Record
	recFresh  bool
	attached  bool
	dialog    *node.Dialog // the dialog that blocks the tab, while tab is nil (records.go attachTo)
}

// ProxyStats returns the session's egress counters.
func (s *Session) ProxyStats() egress.ProxyStats { return s.proxy.Stats() }

// New builds a Manager. Nothing is started until the first tool call. The
// Chromium binary is looked up now (backend.FindBrowser: browser.executable_path,
// CHROME_PATH, headless the headless shell, /usr/lib/chromium/chromium, PATH);
// Available reports the outcome.
// Warnings name dropped config entries.
func New(o Options) (*Manager, []string) {
	cfg := o.Config
	if cfg == nil {
		cfg = config.Default()
	}
	// The browser's logs (proxy refusals, launch failures, page URLs) pass
	// through the secret redaction like every Gatehouse log.
	lg := gate.RedactLogger(o.Logger)
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	gates, warns := NewGates(cfg, o.Home, o.Resolver, o.AllowAddrPorts)
	m := &Manager{
		cfg: cfg, home: o.Home, logger: lg, gates: gates, resolver: o.Resolver,
		route:    sessionkey.Route{AutoLocal: cfg.Browser.AutoLocalForPrivateURLs, CDPOverride: CDPOverride(cfg) != ""},
		timeouts: lifespec.CommandTimeouts(int(cfg.Browser.CommandTimeout.Seconds())),
		store:    truncate.Store{Dir: filepath.Join(o.Home, "cache", "web"), PathMap: o.StorePathMap, Shared: o.StoreShared},
		sessions: map[string]*Session{},
		stop:     make(chan struct{}),
	}
	warns = append(warns, m.initBackends(o)...) // cloud provider, Camofox (manager_cloud.go)
	m.execPath, m.execErr = backend.FindBrowser(cfg.Browser.ExecutablePath, cfg.Browser.Headed)
	m.rp.opts = o.RealProfile
	m.downloadCap = o.DownloadCap
	if o.Nodes != nil && o.Nodes.Registry != nil {
		m.nodes = node.NewPool(o.Nodes.Registry, o.Nodes.Allow, o.Nodes.Token, o.Resolver, lg)
		m.recs = handle.NewStore(o.Nodes.Registry.Client(), lg)
		m.nodes.HoldSpares(node.HeldOptions{TabOptions: m.nodeTabOptions, Floor: o.Nodes.Spares})
	}
	m.attached = map[string]*Session{}
	m.navTarget = navigateTarget
	m.rend.Browser, m.rend.Policy, m.rend.Logger = m.ensureBrowser, gates.Policy, lg
	m.life.init(o.Lifecycle)
	tick := o.Lifecycle.Tick
	if tick <= 0 {
		tick = o.JanitorTick
	}
	if tick <= 0 {
		tick = lifespec.JanitorTick
	}
	m.wg.Add(1)
	go m.runJanitor(tick)
	m.startStandby() // standby.go
	return m, warns
}

// Available returns nil when Chromium was found, else the chromium_missing
// error naming the install hint; the browser tools are not listed then.
func (m *Manager) Available() error {
	if m.cdpOverride() != "" || m.camo != nil || m.cloud.sel.Provider != nil || m.nodes != nil {
		return nil // a CDP override, Camofox, a cloud provider or browser nodes need no local Chromium
	}
	return m.execErr
}

// Gates returns the gates the Manager decides with.
func (m *Manager) Gates() *Gates { return m.gates }

// Bindings returns the last-active bindings (for diagnostics and tests).
func (m *Manager) Bindings() map[string]string { return m.bindings.Snapshot() }

// Session returns the live session for key, if any.
func (m *Manager) Session(key string) (*Session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[key]
	return s, ok
}

// Keys returns the live session keys, sorted.
func (m *Manager) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.sessions))
	for k := range m.sessions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BrowserPID returns the Chromium process id, or 0 when none runs.
func (m *Manager) BrowserPID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.local == nil {
		return 0
	}
	return m.local.PID()
}

func (m *Manager) ensureBrowser(ctx context.Context) (*backend.Local, error) {
	cdpRaw := m.cdpOverride()
	if m.execErr != nil && cdpRaw == "" {
		return nil, m.execErr
	}
	m.procMu.Lock()
	defer m.procMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, reason.New(reason.BrowserFailed, "", "The browser service is shut down.")
	}
	if m.local != nil && m.local.Alive() {
		return m.local, nil
	}
	if m.local != nil {
		// The browser died: every session in it is gone.
		for k, s := range m.sessions {
			if s.realProfile {
				continue // lives in the copy-browser (profile.go)
			}
			s.proxy.Close()
			delete(m.sessions, k)
		}
		for _, sp := range m.spares {
			sp.proxy.Close()
		}
		m.spares = nil
		m.local.Close()
		m.local = nil
	}
	if m.defProxy == nil {
		// The default BrowserContext gets a proxy that refuses everything: no
		// tab of ours uses it, and nothing in it may reach the network.
		p, err := egress.NewProxySession(egress.ProxyOptions{
			// Chromium's own background requests land here; they are refused and
			// counted, not logged.
			Name: "(default context)", Guard: m.gates.Strict,
			Decider: egress.HostDeciderFunc(func(string, string, uint16) *reason.Error {
				return reason.New(reason.PolicyBlocked, reason.GatePolicy, "Blocked: the default browser context has no network access.")
			}),
		})
		if err != nil {
			return nil, reason.Wrap(reason.BrowserFailed, "", "Could not start the egress proxy.", err)
		}
		m.defProxy = p
	}
	var l *backend.Local
	var err error
	if cdpRaw != "" {
		l, err = m.connectCDP(ctx, cdpRaw)
	} else {
		l, err = backend.Launch(ctx, backend.Options{ExecPath: m.execPath, DefaultProxy: m.defProxy.URL(), Headed: m.cfg.Browser.Headed, Logger: m.logger})
	}
	if err != nil {
		return nil, err
	}
	m.local = l
	return l, nil
}

// session returns the live session for key, creating it (owner task) when
// absent or unhealthy (a crashed tab is replaced, spec §B4 reuse rules).
func (m *Manager) session(ctx context.Context, key, task string) (*Session, error) {
	m.life.creating.Add(1)
	defer m.life.creating.Add(-1)
	if !m.cfg.Browser.UseRealProfile {
		m.stopRealProfile() // consent read on every call: off deletes the copy (spec §B10)
	}
	recycled := ""
	if old, ok := m.Session(key); ok && old.suspect.Load() {
		recycled = recycledNote("a command of the previous session timed out (browser.command_timeout)")
	} else if why := m.expireCloud(key, false); why != "" {
		recycled = recycledNote(why)
	}
	s, err := m.sessionNoRecycle(ctx, key, task)
	if err == nil && recycled != "" {
		s.recycled = recycled
	}
	return s, err
}

func (m *Manager) sessionNoRecycle(ctx context.Context, key, task string) (*Session, error) {
	m.mu.Lock()
	if s, ok := m.sessions[key]; ok {
		if s.suspect.Load() {
			// A command of this session timed out (a hung renderer): the next
			// use pays for the teardown and gets a fresh session (spec §B6).
			delete(m.sessions, key)
			m.mu.Unlock()
			m.logger.Info("Recycling suspect browser session", "session", key, "why", "command timeout")
			s.tab.Close()
			s.proxy.Close()
			return m.sessionNoRecycle(ctx, key, task)
		}
		if s.tab.Healthy() && s.realProfile == m.wantRealProfile(key) {
			s.lastUsed = time.Now()
			m.mu.Unlock()
			return s, nil
		}
		delete(m.sessions, key)
		m.mu.Unlock()
		m.logger.Info("browser session replaced", "session", key, "why", "tab crashed or closed")
		s.tab.Close()
		s.proxy.Close()
	} else {
		m.mu.Unlock()
	}
	s, fb, err := m.cloudSession(ctx, key) // spec §B4 step 4 (manager_cloud.go)
	if err != nil {
		return nil, err
	}
	rp := s == nil && m.wantRealProfile(key)
	var l *backend.Local
	if s == nil {
		if s, l, err = m.localSession(ctx, key, rp); err != nil {
			return nil, cloud.FallbackFailed(fb, err)
		}
		s.fallback = fb
	}
	if rp {
		if err := m.seedRealProfile(ctx, l, s); err != nil {
			s.tab.Close()
			s.proxy.Close()
			return nil, err
		}
	}
	s.Key, s.Owner, s.lastUsed = key, sessionkey.BareTask(key), time.Now()
	s.proxy.SetName(key)
	tab, p := s.tab, s.proxy
	m.mu.Lock()
	if old, ok := m.sessions[key]; ok && !m.closed {
		// Another call created it meanwhile: the stored one wins (spec §B4).
		old.lastUsed = time.Now()
		m.mu.Unlock()
		tab.Close()
		p.Close()
		return old, nil
	}
	if m.closed {
		m.mu.Unlock()
		tab.Close()
		p.Close()
		return nil, reason.New(reason.BrowserFailed, "", "The browser service is shut down.")
	}
	m.sessions[key] = s
	m.mu.Unlock()
	m.logger.Info("browser session created", "session", key, "owner", s.Owner)
	return s, nil
}

// localSession opens key's session in the local Chromium (or the CDP
// override's browser), taking a spare when it fits; with realProfile in the
// real-profile copy-browser (profile.go), which has no spares.
func (m *Manager) localSession(ctx context.Context, key string, realProfile bool) (*Session, *backend.Local, error) {
	var l *backend.Local
	var err error
	if realProfile {
		l, err = m.ensureRealProfile(ctx)
	} else if m.nodes == nil {
		l, err = m.ensureBrowser(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	active := m.gates.GuardActive(m.localBackend(), key)
	var s *Session
	if !realProfile && m.cdpOverride() == "" {
		// Registered browser nodes take every new session (nodes.go).
		// A node session is remote, like a cloud provider's (spec §B8.2): the
		// SSRF private-address guard applies unless security.allow_private_urls,
		// so a page never reaches the node host's loopback or network.
		if s, placed, err := m.placeOnNode(ctx, key, m.gates.GuardActive(false, key)); placed || err != nil {
			return s, nil, err
		}
	}
	if l == nil { // nodes configured but none registered: the embedded browser
		if l, err = m.ensureBrowser(ctx); err != nil {
			return nil, nil, err
		}
	}
	if !realProfile {
		s = m.takeSpare(ctx, active)
	}
	if s == nil {
		if s, err = m.newSession(ctx, l, active); err != nil {
			return nil, nil, err
		}
	}
	return s, l, nil
}

// newSession opens a BrowserContext with its own egress proxy listener and
// proxy credential (egress.ProxyOptions.Authenticate).
func (m *Manager) newSession(ctx context.Context, l *backend.Local, active bool) (*Session, error) {
	// The port attributes the session's requests; the credential makes sure
	// only this session's BrowserContext can use that port.
	// Private Network Access (pna.go) applies unless private URLs are allowed.
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "(starting)", Guard: m.gates.Guard(active), Logger: m.logger, Authenticate: true,
		AllowPrivateFromPublic: m.gates.AllowPrivate})
	if err != nil {
		return nil, reason.Wrap(reason.BrowserFailed, "", "Could not start the session's egress proxy.", err)
	}
	user, pass := p.Credentials()
	tab, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), ProxyUser: user, ProxyPass: pass, ProxyProbeURL: egress.ProxyAuthProbeURL,
		OnTopLevel:   pnanav.Reporter(p),
		DialogPolicy: dialogPolicy(m.cfg), DialogTimeout: m.cfg.Browser.DialogTimeout,
		DownloadDir: m.downloadDir(), DownloadCap: m.downloadCap})
	if err != nil {
		p.Close()
		return nil, err
	}
	return &Session{active: active, tab: tab, proxy: p, nextRef: 1,
		frameK: map[backend.FrameID]int{}, frameOf: map[int]backend.FrameID{}, frameRef: map[int]int{}}, nil
}

func (m *Manager) lookupOwner(key string) (sessionkey.Owner, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[key]
	if !ok || (s.tab != nil && !s.tab.Healthy()) { // nil: a record session blocked by a dialog
		return sessionkey.Owner{}, false
	}
	return sessionkey.Owner{SessionKey: s.Key, OwnerTaskID: s.Owner}, true
}

// CloseTask releases the sessions of key now (spec §B3 cleanup): a bare task id
// closes the task's session and its ::local sidecar, a sidecar key only
// itself; the last-active binding follows DropAfterCleanup. It returns the
// keys closed.
func (m *Manager) CloseTask(key string) []string {
	return m.driver().closeTask(sessionkey.TaskID(key))
}

// closeLocalTask is CloseTask on the local driver.
func (m *Manager) closeLocalTask(key string) []string {
	m.mu.Lock()
	active := make([]string, 0, len(m.sessions))
	for k := range m.sessions {
		active = append(active, k)
	}
	reap := sessionkey.CleanupKeys(key, active)
	var ss []*Session
	for _, k := range reap {
		ss = append(ss, m.sessions[k])
		delete(m.sessions, k)
	}
	m.mu.Unlock()
	for _, s := range ss {
		s.mu.Lock()
		if s.rec != nil {
			m.endRecord(s) // records.go
		} else {
			s.tab.Close()
			s.proxy.Close()
		}
		s.mu.Unlock()
		m.dropHandle(s.Key, nil)
		m.logger.Info("browser session closed", "session", s.Key)
	}
	m.bindings.DropAfterCleanup(key)
	sort.Strings(reap)
	return reap
}

func (m *Manager) closeOne(key string) {
	m.mu.Lock()
	s, ok := m.sessions[key]
	delete(m.sessions, key)
	m.mu.Unlock()
	if ok {
		if s.rec != nil {
			m.detach(s) // its next call finds the record lost (records.go)
		} else {
			s.tab.Close()
			s.proxy.Close()
		}
		m.bindings.DropIf(s.Owner, key)
	}
}

// Close closes every session and the browser (no Chromium process carrying
// the profile marker survives), and stops the janitor. Idempotent; returns
// the first cleanup error.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.stop)
	if m.camo != nil {
		defer m.camo.closeAll() // camofox.go
	}
	ss := m.sessions
	m.sessions = map[string]*Session{}
	l := m.local
	m.local = nil
	dp := m.defProxy
	m.mu.Unlock()
	m.wg.Wait()
	m.rend.Close()
	m.mu.Lock()
	for i, sp := range m.spares {
		ss[fmt.Sprintf("\x00spare%d", i)] = sp
	}
	m.spares = nil
	m.mu.Unlock()
	m.mu.Lock()
	for h, s := range m.attached {
		ss["\x00attached"+h] = s
	}
	m.attached = map[string]*Session{}
	m.mu.Unlock()
	for _, s := range ss {
		if s.rec != nil {
			m.detach(s) // it outlives this replica (records.go)
			continue
		}
		s.tab.Close()
		s.proxy.Close()
	}
	var err error
	if l != nil {
		err = l.Close()
	}
	if dp != nil {
		dp.Close()
	}
	m.stopRealProfile()
	if m.nodes != nil {
		m.nodes.Close()
	}
	return err
}

// privateFn is the routing oracle bound to the Manager's resolver.
func (m *Manager) privateFn(ctx context.Context) func(string) bool {
	if !m.route.CloudProvider {
		return nil
	}
	var r egress.Resolver = net.DefaultResolver
	if m.resolver != nil {
		r = m.resolver
	}
	ranges, _ := urlsafe.ParseFakeIPRanges(m.cfg.Security.FakeIPRanges)
	return func(u string) bool { return sessionkey.URLIsPrivate(ctx, u, r, ranges) }
}

// callJS runs op of page.js in the session's isolated world and decodes the
// result into out.
func (s *Session) callJS(ctx context.Context, op string, arg any, out any) error {
	raw, err := s.tab.CallIsolated(ctx, pageJS(), op, arg)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return reason.Wrap(reason.BrowserFailed, "", "The page script returned an unexpected value.", err)
	}
	return nil
}

type snapData struct {
	Snapshot string             `json:"snapshot"`
	Refs     int                `json:"refs"`
	Next     int                `json:"next"`
	Title    string             `json:"title"`
	URL      string             `json:"url"`
	Walk     *snapshot.WalkData `json:"walk"` // how far the walk went (snapwalk.go)
	rawURL   string             // URL before redaction, for the gates (showDocument)
}

// Coverage returns how much of the page the snapshot covers (snapwalk.go).
func (d snapData) Coverage() snapshot.Coverage { return d.Walk.Coverage(d.Refs) }

// snapshot takes an in-page accessibility snapshot and advances the tab-wide
// ref counter; it records the text for deltas.
func (s *Session) snapshot(ctx context.Context, full bool) (snapData, error) {
	doc := s.tab.Activity().DocSeq
	var d snapData
	budget, _ := snapshot.BudgetFor(ctx, time.Time{}, snapshot.NodeBudget)
	end := time.Now().Add(time.Duration(budget.MS) * time.Millisecond)
	if err := s.callJS(ctx, "snapshot", map[string]any{"full": full, "base": s.nextRef, "budget": budget}, &d); err != nil {
		return d, err
	}
	if d.Walk == nil {
		d.Walk = &snapshot.WalkData{}
	}
	s.nextRef = max(s.nextRef, d.Next)
	d.rawURL = d.URL
	// safetext: a page's control characters (ESC, BEL, C1) never reach a
	// terminal or a model through a snapshot.
	d.Snapshot, d.Title, d.URL = redactText(safetext.Clean(d.Snapshot)), redactText(safetext.Line(d.Title)), redactText(safetext.Escape(d.URL))
	if strings.Contains(d.Snapshot, crossOriginMarker) {
		s.expandFrames(ctx, &d, full, end)
	}
	if !full {
		s.lastSnap, s.lastDoc, s.lastCut, s.lastTitle = d.Snapshot, doc, d.Coverage().SnapshotTruncated, d.Title
	}
	return d, nil
}

// crossOriginMarker is what page.js appends to an iframe it cannot enter.
const crossOriginMarker = " (cross-origin: not expanded)"

type frameRefData struct {
	Ref  string  `json:"ref"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	Next int     `json:"next"`
}

// expandFrames snapshots each cross-origin child frame of the main frame in
// its own isolated world and splices its lines under its <iframe> line: a
// frame of the same site in the page's process, a frame of another site (an
// out-of-process iframe under site isolation) through a CDP session attached
// to its target (backend.Tab.CallIsolatedFrame). A frame that cannot be
// entered (gone, or its target not attachable) keeps the marker.
//
// The frames share the walk's budget, which ends at end: a frame met when
// it is spent keeps the marker.
func (s *Session) expandFrames(ctx context.Context, d *snapData, full bool, end time.Time) {
	frames, err := s.tab.Frames(ctx)
	if err != nil {
		return
	}
	lines := strings.Split(d.Snapshot, "\n")
	for _, f := range frames {
		if f.ParentID != s.tab.MainFrame() {
			continue
		}
		var own frameRefData
		raw, err := s.tab.CallOnFrameOwner(ctx, f.ID, "", pageJS(), "frameref", nil)
		if err != nil || json.Unmarshal(raw, &own) != nil || own.Ref == "" {
			continue
		}
		s.nextRef = max(s.nextRef, own.Next)
		at := -1
		for i, l := range lines {
			if strings.Contains(l, "[ref="+own.Ref+"]") && strings.HasSuffix(l, crossOriginMarker) {
				at = i
				break
			}
		}
		if at < 0 {
			continue
		}
		k, ok := s.frameK[f.ID]
		if !ok {
			k = len(s.frameOf) + 1
			s.frameK[f.ID], s.frameOf[k] = k, f.ID
			s.frameRef[k] = 1
		}
		budget, ok := snapshot.BudgetFor(ctx, end, snapshot.NodeBudget-d.Walk.Elements)
		if !ok {
			if d.Walk.Stopped == "" {
				d.Walk.Stopped = "time"
				if d.Walk.Elements >= snapshot.NodeBudget {
					d.Walk.Stopped = "nodes"
				}
			}
			break
		}
		var fd snapData
		raw, err = s.tab.CallIsolatedFrame(ctx, f.ID, pageJS(), "snapshot", map[string]any{"full": full, "base": s.frameRef[k], "prefix": fmt.Sprintf("f%de", k), "budget": budget})
		if err != nil || json.Unmarshal(raw, &fd) != nil {
			continue // gone, or its target could not be attached
		}
		d.Walk.Merge(fd.Walk)
		s.frameRef[k] = max(s.frameRef[k], fd.Next)
		indent := strings.Repeat(" ", len(lines[at])-len(strings.TrimLeft(lines[at], " "))+2)
		var sub []string
		for _, l := range strings.Split(fd.Snapshot, "\n") {
			if l != "" {
				sub = append(sub, indent+l)
			}
		}
		lines[at] = strings.TrimSuffix(lines[at], crossOriginMarker)
		if len(sub) > 0 {
			lines[at] += ":"
		}
		lines = append(lines[:at+1], append(sub, lines[at+1:]...)...)
		d.Refs += fd.Refs
	}
	d.Snapshot = strings.Join(lines, "\n")
}

var frameRefRe = lazyregexp.New(`^f(\d+)e\d+$`)

// callRef runs op of page.js for ref in the world that owns it: the main
// frame's, or a cross-origin frame's (then dx, dy are the top-viewport offset
// of that frame's viewport, to add to coordinates it returns). An unknown frame
// is stale.
func (s *Session) callRef(ctx context.Context, ref, op string, arg map[string]any, out any) (dx, dy float64, stale bool, err error) {
	id := snapshot.RefID(ref)
	arg["ref"] = id
	m := frameRefRe.FindStringSubmatch(id)
	if m == nil {
		return 0, 0, false, s.callJS(ctx, op, arg, out)
	}
	k, _ := strconv.Atoi(m[1])
	fid, ok := s.frameOf[k]
	if !ok {
		return 0, 0, true, nil
	}
	var own frameRefData
	raw, err := s.tab.CallOnFrameOwner(ctx, fid, "", pageJS(), "frameref", nil)
	if err != nil || json.Unmarshal(raw, &own) != nil {
		return 0, 0, true, nil // the frame is gone
	}
	raw, err = s.tab.CallIsolatedFrame(ctx, fid, pageJS(), op, arg)
	if err != nil {
		return 0, 0, true, nil
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return 0, 0, false, reason.Wrap(reason.BrowserFailed, "", "The page script returned an unexpected value.", err)
		}
	}
	return own.X, own.Y, false, nil
}

// render applies the snapshot threshold (storing the full text when cut).
// The truncation note names the stored file by its agent-visible path
// (web.agent_visible_paths), or by its store name when ctx says the caller
// cannot see this disk (WithStoreNames: MCP), as web_extract's footer does.
func (m *Manager) render(ctx context.Context, text string) (out string, truncated bool, stored string) {
	return m.renderAt(ctx, text, snapshot.Threshold(m.cfg.Browser.SnapshotThreshold))
}

// renderAt is render at threshold th chars.
func (m *Manager) renderAt(ctx context.Context, text string, th int) (out string, truncated bool, stored string) {
	if len(text) <= th { // bytes ≥ chars: a cheap pre-check
		return text, false, ""
	}
	hp, err := snapshot.SaveIn(m.store.For(ctx), text)
	if err == nil {
		stored = m.store.AgentPath(hp)
		if storeNames(ctx) {
			stored = filepath.Base(hp)
		}
	}
	out, tr := snapshot.Truncate(text, th, stored)
	return out, tr.Truncated, stored
}

// errOf turns err into the result's error fields, dropping a crashed session.
// An error that is not a *reason.Error goes through backend.Failure, so no
// protocol text reaches the result; its cause is logged at debug level.
func (m *Manager) errOf(s *Session, p *Page, err error) {
	rerr := reason.As(backend.Failure("A browser command", err)) // never the protocol's own text
	if cause := errors.Unwrap(rerr); cause != nil && (rerr.Code == reason.BrowserFailed || rerr.Code == reason.PageNavigated) {
		m.logger.Debug("browser command failed", "reason", rerr.Code, "err", urlsafe.Redact(cause.Error()))
	}
	p.Success = false
	p.Error = rerr.Message
	p.Reason = rerr.Code
	if rerr.Code == reason.BrowserCapacity {
		p.RetryAfterS = int(node.CapacityRetry / time.Second)
	}
	var ra handle.RetryAfter
	if errors.As(err, &ra) {
		p.RetryAfterS = ra.RetryAfterS() // session_busy (handle.Busy)
	}
	if s != nil {
		p.PendingDialogs = pendingDialogs(s)
	}
	if s != nil && rerr.Code == reason.BrowserFailed && !s.attached && s.tab != nil && !s.tab.Healthy() {
		m.closeOne(s.Key)
	}
	if s != nil && rerr.Code == reason.CommandTimeout && !errors.Is(err, backend.ErrScriptStopped) {
		s.suspect.Store(true) // cheap and lock-free; the next use recycles it
	}
}

type storeNamesKey struct{}

// WithStoreNames returns ctx marked so that a truncated snapshot's note names
// the stored file by its store name (browser-snapshot-<hex>.txt, which
// web_read takes) instead of a path on this host: for clients that cannot
// see the server's disk (MCP), as web_extract's footer does there.
func WithStoreNames(ctx context.Context) context.Context {
	return context.WithValue(ctx, storeNamesKey{}, true)
}

// storeNames reports whether ctx was marked by WithStoreNames.
func storeNames(ctx context.Context) bool {
	v, _ := ctx.Value(storeNamesKey{}).(bool)
	return v
}

var _ render.Renderer = (*Manager)(nil)

// Render is web_extract's render step (render.Renderer) in the Manager's
// local Chromium: see renderstep.Renderer.Render.
func (m *Manager) Render(ctx context.Context, rawURL string, guard *egress.Guard, fetched *render.Fetched) (render.Rendered, error) {
	// The janitor stops the browser once no browser session is left
	// (stopIdleBrowser); a render is not a session, so it counts itself,
	// or an extract-only agent's render could lose its tab mid-way.
	m.life.rendering.Add(1)
	defer m.life.rendering.Add(-1)
	return m.rend.Render(ctx, rawURL, guard, fetched)
}
