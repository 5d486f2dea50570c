// Package provider defines the extract/search provider interfaces, the table of
// backend names and capabilities (spec §A4.1), strict backend resolution (spec
// §A4.2–§A4.4), the keyless ring (spec §A5.3–§A5.4) and the one-shot keyless
// rescue (spec §A5.5). Providers are compiled in; a configured name is honoured
// as-is, never silently rerouted.
//
// The vendor clients live in internal/web/provider/vendors; this package knows
// them only through the Searcher and Extractor interfaces, so resolution and the
// ring are tested without any network.
package provider

import (
	"context"
	"sort"
	"strings"
	"time"
)

// Page is one provider result for one requested URL.
type Page struct {
	URL      string // the requested (canonical) URL
	FinalURL string // URL after redirects as reported by the provider; "" = same as URL
	Title    string
	Content  string // markdown
	Err      error  // non-nil on failure; should carry a *reason.Error
	// Notes are short facts about how the page was obtained (e.g. "body capped at 10485760 bytes").
	Notes []string
	// NoCache asks the pipeline not to cache this page (e.g. the transfer was cut short).
	NoCache bool
	// ServedBy names the keyless vendor that produced the page when it is not
	// the backend the pipeline called (ring failover, rescue).
	ServedBy string
	// Meta is what the page says about itself (direct backend; vendors leave
	// it zero).
	Meta PageMeta
	// Links are the page's distinct absolute http(s) links, main-content
	// links first, at most content.MaxLinks (direct backend); LinksTotal
	// counts them before the cap.
	Links      []Link
	LinksTotal int
	// Rendered reports that the page was loaded in the local browser and its
	// rendered DOM converted; RenderTime is how long rendering took.
	Rendered   bool
	RenderTime time.Duration
	// RenderUnavailable, when set, is the reason code why a page that
	// looked like it needed rendering was not rendered (chromium_missing).
	RenderUnavailable string
	// RenderDiscarded, when set, says why the page was rendered but its
	// fetched content kept (direct.PreferFetched: "no_content",
	// "less_text"); RenderTime is then how long rendering took.
	RenderDiscarded string
}

// PageMeta is a page's own metadata (meta tags, Open Graph, JSON-LD) and,
// for a PDF, its page count. Every field may be empty.
type PageMeta struct {
	Description  string `json:"description,omitempty"`
	Author       string `json:"author,omitempty"`
	Published    string `json:"published,omitempty"` // RFC 3339, or YYYY-MM-DD when the page gives no time of day
	Language     string `json:"language,omitempty"`  // BCP 47 tag as written
	CanonicalURL string `json:"canonical_url,omitempty"`
	SiteName     string `json:"site_name,omitempty"`
	Pages        int    `json:"pages,omitempty"` // PDF page count
}

// Link is one link of a page.
type Link struct {
	URL  string `json:"url"`
	Text string `json:"text"`
	Main bool   `json:"main,omitempty"` // in the extracted main content
}

// Render modes (web.extract_render, web_extract render).
const (
	RenderAuto   = "auto"   // render when the fetched page is empty or an application shell
	RenderAlways = "always" // render every HTML page
	RenderNever  = "never"  // never render
)

// ExtractOptions are per-call settings a backend may honour.
type ExtractOptions struct {
	// Render is RenderAuto, RenderAlways or RenderNever; "" means the
	// backend's configured mode.
	Render string
}

// OptionsExtractor is an Extractor that takes per-call ExtractOptions (the
// direct backend). The pipeline calls ExtractWith when a backend has it.
type OptionsExtractor interface {
	Extractor
	ExtractWith(ctx context.Context, urls []string, o ExtractOptions, emit func(i int, p Page))
}

// Extractor fetches pages. Extract calls emit exactly once per input URL, with
// the URL's index, as soon as that page is done (so one slow page never holds
// back the others), and returns when every URL has been emitted or ctx has
// ended. emit is safe for concurrent use. Extract must honour ctx: when ctx
// ends it should stop promptly; URLs it never emitted are reported by the
// caller as timed out or interrupted.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, urls []string, emit func(i int, p Page))
}

// Row is one web_search result (spec §A1): metadata only, no page body.
// Position is 1-based and assigned by the pipeline after slicing.
type Row struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Position    int    `json:"position"`
}

