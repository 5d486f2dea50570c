// Package backendsel decides which browser backend serves a
// configuration's bare-key sessions (spec §B4 precedence: the CDP override
// of §B12, Camofox mode of §B11, a cloud provider, the local Chromium) and
// says so for `gatehouse doctor` (Of), from the configuration alone:
// nothing is started or dialed.
package backendsel

import (
	"net/url"
	"os"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/browser/camofox"
	"github.com/gatehouse-dev/gatehouse/internal/browser/camofoxmode"
	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud"
	"github.com/gatehouse-dev/gatehouse/internal/config"
)

// Status is what `gatehouse doctor` says about the browser backend,
// decided from the configuration alone (nothing is started or dialed).
// Backend is "local", "cdp", "cloud" or "camofox"; Provider names the cloud
// provider; Endpoint is the CDP override's or Camofox server's host:port
// (never a path or query). NetworkOurs reports whether the browser's
// requests go through Gatehouse's egress proxy; when false, Note says what
// guards remain. Problem is set when the selection cannot work as configured.
type Status struct {
	Backend     string `json:"backend"`
	Provider    string `json:"provider,omitempty"`
	Endpoint    string `json:"endpoint,omitempty"`
	NetworkOurs bool   `json:"network_ours"`
	Note        string `json:"note"`
	Problem     string `json:"problem,omitempty"`
}

// notOurs is the shared part of the note for a browser whose network is not
// Gatehouse's.
const notOurs = "its own network is not Gatehouse's: the egress proxy does not cover the browser's requests (no DNS re-check at connect time, no per-request refusals); the URL gates run before each URL leaves (secret floor, metadata floor, private-address check, website policy), redirects and the page URL are re-checked after it loads"

// Of reports the browser backend cfg selects (spec §B4 precedence: CDP
// override, Camofox, cloud provider, local); env is the .env map (nil: the
// process environment only).
func Of(cfg *config.Config, env map[string]string) Status {
	if raw := CDPOverride(cfg); raw != "" {
		st := Status{Backend: "cdp"}
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			st.Endpoint = u.Host
			st.NetworkOurs = camofox.IsLoopbackHost(u.Hostname())
		} else {
			st.Problem = "the CDP override is not a URL"
		}
		if st.NetworkOurs {
			st.Note = "a browser Gatehouse does not own, on this host: each session's BrowserContext still sends every request through the egress proxy"
		} else {
			st.Note = "a browser on another host: it cannot reach Gatehouse's loopback egress proxy, so its page loads fail closed; " + notOurs
		}
		return st
	}
	if raw, on := camofoxmode.Selected(cfg, env, CDPOverride(cfg)); on {
		st := Status{Backend: "camofox", Note: "Camofox (no CDP, no ::local sidecar); " + notOurs}
		u, err := url.Parse(raw)
		switch {
		case raw == "":
			st.Problem = "browser.cloud_provider is camofox, but CAMOFOX_URL is not set"
		case err != nil || u.Host == "":
			st.Problem = "CAMOFOX_URL is not an http(s) URL"
		default:
			st.Endpoint = u.Host
			if camofox.IsLoopbackHost(u.Hostname()) {
				st.Note += "; the server is on loopback, so private URLs are allowed like on the local Chromium"
			}
		}
		return st
	}
	sel, err := cloud.Select(cfg.Browser.CloudProvider, cfg.Browser.CloudProviderSet, func(k string) string { return config.Lookup(env, k) }, nil)
	switch {
	case err != nil:
		return Status{Backend: "cloud", Problem: err.Error(), Note: "every bare-task browser session fails until browser.cloud_provider is fixed"}
	case sel.Provider != nil:
		st := Status{Backend: "cloud", Provider: sel.Name, Note: "cloud browser: " + notOurs}
		if cfg.Browser.AutoLocalForPrivateURLs {
			st.Note += "; private URLs are routed to the task's ::local sidecar in the local Chromium (browser.auto_local_for_private_urls)"
		} else {
			st.Note += "; private URLs are refused (browser.auto_local_for_private_urls is off)"
		}
		if sel.Err != nil {
			st.Problem = sel.Err.Error() + "; sessions fall back to the local Chromium (fallback_from_cloud)"
		}
		return st
	}
	return Status{Backend: "local", NetworkOurs: true, Note: "the local Chromium: every request of every session goes through the egress proxy"}
}

// CDPOverride is the raw CDP override of spec §B12: BROWSER_CDP_URL, else
// browser.cdp_url; "" when none. Gates use the raw value (no network).
func CDPOverride(cfg *config.Config) string {
	if v := strings.TrimSpace(os.Getenv("BROWSER_CDP_URL")); v != "" {
		return v
	}
	return strings.TrimSpace(cfg.Browser.CDPURL)
}
