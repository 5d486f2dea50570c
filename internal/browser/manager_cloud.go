package browser

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// cloudState is the Manager's cloud provider selection (spec §B4), made once
// in New from browser.cloud_provider and the provider credentials.
type cloudState struct {
	sel    cloud.Selection
	selErr error // *cloud.UnknownProviderError: every bare-key session fails (strict selection)
}

// initCloud selects the cloud provider (spec §B4): provider API calls dial
// through the open guard (metadata refused; the provider endpoints are
// user-configured, like a CDP override).
func (m *Manager) initCloud(env map[string]string) []string {
	hc := m.gates.Open.Client(egress.ClientOptions{Timeout: 35 * time.Second})
	sel, err := cloud.Select(m.cfg.Browser.CloudProvider, m.cfg.Browser.CloudProviderSet,
		func(k string) string { return config.Lookup(env, k) }, hc)
	m.cloud = cloudState{sel: sel, selErr: err}
	return cloud.Warnings(sel, err, m.cdpOverride() != "")
}

// cloudApplies reports whether sessions of bare keys are created at the cloud
// provider: one is selected (or the selection is broken), and neither a CDP
// override nor Camofox takes precedence (spec §B4).
func (m *Manager) cloudApplies() bool {
	return (m.cloud.sel.Provider != nil || m.cloud.selErr != nil) && m.cdpOverride() == "" && m.camo == nil
}

// cloudSession creates key's session at the cloud provider (spec §B4 step 4)
// when one applies and key is not a ::local sidecar (those always run in the
// local Chromium, never at the provider). It returns (nil, nil, nil) when no
// provider applies; (s, nil, nil) on success; (nil, fb, nil) when the
// provider failed and the caller falls back to the local Chromium, marked
// with fb; and an error only for a strict selection error.
//
// Creation: provider.Create; the CDP URL, its /json/version discovery and
// the CDP WebSocket all pass the normal gates (connectCloud, attachCDP; a
// refusal falls back with the gate's code as FallbackCode); one tab in the provider browser's
// default context with no proxy of ours (the provider's network is not ours:
// the navigation gates are the egress control). Any failure after Create
// releases the provider session.
func (m *Manager) cloudSession(ctx context.Context, key string) (*Session, *BackendInfo, error) {
	if sessionkey.IsSidecar(key) || !m.cloudApplies() {
		return nil, nil, nil
	}
	if m.cloud.selErr != nil {
		return nil, nil, reason.Wrap(reason.UnknownCloudBackend, "", m.cloud.selErr.Error(), m.cloud.selErr)
	}
	p := m.cloud.sel.Provider
	fail := func(code reason.Code, why string) (*Session, *BackendInfo, error) {
		why = urlsafe.Redact(why)
		m.logger.Warn("cloud browser session failed; falling back to the local Chromium", "provider", p.Name(), "session", key, "why", why)
		return nil, cloud.Fallback(p.Name(), code, why), nil
	}
	if m.cloud.sel.Err != nil {
		return fail(reason.CloudNotConfigured, m.cloud.sel.Err.Error())
	}
	rec, err := p.Create(ctx, sessionkey.BareTask(key))
	if err != nil {
		return fail(reason.CloudFallback, "create session: "+err.Error())
	}
	cs := &cloud.Lease{Prov: p, Rec: rec, Log: m.logger}
	s, err := m.connectCloud(ctx, key, cs)
	if err != nil {
		cs.Release()
		code := reason.CloudFallback
		if rerr := reason.As(err); rerr != nil && rerr.Gate != "" {
			code = rerr.Code // the provider's CDP URL was refused by a gate
		}
		return fail(code, "connect over CDP: "+err.Error())
	}
	m.logger.Info("cloud browser session created", "provider", p.Name(), "session", key, "cloud_session_id", rec.ID)
	return s, nil, nil
}

