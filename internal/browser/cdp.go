package browser

import (
	"context"
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backendsel"
	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// CDPOverride is backendsel.CDPOverride: the raw CDP override of spec §B12
// (BROWSER_CDP_URL, else browser.cdp_url; "" when none).
func CDPOverride(cfg *config.Config) string { return backendsel.CDPOverride(cfg) }

// BackendStatus is what `gatehouse doctor` says about the browser backend
// (backendsel.Status).
type BackendStatus = backendsel.Status

// Backend reports the browser backend cfg selects (backendsel.Of); env is
// the .env map (nil: the process environment only).
func Backend(cfg *config.Config, env map[string]string) BackendStatus { return backendsel.Of(cfg, env) }

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

// connectCDP attaches to the CDP override through the open guard: the
// user chose the endpoint, so it may be private (a CDP browser usually
// listens on loopback), never a cloud metadata address, and the website
// policy applies (attachCDP). Sessions keep their per-context egress proxy,
// so a CDP browser on this host still sends every request through it; a
// browser on another host cannot reach that loopback proxy and its requests
// fail closed.
func (m *Manager) connectCDP(ctx context.Context, raw string) (*backend.Local, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, reason.Newf(reason.SessionCreateFailed, "", "The CDP override %q is not a URL (set BROWSER_CDP_URL or browser.cdp_url to ws://host:port/devtools/browser/… or http://host:port).", raw)
	}
	l, err := m.attachCDP(ctx, raw, m.gates.Open, "the CDP override")
	if err != nil {
		return nil, err
	}
	m.logger.Info("browser attached over CDP", "host", u.Host)
	return l, nil
}

// attachCDP connects to the browser at raw (a CDP override or a cloud
// provider's connect URL) with every connection made through g, in order:
//
//  1. raw's host:port passes g's decision (Guard.Decide on
//     http://host:port/: metadata floor, private addresses as g says,
//     website policy) before anything is dialed;
//  2. /json/version discovery (cloud.ResolveCDPURL) uses g's HTTP client,
//     which judges every redirect hop and the address each connection
//     reaches; a refusal there is returned (any other discovery failure
//     falls back to raw, spec §B12);
//  3. the WebSocket URL that discovery names (webSocketDebuggerUrl, which
//     may name another host) passes the same decision as raw;
//  4. the CDP WebSocket is dialed by g.DialContext, which resolves the host
//     and judges every answer at connect time (DNS rebinding).
//
// what names the URL in messages ("the CDP override"). Refusals are
// *reason.Error with the gate's code (ssrf_metadata, ssrf_private,
// policy_blocked, …); a failed connection is browser_failed.
func (m *Manager) attachCDP(ctx context.Context, raw string, g *egress.Guard, what string) (*backend.Local, error) {
	if rerr := judgeCDPHost(ctx, g, raw, what); rerr != nil {
		return nil, rerr
	}
	hc := g.Client(egress.ClientOptions{Timeout: cloud.DiscoveryTimeout})
	ws, derr := cloud.ResolveCDPURL(ctx, raw, hc)
	if derr != nil {
		if rerr := reason.As(derr); rerr != nil && rerr.Gate != "" {
			return nil, reason.Wrap(rerr.Code, rerr.Gate, "Blocked: the CDP discovery of "+what+" (/json/version) was refused: "+strings.TrimPrefix(rerr.Message, "Blocked: "), rerr)
		}
		m.logger.Warn("CDP discovery failed; using the CDP URL as given", "what", what, "err", urlsafe.Redact(derr.Error()))
	}
	if ws != raw {
		if rerr := judgeCDPHost(ctx, g, ws, what+"'s WebSocket debugger URL (from /json/version)"); rerr != nil {
			return nil, rerr
		}
	}
	return backend.Connect(ctx, ws, g.DialContext, m.logger)
}

// judgeCDPHost is step 1 of attachCDP: g's decision on raw's host:port.
func judgeCDPHost(ctx context.Context, g *egress.Guard, raw, what string) *reason.Error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return reason.Newf(reason.InvalidURL, reason.GateParse, "Blocked: %s is not a URL with a host (ws://host:port/devtools/browser/… or http://host:port).", what)
	}
	if _, rerr := g.Decide(ctx, "http://"+u.Host+"/", egress.Rules{}); rerr != nil {
		return reason.Wrap(rerr.Code, rerr.Gate, "Blocked: "+what+"'s host is refused by the gates: "+strings.TrimPrefix(rerr.Message, "Blocked: "), rerr)
	}
	return nil
}
