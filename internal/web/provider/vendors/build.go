package vendors

import (
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// BuildOptions are what Build needs.
type BuildOptions struct {
	Settings provider.Settings
	Config   *config.Config
	Guard    *egress.Guard
	// ClientOptions passes TLS settings to vendor clients (tests).
	ClientOptions egress.ClientOptions
	// Direct is the embedded extract backend.
	Direct provider.Extractor
	// Endpoints overrides vendor base URLs, keyed by backend name, or
	// "<name>/keyless" for a keyless endpoint (tests point them at local fakes).
	Endpoints map[string]string
}

// Build returns one Backend per spec (provider.Specs) with the clients this
// process can use. Keys are read once, here, from Settings.Env; a vendor with a
// self-hosted URL (SEARXNG_URL, FIRECRAWL_API_URL) gets a guard that allows
// exactly that origin even when it is on a private address, because the user
// configured it.
func Build(o BuildOptions) []*provider.Backend {
	s := o.Settings
	env := func(k string) string {
		if k == "" || s.Env == nil {
			return ""
		}
		return strings.TrimSpace(s.Env(k))
	}
	client := func(g *egress.Guard) Options {
		return Options{Client: g.Client(o.ClientOptions)}
	}
	ep := func(name string) string { return o.Endpoints[name] }
	base := client(o.Guard)
	with := func(key, b string) Options { x := base; x.Key, x.Base = key, b; return x }
	cfg := o.Config
	if cfg == nil {
		cfg = config.Default()
	}

	var out []*provider.Backend
	for _, sp := range provider.Specs() {
		b := &provider.Backend{Spec: sp}
		key := env(sp.KeyEnv)
		switch sp.Name {
		case provider.Direct:
			b.Extract = o.Direct
		case "firecrawl":
			wait := -1
			if v, err := strconv.Atoi(env("FIRECRAWL_WAIT_MS")); err == nil {
				wait = max(v, 0)
			}
			if self := env("FIRECRAWL_API_URL"); self != "" {
				fc := NewFirecrawl(Options{Client: originGuard(o.Guard, self).Client(o.ClientOptions), Key: key, Base: self}, wait)
				b.Search, b.Extract = fc, fc
			} else if key != "" {
				fc := NewFirecrawl(with(key, ep("firecrawl")), wait)
				b.Search, b.Extract = fc, fc
			}
			kl := NewFirecrawl(with("", orStr(ep("firecrawl/keyless"), ep("firecrawl"))), wait)
			b.KeylessSearch, b.KeylessExtract = kl, kl
		case "tavily":
			if key != "" {
				to := with(key, ep("tavily"))
				if u := env("TAVILY_BASE_URL"); u != "" && to.Base == "" {
					// A user-configured base (a proxy) is a configured origin.
					to = Options{Client: originGuard(o.Guard, u).Client(o.ClientOptions), Key: key, Base: u}
				}
				t := NewTavily(to)
				b.Search, b.Extract = t, t
			}
		case "exa":
			if key != "" {
				e := NewExa(with(key, ep("exa")))
				b.Search, b.Extract = e, e
			}
			kl := NewExaKeyless(with("", ep("exa/keyless")))
			b.KeylessSearch, b.KeylessExtract = kl, kl
		case "parallel":
			if key != "" {
				p := NewParallel(with(key, ep("parallel")), env("PARALLEL_SEARCH_MODE"))
				b.Search, b.Extract = p, p
			}
			kl := NewParallelKeyless(with("", ep("parallel/keyless")))
			b.KeylessSearch, b.KeylessExtract = kl, kl
		case "keenable":
			k := NewKeenable(with(key, ep("keenable")), false)
			b.Search, b.Extract = k, k
			kl := NewKeenable(with("", orStr(ep("keenable/keyless"), ep("keenable"))), true)
			b.KeylessSearch, b.KeylessExtract = kl, kl
		case "perplexity":
			if key != "" {
				b.Search = NewPerplexity(with(key, ep("perplexity")))
			}
		case "searxng":
			if u := env("SEARXNG_URL"); u != "" {
				b.Search = NewSearXNG(Options{Client: originGuard(o.Guard, u).Client(o.ClientOptions), Base: u})
			}
		case "brave-free":
			if key != "" {
				b.Search = NewBrave(with(key, ep("brave-free")))
			}
		case "ddgs":
			b.Search = NewDDGS(with("", ep("ddgs")))
		case "xai":
			if key != "" {
				x := cfg.Web.XAI
				b.Search = NewXAI(with(key, ep("xai")), XAIOptions{Model: x.Model, AllowedDomains: x.AllowedDomains,
					ExcludedDomains: x.ExcludedDomains, ImageSearch: x.EnableImageSearch, Timeout: x.Timeout})
			}
		}
		out = append(out, b)
	}
	return out
}

// originGuard returns g allowing the configured self-hosted origin raw.
func originGuard(g *egress.Guard, raw string) *egress.Guard {
	u, err := urlsafe.Parse(raw)
	if err != nil {
		return g // the request will fail with the parse error
	}
	return g.WithOrigin(u.Host, egress.PortOf(u))
}
