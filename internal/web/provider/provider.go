// Package provider defines the extract/search provider interface, the provider
// registry and strict backend resolution (spec §A4). Providers are compiled in;
// a configured name is honoured as-is, never silently rerouted (spec §A4.2).
package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
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

// Capabilities of a registered backend name.
type Capabilities struct {
	Search, Extract bool
	// Built reports whether this build includes an implementation.
	Built bool
}

// Known backend names and capabilities (spec §A4.1) plus Gatehouse's embedded
// "direct" backend. Names not listed here are unknown (strict selection error).
var known = map[string]Capabilities{
	"direct":     {Extract: true, Built: true},
	"firecrawl":  {Search: true, Extract: true},
	"tavily":     {Search: true, Extract: true},
	"exa":        {Search: true, Extract: true},
	"parallel":   {Search: true, Extract: true},
	"keenable":   {Search: true, Extract: true},
	"perplexity": {Search: true},
	"searxng":    {Search: true},
	"brave-free": {Search: true},
	"ddgs":       {Search: true},
	"xai":        {Search: true},
}

// ExtractCapable lists backend names that can extract, for error messages (spec §A4.4).
func ExtractCapable() []string {
	var out []string
	for n, c := range known {
		if c.Extract {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Lookup returns the capabilities of a backend name (lower-cased, trimmed).
func Lookup(name string) (Capabilities, bool) {
	c, ok := known[strings.ToLower(strings.TrimSpace(name))]
	return c, ok
}

// Selection is the configured backend names (config web.*) used by resolution.
type Selection struct {
	ExtractBackend string   // web.extract_backend
	Backend        string   // web.backend (shared)
	Disabled       []string // web.disabled_providers
}

// ResolveExtractName applies spec §A4.2/§A4.4 strictly: web.extract_backend, else
// web.backend, else the embedded default "direct". It never probes availability
// and never reroutes. Errors (*reason.Error, whole call): search_only_backend for a
// search-only name, provider_disabled for a name listed in web.disabled_providers,
// strict_selection for an unknown name or one this build does not include.
func ResolveExtractName(sel Selection) (string, *reason.Error) {
	name := strings.ToLower(strings.TrimSpace(sel.ExtractBackend))
	key := "web.extract_backend"
	if name == "" {
		name = strings.ToLower(strings.TrimSpace(sel.Backend))
		key = "web.backend"
	}
	if name == "" {
		name, key = "direct", ""
	}
	fix := fmt.Sprintf("Set web.extract_backend to one of: %s (`gatehouse config set web.extract_backend direct`).", strings.Join(ExtractCapable(), ", "))
	for _, d := range sel.Disabled {
		if strings.EqualFold(strings.TrimSpace(d), name) {
			return "", reason.Newf(reason.ProviderDisabled, "",
				"The extract backend %q (%s) is disabled by web.disabled_providers. Remove it from that list to re-enable it, or %s", name, key, lowerFirst(fix))
		}
	}
	c, ok := known[name]
	switch {
	case !ok:
		return "", reason.Newf(reason.StrictSelection, "",
			"%s names %q, which is not a registered web provider; Gatehouse never silently switches to another one. %s", key, name, fix)
	case !c.Extract:
		return "", reason.Newf(reason.SearchOnlyBackend, "",
			"%q is a search-only backend and cannot extract URL content. %s", name, fix)
	case !c.Built:
		return "", reason.Newf(reason.StrictSelection, "",
			"%s names %q, which this build of Gatehouse does not include yet; it will not silently switch to another provider. %s", key, name, fix)
	}
	return name, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
