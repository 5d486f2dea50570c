package provider

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Presence says whether a variable is set: never its value.
type Presence struct {
	Var     string `json:"var"`
	Present bool   `json:"present"`
}

// ProviderStatus is one backend in `gatehouse doctor`.
type ProviderStatus struct {
	Name     string    `json:"name"`
	Label    string    `json:"label"`
	Search   bool      `json:"search"`
	Extract  bool      `json:"extract"`
	Keyless  bool      `json:"keyless_ring"`
	Key      *Presence `json:"key,omitempty"`
	URL      *Presence `json:"url,omitempty"`
	Tier     string    `json:"tier,omitempty"` // ring vendors: free, paid or auto
	Disabled bool      `json:"disabled,omitempty"`
	// Ready says whether selecting this backend would work now (no network
	// probe): embedded, keyed with its key, self-hosted with its URL, or a ring
	// vendor whose free tier is enabled.
	Ready bool   `json:"ready"`
	Mode  string `json:"mode,omitempty"` // how it would be reached if selected
	Note  string `json:"note,omitempty"` // why not ready
}

// ResolvedStatus is what a capability resolves to right now, and why.
type ResolvedStatus struct {
	Backend    string `json:"backend,omitempty"`
	Mode       Mode   `json:"mode,omitempty"`
	Why        string `json:"why,omitempty"`
	Configured bool   `json:"configured"` // from a stored selection
	// AutoKeyless: search goes to the keyless free-tier ring because
	// nothing was configured (Resolution.AutoKeyless); Notice says so.
	AutoKeyless bool        `json:"auto_keyless,omitempty"`
	Notice      string      `json:"notice,omitempty"`
	Reason      reason.Code `json:"reason,omitempty"`
	Error       string      `json:"error,omitempty"`
}

