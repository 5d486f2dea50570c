package provider

import (
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Capability is what a call needs from a backend.
type Capability string

// The two capabilities.
const (
	CapSearch  Capability = "search"
	CapExtract Capability = "extract"
)

// Mode is how a resolved backend is reached.
type Mode string

// Modes of a resolved backend.
const (
	ModeEmbedded   Mode = "embedded"    // direct, ddgs: nothing to configure
	ModeKeyed      Mode = "keyed"       // the vendor's API with the user's key
	ModeSelfHosted Mode = "self-hosted" // a user-configured endpoint (SEARXNG_URL, FIRECRAWL_API_URL)
	ModeKeyless    Mode = "keyless"     // the vendor's free tier, through the keyless ring
)

// Settings is everything resolution reads: the web.* selection keys, the tier
// switches and a credential lookup. Build it with SettingsFrom.
type Settings struct {
	Backend, SearchBackend, ExtractBackend string
	// SearchFrom and ExtractFrom name where SearchBackend and
	// ExtractBackend came from when not from config (a CLI flag such as
	// "--backend"); "" means web.search_backend / web.extract_backend.
	// Errors name this source and its fix.
	SearchFrom, ExtractFrom        string
	Disabled                       []string
	KeylessFallback, KeylessRescue bool
	// RefuseAutoKeyless is web.auto_keyless_search: false: autodetection
	// never picks the keyless ring for search (config.Web.AutoKeylessSearch);
	// the zero value keeps spec §A4.2's autodetect.
	RefuseAutoKeyless bool
	KeyedBackstop     bool
	// Tier maps a vendor to config.TierFree / TierPaid / TierAuto.
	Tier map[string]string
	// Env returns a credential or endpoint variable ("" = unset): the
	// $GATEHOUSE_HOME/.env value first, then the process environment.
	Env func(key string) string
}

// SettingsFrom builds Settings from a loaded config and the .env map.
func SettingsFrom(cfg *config.Config, dotenv map[string]string) Settings {
	w := cfg.Web
	return Settings{
		Backend: w.Backend, SearchBackend: w.SearchBackend, ExtractBackend: w.ExtractBackend,
		SearchFrom: w.SearchBackendFrom, ExtractFrom: w.ExtractBackendFrom,
		Disabled:        w.DisabledProviders,
		KeylessFallback: w.KeylessFallback, KeylessRescue: w.KeylessFallback && w.KeylessRescue,
		RefuseAutoKeyless: !w.AutoKeylessSearch,
		KeyedBackstop:     w.KeyedBackstop,
		Tier:              w.ProviderTier,
		Env:               func(k string) string { return config.Lookup(dotenv, k) },
	}
}

func (s Settings) env(k string) string {
	if k == "" || s.Env == nil {
		return ""
	}
	return strings.TrimSpace(s.Env(k))
}

// tier returns the provider tier of vendor (spec §A5.2): free, paid or auto.
func (s Settings) tier(vendor string) string {
	switch t := strings.ToLower(strings.TrimSpace(s.Tier[vendor])); t {
	case config.TierFree, config.TierPaid:
		return t
	}
	return config.TierAuto
}

// HasKey reports whether the spec's API key is set.
func (s Settings) HasKey(sp Spec) bool { return s.env(sp.KeyEnv) != "" }

// HasURL reports whether the spec's self-hosted URL is set.
func (s Settings) HasURL(sp Spec) bool { return s.env(sp.URLEnv) != "" }

// Resolution is the backend a call will use and why.
type Resolution struct {
	Name string
	Mode Mode
	// Source is the config key the name came from ("web.search_backend",
	// "web.backend"), or "" when it was autodetected.
	Source string
	// Why is one human sentence explaining the choice (doctor output).
	Why string
	// Pinned: the name was configured, so a keyless walk starts at it and the
	// ring cursor is not advanced (spec §A5.3).
	Pinned bool
}

// AutoKeyless reports whether r is the keyless ring chosen by
// autodetection: nothing was configured and no vendor key is set, so each
// query goes to a third-party free tier nobody chose by name (results and
// doctor say so; web.auto_keyless_search: false refuses instead).
func (r Resolution) AutoKeyless() bool { return r.Mode == ModeKeyless && r.Source == "" && !r.Pinned }

// AutoKeylessNotice is the sentence that discloses an automatic keyless
// choice to the person or agent reading a search result or doctor's
// report: which kind of service got the query, that it was not chosen by
// anyone, and the two ways to change it.
func AutoKeylessNotice(servedBy string) string {
	who := "a keyless third-party free search service"
	if servedBy != "" && servedBy != Keyless {
		who = servedBy + "'s keyless free search service (a third party)"
	}
	return "No search backend is configured, so this query went to " + who +
		", picked automatically from the free-tier ring (" + strings.Join(RingOrder, " → ") +
		"; the next query may go to another). Choose one with `gatehouse config set web.search_backend NAME`" +
		" (e.g. ddgs, or searxng with SEARXNG_URL, or a vendor whose API key you set)," +
		" or refuse automatic keyless search with `gatehouse config set web.auto_keyless_search false`."
}

// AutoKeylessFailedNotice is AutoKeylessNotice for a search that failed:
// the query was still handed to third parties nobody chose (tried, in ring
// order; none named when tried is empty), and the reader is told so with
// the same two ways to change it.
func AutoKeylessFailedNotice(tried []string) string {
	who := "a keyless third-party free search service"
	if len(tried) == 1 {
		who = tried[0] + "'s keyless free search service (a third party)"
	} else if len(tried) > 1 {
		who = "the keyless free search services of " + strings.Join(tried, ", then ") + " (third parties)"
	}
	return "No search backend is configured, so this query was routed to " + who +
		", picked automatically from the free-tier ring (" + strings.Join(RingOrder, " → ") +
		"; the next query may go to another). Choose one with `gatehouse config set web.search_backend NAME`" +
		" (e.g. ddgs, or searxng with SEARXNG_URL, or a vendor whose API key you set)," +
		" or refuse automatic keyless search with `gatehouse config set web.auto_keyless_search false`."
}

// Configured reports whether a stored selection exists for capability c.
func (s Settings) configuredName(c Capability) (name, key string) {
	switch c {
	case CapSearch:
		if n := Canonical(s.SearchBackend); n != "" {
			return n, orStr(s.SearchFrom, "web.search_backend")
		}
	case CapExtract:
		if n := Canonical(s.ExtractBackend); n != "" {
			return n, orStr(s.ExtractFrom, "web.extract_backend")
		}
	}
	if n := Canonical(s.Backend); n != "" {
		return n, "web.backend"
	}
	return "", ""
}

// autodetectOrder is spec §A4.2 step 3: paid keys before free tiers. ddgs is
// left out: it reads DuckDuckGo's HTML results page, which is best-effort, so
// Gatehouse uses it only when it is selected by name.
var autodetectOrder = []string{"tavily", "perplexity", "exa", "parallel", "keenable", "firecrawl", "searxng", "brave-free"}

// Resolve picks the backend for capability c (spec §A4.2–§A4.4), strictly:
//
//  1. web.<c>_backend, else web.backend. A configured name is honoured as-is,
//     never rerouted: a disabled name is provider_disabled, an unknown name is
//     unknown_backend, a search-only name asked to extract is
//     search_only_backend, and a name whose key (or URL) is missing is
//     missing_key naming the variable. Only web.backend naming a backend that
//     cannot search falls through to autodetection for search (spec §A2 step 5).
//  2. Nothing configured: extract uses the embedded direct backend; search
//     takes the first backend in the autodetect order whose key or URL is set,
//     then the keyless ring (web.keyless_fallback), else no_provider.
//
// No network is touched.
func Resolve(c Capability, s Settings) (Resolution, *reason.Error) {
	name, key := s.configuredName(c)
	if name != "" {
		sp, known := Lookup(name)
		for _, d := range s.Disabled {
			if Canonical(d) == name {
				return Resolution{}, reason.Newf(reason.ProviderDisabled, "",
					"The %s backend %q (%s) is disabled by web.disabled_providers. Remove it from that list to re-enable it (`gatehouse config set web.disabled_providers []`), or %s",
					c, urlsafe.Redact(name), key, lowerFirst(fixFrom(c, key)))
			}
		}
		switch {
		case !known:
			return Resolution{}, reason.Newf(reason.UnknownBackend, "",
				"%s names %q, which is not a registered web provider; Gatehouse never silently switches to another one. %s", key, urlsafe.Redact(name), fixFrom(c, key))
		case c == CapExtract && !sp.Extract:
			return Resolution{}, reason.Newf(reason.SearchOnlyBackend, "",
				"%s (%q, from %s) is a search-only backend and cannot extract URL content. %s",
				sp.Label, name, key, fixFrom(c, key))
		case c == CapSearch && !sp.Search:
			if key != "web.backend" {
				return Resolution{}, reason.Newf(reason.NoProvider, "",
					"%s names %q, which cannot search. %s", key, name, fixFrom(c, key))
			}
			// web.backend names an extract-only backend (direct): search autodetects.
			r, err := autodetect(c, s)
			if err == nil {
				r.Why = fmt.Sprintf("web.backend is %q, which cannot search, so search was autodetected: %s", name, r.Why)
			}
			return r, err
		}
		m, err := modeFor(sp, s, key)
		if err != nil {
			return Resolution{}, err
		}
		return Resolution{Name: name, Mode: m, Source: key, Pinned: true,
			Why: fmt.Sprintf("%s = %s (%s)", key, name, modeWhy(sp, m, s))}, nil
	}
	return autodetect(c, s)
}

func autodetect(c Capability, s Settings) (Resolution, *reason.Error) {
	if c == CapExtract {
		return Resolution{Name: Direct, Mode: ModeEmbedded,
			Why: "no extract backend configured: the embedded direct fetcher (no API key, no third party)"}, nil
	}
	for _, n := range autodetectOrder {
		sp, _ := Lookup(n)
		if disabled(s, n) {
			continue
		}
		if s.HasKey(sp) || s.HasURL(sp) {
			m, err := modeFor(sp, s, "")
			if err != nil || m == ModeKeyless {
				continue
			}
			v := sp.KeyEnv
			if !s.HasKey(sp) {
				v = sp.URLEnv
			}
			return Resolution{Name: n, Mode: m, Why: fmt.Sprintf("autodetected: %s is set", v)}, nil
		}
	}
	if s.KeylessFallback && s.RefuseAutoKeyless {
		return Resolution{}, reason.New(reason.NoProvider, "",
			"No search backend is configured and no vendor API key is set, and web.auto_keyless_search is false, so the query is not sent to a keyless third-party service picked automatically. "+
				"Choose a backend: `gatehouse config set web.search_backend ddgs` (embedded, no key), searxng with SEARXNG_URL, a vendor key such as TAVILY_API_KEY / EXA_API_KEY / BRAVE_SEARCH_API_KEY in $GATEHOUSE_HOME/.env, "+
				"or a free tier by name (`gatehouse config set web.search_backend exa`).")
	}
	if s.KeylessFallback {
		walk := RingWalk("", false, 0, s.paidPinned())
		if len(walk) > 0 {
			return Resolution{Name: Keyless, Mode: ModeKeyless,
				Why: "chosen automatically (no search backend configured, no vendor key set): each query goes to a third-party keyless free tier of the ring (" + strings.Join(RingOrder, " → ") + "), a different one per call from a per-process cursor; web.auto_keyless_search: false refuses instead"}, nil
		}
		return Resolution{}, reason.New(reason.KeylessExhausted, "",
			"No search backend is configured and all keyless web providers are pinned to paid tiers (web.provider_tier). Set an API key, or `gatehouse config set web.search_backend ddgs`.")
	}
	return Resolution{}, reason.New(reason.NoProvider, "",
		"No search backend is configured, no vendor API key is set and the keyless tier is off (web.keyless_fallback: false). Set one, e.g. `gatehouse config set web.search_backend ddgs`, or put TAVILY_API_KEY / EXA_API_KEY / BRAVE_SEARCH_API_KEY in $GATEHOUSE_HOME/.env.")
}

func disabled(s Settings, name string) bool {
	for _, d := range s.Disabled {
		if Canonical(d) == name {
			return true
		}
	}
	return false
}

// modeFor applies the single use_keyless(name, key) decision of spec §A5.2 to
// a selected backend: tier free → keyless; paid → keyed (missing key errors);
// auto → keyed with a key, else keyless when the tier is enabled. Non-ring
// vendors need their key (or URL).
func modeFor(sp Spec, s Settings, key string) (Mode, *reason.Error) {
	if sp.Embedded {
		return ModeEmbedded, nil
	}
	if sp.URLEnv != "" && s.HasURL(sp) {
		return ModeSelfHosted, nil
	}
	if sp.URLRequired {
		return "", missingKey(sp, sp.URLEnv, key, "its URL")
	}
	hasKey := s.HasKey(sp)
	if !sp.Ring {
		if !hasKey {
			return "", missingKey(sp, sp.KeyEnv, key, "an API key")
		}
		return ModeKeyed, nil
	}
	switch s.tier(sp.Name) {
	case config.TierFree:
		return ModeKeyless, nil
	case config.TierPaid:
		if !hasKey && !sp.KeyOptional {
			return "", reason.Newf(reason.MissingKey, "",
				"%s is pinned to its paid tier (web.provider_tier.%s: paid) but %s is not set. Put it in $GATEHOUSE_HOME/.env, or `gatehouse config set web.provider_tier.%s auto` to use the free tier.",
				sp.Label, sp.Name, sp.KeyEnv, sp.Name)
		}
		return ModeKeyed, nil
	}
	if hasKey {
		return ModeKeyed, nil
	}
	if s.KeylessFallback {
		return ModeKeyless, nil
	}
	if sp.KeyOptional {
		return ModeKeyed, nil
	}
	return "", missingKey(sp, sp.KeyEnv, key, "an API key (the keyless tier is off: web.keyless_fallback: false)")
}

func missingKey(sp Spec, variable, key, what string) *reason.Error {
	from := ""
	if key != "" {
		from = " (selected by " + key + ")"
	}
	other := "`gatehouse config set " + orStr(key, "web.backend") + " …`"
	if isFlag(key) {
		other = "another " + key + " (or none, to use the configured backend)"
	}
	return reason.Newf(reason.MissingKey, "",
		"%s%s needs %s: %s is not set. Put %s=… in $GATEHOUSE_HOME/.env or the environment, or select another backend with %s.",
		sp.Label, from, what, variable, variable, other)
}

// isFlag reports whether a selection source is a command-line flag
// ("--backend") rather than a config key.
func isFlag(source string) bool { return strings.HasPrefix(source, "-") }

// fixFrom is fixFor for a selection that came from source (a config key or
// a flag): a flag's fix is another value of the flag, not a config change.
func fixFrom(c Capability, source string) string {
	if !isFlag(source) {
		return fixFor(c)
	}
	names := SearchCapable()
	if c == CapExtract {
		names = ExtractCapable()
	}
	return fmt.Sprintf("Pass %s one of: %s, or leave the flag out to use the configured backend.", source, strings.Join(names, ", "))
}

func modeWhy(sp Spec, m Mode, s Settings) string {
	switch m {
	case ModeEmbedded:
		return "embedded, nothing to configure"
	case ModeSelfHosted:
		return "self-hosted at " + sp.URLEnv
	case ModeKeyed:
		if s.HasKey(sp) {
			return "keyed: " + sp.KeyEnv + " is set"
		}
		return "keyed endpoint, no key needed"
	case ModeKeyless:
		if s.tier(sp.Name) == config.TierFree {
			return "keyless free tier: web.provider_tier." + sp.Name + " is free"
		}
		return "keyless free tier: " + sp.KeyEnv + " is not set"
	}
	return string(m)
}

func (s Settings) paidPinned() []string {
	var out []string
	for _, v := range RingOrder {
		if s.tier(v) == config.TierPaid {
			out = append(out, v)
		}
	}
	return out
}

func fixFor(c Capability) string {
	if c == CapExtract {
		return fmt.Sprintf("Set web.extract_backend to one of: %s (`gatehouse config set web.extract_backend direct`).", strings.Join(ExtractCapable(), ", "))
	}
	return fmt.Sprintf("Set web.search_backend to one of: %s (`gatehouse config set web.search_backend ddgs` needs no key).", strings.Join(SearchCapable(), ", "))
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
