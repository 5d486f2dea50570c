package gatehouse

import "context"

// SearchResult is the result of Search; its JSON is exactly that of
// `gatehouse search --json`. On success Success is true and Data.Web holds
// the rows; a failure has Success false, Error (naming the fix) and Reason.
type SearchResult struct {
	Success bool        `json:"success"`
	Data    *SearchData `json:"data,omitempty"`
	Meta    *SearchMeta `json:"meta,omitempty"`
	Error   string      `json:"error,omitempty"`
	Reason  Reason      `json:"reason,omitempty"`
}

// SearchData holds the result rows.
type SearchData struct {
	Web []SearchRow `json:"web"`
}

// SearchRow is one search hit: metadata only, no page body.
type SearchRow struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Position    int    `json:"position"` // 1-based
	// UnsafeURL is set when the URL carries a credential or points at a
	// private or cloud-metadata address: Extract would refuse it.
	UnsafeURL *UnsafeURL `json:"unsafe_url,omitempty"`
}

// UnsafeURL says why a result URL would be refused.
type UnsafeURL struct {
	Reason  Reason `json:"reason"`
	Message string `json:"message"`
}

// SearchMeta is the provenance of a search answer.
type SearchMeta struct {
	Provider     string `json:"provider"`                // the configured backend
	Cached       bool   `json:"cached"`                  // served from the in-process memo
	ServedBy     string `json:"served_by,omitempty"`     // the keyless vendor that answered, when not Provider
	RescuedFrom  string `json:"rescued_from,omitempty"`  // the backend that failed before a keyless rescue
	BackendError string `json:"backend_error,omitempty"` // that backend's error
}

// SearchOptions tune Search. A nil *SearchOptions means the defaults.
type SearchOptions struct {
	// Limit is the most rows returned; 0 means 5, clamped to 1..100.
	Limit int
}

// Search runs web_search: query goes to the configured search backend
// (operators such as site: pass through) and up to opts.Limit rows come
// back. A query carrying a credential is refused
// (secret_in_query) before any vendor sees it. When no search backend
// resolves in this process the error is an *Error with Reason
// tool_unavailable naming the fix; other failures are results with Success
// false and a Reason.
func (g *Gatehouse) Search(ctx context.Context, query string, opts *SearchOptions) (*SearchResult, error) {
	in := searchInput{Query: query}
	if opts != nil {
		in.Limit = opts.Limit
	}
	var out SearchResult
	if err := g.run(ctx, "web_search", in, nil, &out, true); err != nil {
		return nil, err
	}
	return &out, nil
}

func (r *SearchResult) refusal() (Reason, string) { return r.Reason, r.Error }