// Advice is a misconfiguration found before it bites, with the fix as a command.
type Advice struct {
	Severity string `json:"severity"` // "error" (a configured selection cannot work) or "warning"
	Code     string `json:"code"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
}

// Report is the provider section of `gatehouse doctor`.
type Report struct {
	Providers []ProviderStatus `json:"providers"`
	Search    ResolvedStatus   `json:"search"`
	Extract   ResolvedStatus   `json:"extract"`
	Keyless   struct {
		Fallback bool     `json:"fallback"` // web.keyless_fallback
		Rescue   bool     `json:"rescue"`   // web.keyless_rescue (off when the tier is off)
		Ring     []string `json:"ring"`     // the ring without paid-pinned vendors
	} `json:"keyless"`
	Advice []Advice `json:"advice"`
}

// Failed reports whether a configured selection cannot work (doctor exits 1).
func (r *Report) Failed() bool {
	for _, a := range r.Advice {
		if a.Severity == "error" {
			return true
		}
	}
	return false
}

// Doctor builds the provider report for s; rescueSetting is
// web.keyless_rescue as configured. It never
// touches the network and never includes a variable's value.
func Doctor(s Settings, rescueSetting bool) *Report {
	r := &Report{}
	for _, sp := range specs {
		st := ProviderStatus{Name: sp.Name, Label: sp.Label, Search: sp.Search, Extract: sp.Extract, Keyless: sp.Ring, Disabled: disabled(s, sp.Name)}
		if sp.KeyEnv != "" {
			st.Key = &Presence{Var: sp.KeyEnv, Present: s.HasKey(sp)}
		}
		if sp.URLEnv != "" {
			st.URL = &Presence{Var: sp.URLEnv, Present: s.HasURL(sp)}
		}
		if sp.Ring {
			st.Tier = s.tier(sp.Name)
		}
		m, err := modeFor(sp, s, "")
		switch {
		case st.Disabled:
			st.Note = "disabled by web.disabled_providers"
		case err != nil:
			st.Note = err.Code.Doc()
			if sp.URLRequired {
				st.Note = sp.URLEnv + " is not set"
			} else if sp.KeyEnv != "" {
				st.Note = sp.KeyEnv + " is not set"
			}
		default:
			st.Ready, st.Mode = true, string(m)
		}
		r.Providers = append(r.Providers, st)
	}
	r.Search = resolved(CapSearch, s)
	r.Extract = resolved(CapExtract, s)
	// A configured endpoint that egress will refuse (not an http(s) URL, a
	// metadata address, a password in it): every call to that backend would
	// fail, so say so now. The message never carries the value.
	for i, sp := range specs {
		if sp.URLEnv == "" || !s.HasURL(sp) {
			continue
		}
		e := endpointProblem(s.env(sp.URLEnv))
		if e == nil {
			continue
		}
		r.Providers[i].Ready, r.Providers[i].Mode = false, ""
		r.Providers[i].Note = sp.URLEnv + " cannot be used (" + string(e.Code) + ")"
		sev := "warning"
		if r.Search.Backend == sp.Name || r.Extract.Backend == sp.Name {
			sev = "error"
		}
		r.Advice = append(r.Advice, Advice{Severity: sev, Code: "endpoint_invalid",
			Message: fmt.Sprintf("%s is set, but %s would refuse every call to it [%s]: %s", sp.URLEnv, sp.Label, e.Code, e.Message),
			Fix:     "set " + sp.URLEnv + " to the instance's base URL (http:// or https://, no password, not a metadata address) in $GATEHOUSE_HOME/.env or the environment"})
	}
	r.Keyless.Fallback = s.KeylessFallback
	r.Keyless.Rescue = s.KeylessRescue
	r.Keyless.Ring = RingWalk(RingOrder[0], true, 0, s.paidPinned())

	for _, c := range []struct {
		cap Capability
		st  ResolvedStatus
	}{{CapSearch, r.Search}, {CapExtract, r.Extract}} {
		if c.st.Error == "" || c.st.Reason == reason.SearchOnlyBackend && Canonical(s.ExtractBackend) == "" {
			continue // the search-only trap gets its own advice below
		}
		sev := "warning"
		if c.st.Configured {
			sev = "error"
		}
		r.Advice = append(r.Advice, Advice{Severity: sev, Code: string(c.st.Reason),
			Message: fmt.Sprintf("%s cannot work: %s", c.cap, c.st.Error), Fix: fixCommand(c.cap, c.st.Reason, s)})
	}
	// The search-only trap (seeds: "the gotcha is the one-key setup"): web.backend
	// names a search-only backend and web.extract_backend is unset.
	if b := Canonical(s.Backend); b != "" && Canonical(s.ExtractBackend) == "" {
		if sp, ok := Lookup(b); ok && sp.Search && !sp.Extract {
			r.Advice = append(r.Advice, Advice{Severity: "error", Code: "search_only_trap",
				Message: fmt.Sprintf("web.backend is %s (search-only) and web.extract_backend is not set: web_search works but every web_extract fails with search_only_backend.", b),
				Fix:     "gatehouse config set web.extract_backend " + extractSuggestion(s)})
		}
	}
	if rescueSetting && !s.KeylessFallback {
		r.Advice = append(r.Advice, Advice{Severity: "warning", Code: "rescue_off",
			Message: "web.keyless_rescue is on but web.keyless_fallback is off, so no keyless rescue will happen.",
			Fix:     "gatehouse config set web.keyless_fallback true"})
	}
	var unknownTier []string
	for v, t := range s.Tier {
		if _, ok := Lookup(v); !ok || !slices.Contains(RingOrder, Canonical(v)) {
			unknownTier = append(unknownTier, v)
		} else if strings.ToLower(t) == config.TierPaid {
			sp, _ := Lookup(v)
			if !s.HasKey(sp) && !sp.KeyOptional {
				r.Advice = append(r.Advice, Advice{Severity: "warning", Code: "paid_without_key",
					Message: fmt.Sprintf("web.provider_tier.%s is paid but %s is not set: %s is out of the keyless ring and cannot be selected.", v, sp.KeyEnv, v),
					Fix:     fmt.Sprintf("gatehouse config set web.provider_tier.%s auto", v)})
			}
		}
	}
	sort.Strings(unknownTier)
	for _, v := range unknownTier {
		r.Advice = append(r.Advice, Advice{Severity: "warning", Code: "tier_not_ring",
			Message: fmt.Sprintf("web.provider_tier.%s has no effect: only the keyless ring vendors (%s) have tiers.", v, strings.Join(RingOrder, ", ")),
			Fix:     fmt.Sprintf("gatehouse config set web.provider_tier.%s auto", v)})
	}
	if r.Search.Backend == "ddgs" {
		r.Advice = append(r.Advice, Advice{Severity: "warning", Code: "ddgs_best_effort",
			Message: "ddgs reads DuckDuckGo's HTML results page, which is not an API: expect bot checks under load.",
			Fix:     "gatehouse config set web.search_backend brave-free   # with BRAVE_SEARCH_API_KEY in $GATEHOUSE_HOME/.env"})
	}
	if s.KeyedBackstop && r.Search.Mode != ModeKeyless {
		r.Advice = append(r.Advice, Advice{Severity: "warning", Code: "backstop_unused",
			Message: "web.keyed_backstop is on, but search does not use a keyless vendor, so the backstop never runs."})
	}
	return r
}

func resolved(c Capability, s Settings) ResolvedStatus {
	name, _ := s.configuredName(c)
	res, err := Resolve(c, s)
	st := ResolvedStatus{Configured: name != "" && res.Source != ""}
	if err != nil {
		st.Configured = name != ""
		st.Reason, st.Error = err.Code, err.Message
		return st
	}
	st.Backend, st.Mode, st.Why = res.Name, res.Mode, res.Why
	if c == CapSearch && res.AutoKeyless() {
		st.AutoKeyless = true
		st.Notice = "No search backend is configured, so every search query goes to a keyless third-party free service picked automatically (" +
			strings.Join(RingOrder, " → ") + ", a different one per call). Choose one with `gatehouse config set web.search_backend NAME`, " +
			"or refuse automatic keyless search with `gatehouse config set web.auto_keyless_search false`."
	}
	return st
}

// endpointProblem is the refusal egress would give every request to a
// configured self-hosted endpoint (SEARXNG_URL, FIRECRAWL_API_URL), judged
// without DNS: unparseable, not http(s), a secret or password in it, or a
// metadata address. A private address is fine (a configured origin is
// allowed for its host and port). nil when none applies.
func endpointProblem(raw string) *reason.Error {
	if e := urlsafe.FindSecret(raw); e != nil {
		return e
	}
	u, perr := urlsafe.Parse(raw)
	if perr != nil {
		return perr
	}
	if e := urlsafe.CheckSecrets(raw, u, false); e != nil {
		return e
	}
	if e := (urlsafe.Options{}).CheckStatic(u); e != nil && e.Code != reason.SSRFPrivate {
		return e
	}
	return nil
}

func extractSuggestion(s Settings) string {
	for _, n := range []string{"firecrawl", "tavily", "exa", "parallel"} {
		sp, _ := Lookup(n)
		if s.HasKey(sp) || s.HasURL(sp) {
			return n
		}
	}
	return Direct
}

func fixCommand(c Capability, code reason.Code, s Settings) string {
	key := "web.search_backend"
	alt := "ddgs"
	if c == CapExtract {
		key, alt = "web.extract_backend", extractSuggestion(s)
	}
	switch code {
	case reason.MissingKey:
		return "put the variable named above in $GATEHOUSE_HOME/.env, or: gatehouse config set " + key + " " + alt
	case reason.ProviderDisabled:
		return "gatehouse config set web.disabled_providers []"
	}
	return "gatehouse config set " + key + " " + alt
}
