package browser

import (
	"context"
	"net/url"
	"os"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// CDPOverride is the raw CDP override of spec §B12: BROWSER_CDP_URL, else
// browser.cdp_url; "" when none. Gates use the raw value (no network).
func CDPOverride(cfg *config.Config) string {
	if v := strings.TrimSpace(os.Getenv("BROWSER_CDP_URL")); v != "" {
		return v
	}
	return strings.TrimSpace(cfg.Browser.CDPURL)
}

func (m *Manager) cdpOverride() string { return CDPOverride(m.cfg) }

// localBackend reports whether bare-key sessions run in a Chromium
// Gatehouse launched on this host (spec §B8.1: a CDP override is never local,
// nor is a setup with a cloud provider, so their sessions have the SSRF guard
// on; Camofox is local only when its server is on loopback, camofox.go).
func (m *Manager) localBackend() bool {
	if m.camo != nil {
		return m.camo.local
	}
	return m.cdpOverride() == "" && !m.cloudApplies()
}

// connectCDP attaches to the CDP override: the override's host passes the
// egress decision first (metadata floor and website policy; private hosts
// are allowed, a CDP browser usually listens on loopback), then
// /json/version discovery through an egress client, then CDP. Sessions keep
// their per-context egress proxy, so a CDP browser on this host still sends
// every request through it; a browser on another host cannot reach that
// loopback proxy and its requests fail closed.
func (m *Manager) connectCDP(ctx context.Context, raw string) (*backend.Local, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, reason.Newf(reason.SessionCreateFailed, "", "The CDP override %q is not a URL (set BROWSER_CDP_URL or browser.cdp_url to ws://host:port/devtools/browser/… or http://host:port).", raw)
	}
	if rerr := m.gates.JudgeStatic("http://"+u.Host+"/", false); rerr != nil {
		return nil, reason.Wrap(rerr.Code, rerr.Gate, "Blocked: the CDP override's host is refused by the gates: "+rerr.Message, rerr)
	}
	hc := m.gates.Open.Client(egress.ClientOptions{Timeout: cloud.DiscoveryTimeout})
	ws, derr := cloud.ResolveCDPURL(ctx, raw, hc)
	if derr != nil {
		m.logger.Warn("CDP discovery failed; using the raw CDP URL", "err", derr)
	}
	l, err := backend.Connect(ctx, ws, m.logger)
	if err != nil {
		return nil, err
	}
	m.logger.Info("browser attached over CDP", "host", u.Host)
	return l, nil
}