// connectCloud connects to the provider browser of cs and opens the
// session's tab in it. The provider's connect URL is vendor data, not the
// user's choice: it is judged with the normal gates (private addresses
// refused unless the user allowed private URLs; metadata never), and so is
// every connection attachCDP makes for it.
func (m *Manager) connectCloud(ctx context.Context, key string, cs *cloud.Lease) (*Session, error) {
	conn, err := m.attachCDP(ctx, cs.Rec.CDPURL, m.gates.Guard(!m.gates.AllowPrivate), "the provider's CDP URL")
	if err != nil {
		return nil, err
	}
	active := m.gates.GuardActive(false, key)
	// The session keeps a proxy record (name, refusal log, stats) like every
	// session, but the provider's browser never dials it.
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: key, Guard: m.gates.Guard(active), Logger: m.logger})
	if err != nil {
		conn.Close()
		return nil, err
	}
	tab, err := conn.NewTab(ctx, backend.TabOptions{Unproxied: true, DialogPolicy: dialogPolicy(m.cfg), DialogTimeout: m.cfg.Browser.DialogTimeout, OnClose: func() {
		conn.Close()
		cs.Release()
	}})
	if err != nil {
		p.Close()
		conn.Close()
		return nil, err
	}
	return &Session{active: active, tab: tab, proxy: p, nextRef: 1, cloud: cs,
		frameK: map[backend.FrameID]int{}, frameOf: map[int]backend.FrameID{}, frameRef: map[int]int{}}, nil
}

// expireCloud drops key's cloud session when its provider expiry has passed
// (spec §B4 reuse rules), releasing it, and returns why ("" when nothing
// expired). With tombstone the task's next non-navigation call gets
// session_expired (the janitor's rule, spec §B7: never a silent blank
// browser); a navigation clears it and creates a fresh session. A session in
// a call is left for the next look.
func (m *Manager) expireCloud(key string, tombstone bool) string {
	now := time.Now()
	m.mu.Lock()
	s, ok := m.sessions[key]
	var why string
	if ok && s.cloud != nil {
		why, _, _ = s.cloud.Expiry(now)
	}
	if why == "" || !s.mu.TryLock() {
		// Not expired, or a call is running on it: that call finishes first
		// and the next look expires it.
		m.mu.Unlock()
		return ""
	}
	delete(m.sessions, key)
	m.mu.Unlock()
	_, exp, _ := s.cloud.Expiry(now)
	m.logger.Info("cloud browser session expired", "provider", s.cloud.Prov.Name(), "session", key, "expires_at", exp)
	s.tab.Close() // releases the provider session (OnClose)
	s.proxy.Close()
	s.reaped = true
	s.mu.Unlock()
	m.bindings.DropIf(s.Owner, key)
	if tombstone {
		m.life.mu.Lock()
		tb := tomb{key: key, at: now, why: why}
		m.life.tombs[key], m.life.tombs[s.Owner] = tb, tb
		m.life.mu.Unlock()
	}
	return why
}

// expireCloudAll runs expireCloud (with tombstones) on every session; the
// janitor calls it each tick.
func (m *Manager) expireCloudAll() {
	for _, k := range m.Keys() {
		m.expireCloud(k, true)
	}
}

// backendInfo is the provenance a navigation result carries for s; a cloud
// session's first navigation also lists its provider features.
func (m *Manager) backendInfo(s *Session) BackendInfo {
	switch {
	case s.fallback != nil:
		return *s.fallback
	case s.cloud != nil:
		return s.cloud.Info(s.navs == 0)
	case m.cdpOverride() != "" && !sessionkey.IsSidecar(s.Key):
		return BackendInfo{Backend: "cdp"}
	case s.node != "":
		return BackendInfo{Backend: "node", BrowserNode: s.node}
	}
	return BackendInfo{Backend: "local"}
}

// initBackends reads the backend selection once (spec §B4, §B11): Camofox
// mode, else the cloud provider; it sets the routing facts of spec §B3.
func (m *Manager) initBackends(o Options) []string {
	env := o.Env
	if env == nil && o.Home != "" {
		env, _, _ = config.LoadEnv(o.Home) // its warnings are the web tools' and doctor's to report
	}
	warns := m.initCamofox(env)
	if m.camo == nil {
		warns = append(warns, m.initCloud(env)...)
	}
	m.route.Camofox = m.camo != nil
	m.route.CloudProvider = m.cloudApplies()
	return warns
}