// Searcher runs a search. limit is the number of rows wanted (1–100; vendors
// cap it at VendorLimitCap themselves). Errors carry a *reason.Error with a
// vendor_* code (vendor_auth, vendor_rate_limited, …) whose message names the
// vendor and never contains a key.
type Searcher interface {
	Name() string
	Search(ctx context.Context, query string, limit int) ([]Row, error)
}

// VendorLimitCap is the most results any bundled vendor is asked for (spec
// §A11 SEARCH_LIMIT_CAP).
const VendorLimitCap = 20

// Spec is the static description of one backend name (spec §A4.1).
type Spec struct {
	Name            string
	Label           string // human name for messages
	Search, Extract bool
	// Ring reports membership of the keyless ring (spec §A5.3).
	Ring bool
	// KeyEnv names the API-key variable ("" = none). KeyOptional: the
	// backend works without it (keenable's public endpoints, a self-hosted
	// firecrawl).
	KeyEnv      string
	KeyOptional bool
	// URLEnv names the variable holding a self-hosted endpoint (searxng,
	// firecrawl); URLRequired: the backend cannot work without it.
	URLEnv      string
	URLRequired bool
	// BaseEnv names a variable overriding the vendor's cloud base URL.
	BaseEnv string
	// Embedded backends need nothing configured (direct, ddgs).
	Embedded bool
}

// Direct is the name of Gatehouse's embedded extract backend.
const Direct = "direct"

// Keyless is the name a search resolved to the keyless ring by
// autodetection carries (Resolution.Name, meta.provider).
const Keyless = "keyless"

var specs = []Spec{
	{Name: Direct, Label: "Gatehouse direct fetcher", Extract: true, Embedded: true},
	{Name: "firecrawl", Label: "Firecrawl", Search: true, Extract: true, Ring: true, KeyEnv: "FIRECRAWL_API_KEY", URLEnv: "FIRECRAWL_API_URL"},
	{Name: "tavily", Label: "Tavily", Search: true, Extract: true, KeyEnv: "TAVILY_API_KEY", BaseEnv: "TAVILY_BASE_URL"},
	{Name: "exa", Label: "Exa", Search: true, Extract: true, Ring: true, KeyEnv: "EXA_API_KEY"},
	{Name: "parallel", Label: "Parallel", Search: true, Extract: true, Ring: true, KeyEnv: "PARALLEL_API_KEY"},
	{Name: "keenable", Label: "Keenable", Search: true, Extract: true, Ring: true, KeyEnv: "KEENABLE_API_KEY", KeyOptional: true},
	{Name: "perplexity", Label: "Perplexity Search", Search: true, KeyEnv: "PERPLEXITY_API_KEY"},
	{Name: "searxng", Label: "SearXNG", Search: true, URLEnv: "SEARXNG_URL", URLRequired: true},
	{Name: "brave-free", Label: "Brave Search", Search: true, KeyEnv: "BRAVE_SEARCH_API_KEY"},
	{Name: "ddgs", Label: "DuckDuckGo HTML results", Search: true, Embedded: true},
	{Name: "xai", Label: "xAI Web Search (Grok)", Search: true, KeyEnv: "XAI_API_KEY"},
}

// aliases maps accepted spellings to backend names: "nous" is the described
// system's managed subscription, which is Firecrawl (spec §A4.2).
var aliases = map[string]string{"nous": "firecrawl", "brave": "brave-free", "duckduckgo": "ddgs"}

// Specs returns every backend spec in table order (direct first, then spec §A4.1).
func Specs() []Spec { return append([]Spec(nil), specs...) }

// Canonical lower-cases and trims name and applies aliases.
func Canonical(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[n]; ok {
		return a
	}
	return n
}

// Lookup returns the spec of a backend name (after Canonical).
func Lookup(name string) (Spec, bool) {
	n := Canonical(name)
	for _, s := range specs {
		if s.Name == n {
			return s, true
		}
	}
	return Spec{}, false
}

// ExtractCapable lists the backend names that can extract, sorted, for error
// messages (spec §A4.4 lists firecrawl, tavily, keenable, exa, parallel; Gatehouse
// adds its embedded direct).
func ExtractCapable() []string {
	var out []string
	for _, s := range specs {
		if s.Extract {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// SearchCapable lists the backend names that can search, sorted.
func SearchCapable() []string {
	var out []string
	for _, s := range specs {
		if s.Search {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}
