package cloud

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Provider names of browser.cloud_provider (spec §B4 "Cloud provider
// selection").
const (
	NameBrowserbase = "browserbase"
	NameBrowserUse  = "browser-use"
	NameFirecrawl   = "firecrawl"
	NameLocal       = "local"   // pins no cloud provider
	NameCamofox     = "camofox" // pins Camofox (no cloud provider)
	NameNous        = "nous"    // the described system's managed Browser Use
)

// Names lists the provider names Select accepts, for error messages.
var Names = []string{NameBrowserbase, NameBrowserUse, NameFirecrawl, NameLocal, NameCamofox}

// Lookup reads one credential or endpoint by environment-variable name
// ("" = unset); config.Lookup bound to the .env map is the usual one.
type Lookup func(key string) string

// Selection is the outcome of Select.
type Selection struct {
	// Provider is the provider to create sessions with; nil when none is
	// configured (no hybrid routing, every session local).
	Provider Provider
	// Name is the selected name ("" for auto-detect that found none).
	Name string
	// Pinned reports that browser.cloud_provider named the provider (not
	// auto-detected).
	Pinned bool
	// Err is set when a pinned provider lacks its credentials: sessions then
	// fall back to local, marked fallback_from_cloud with this reason. Provider
	// is non-nil (its Create fails) so hybrid routing still applies: a pinned
	// cloud provider never silently becomes a local-only setup.
	Err error
}

// UnknownProviderError is a browser.cloud_provider naming no provider (spec
// §B4: a strict selection error, never silent auto-detect).
type UnknownProviderError struct{ Name string }

func (e *UnknownProviderError) Error() string {
	return fmt.Sprintf("browser.cloud_provider %q is not a browser provider; use one of %s (or remove the key to auto-detect Browser Use, then Browserbase)",
		e.Name, strings.Join(Names, ", "))
}

// Select picks the cloud provider (spec §B4): when set (browser.cloud_provider
// present and non-empty), "local" and "camofox" pin none, "nous" means
// browser-use, browserbase / browser-use / firecrawl pin that provider, and
// any other name is an *UnknownProviderError. When not set, Browser Use then
// Browserbase are auto-detected by their credentials; Firecrawl only by
// explicit name. hc is the HTTP client every provider call uses (from
// egress.Guard.Client). Credentials and endpoints are read with env (spec
// §B11 names: BROWSERBASE_API_KEY, BROWSERBASE_PROJECT_ID,
// BROWSERBASE_BASE_URL, BROWSERBASE_KEEP_ALIVE, BROWSERBASE_PROXIES,
// BROWSERBASE_ADVANCED_STEALTH, BROWSERBASE_SESSION_TIMEOUT,
// BROWSER_USE_API_KEY, FIRECRAWL_API_KEY, FIRECRAWL_API_URL,
// FIRECRAWL_BROWSER_TTL; plus Gatehouse's BROWSER_USE_BASE_URL).
func Select(name string, set bool, env Lookup, hc *http.Client) (Selection, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	bb := &Browserbase{
		APIKey: env("BROWSERBASE_API_KEY"), ProjectID: env("BROWSERBASE_PROJECT_ID"), BaseURL: env("BROWSERBASE_BASE_URL"),
		KeepAlive: envBool(env("BROWSERBASE_KEEP_ALIVE"), true), Proxies: envBool(env("BROWSERBASE_PROXIES"), true),
		AdvancedStealth: envBool(env("BROWSERBASE_ADVANCED_STEALTH"), false), Timeout: envPosInt(env("BROWSERBASE_SESSION_TIMEOUT")),
		Client: hc,
	}
	bu := &BrowserUse{APIKey: env("BROWSER_USE_API_KEY"), BaseURL: env("BROWSER_USE_BASE_URL"), Client: hc}
	fc := &Firecrawl{APIKey: env("FIRECRAWL_API_KEY"), BaseURL: env("FIRECRAWL_API_URL"), TTL: envPosInt(env("FIRECRAWL_BROWSER_TTL")), Client: hc}
	if !set || name == "" {
		for _, p := range []Provider{bu, bb} {
			if p.Configured() {
				return Selection{Provider: p, Name: p.Name()}, nil
			}
		}
		return Selection{}, nil
	}
	var p Provider
	switch name {
	case NameLocal, NameCamofox:
		return Selection{Name: name, Pinned: true}, nil
	case NameBrowserbase:
		p = bb
	case NameBrowserUse, NameNous:
		p = bu
	case NameFirecrawl:
		p = fc
	default:
		return Selection{}, &UnknownProviderError{Name: name}
	}
	sel := Selection{Provider: p, Name: p.Name(), Pinned: true}
	if !p.Configured() {
		sel.Err = fmt.Errorf("browser.cloud_provider is %s, but %s: set it in the environment or $GATEHOUSE_HOME/.env", p.Name(), missingCreds(p.Name()))
	}
	return sel, nil
}

func missingCreds(name string) string {
	switch name {
	case NameBrowserbase:
		return "BROWSERBASE_API_KEY and BROWSERBASE_PROJECT_ID are not both set"
	case NameBrowserUse:
		return "BROWSER_USE_API_KEY is not set"
	case NameFirecrawl:
		return "FIRECRAWL_API_KEY is not set"
	}
	return "its API key is not set"
}

// envBool reads a boolean switch: 1/true/yes/on and 0/false/no/off
// (case-insensitive); anything else keeps def.
func envBool(v string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	return def
}

// envPosInt reads a positive integer; anything else is 0 (unset).
func envPosInt(v string) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
