package tools

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// WebSearch is the search tool's name.
const WebSearch = "web_search"

// SearchInput is the input of web_search (spec §A1).
type SearchInput struct {
	Query string `json:"query" jsonschema:"the search query; backend operators (site:, filetype:, intitle:, -term, \"quoted phrases\") are passed through untouched"`
	Limit any    `json:"limit,omitempty" jsonschema:"number of results wanted, 1 to 100 (default 5); out-of-range values are clamped and a non-numeric value means 5; vendors are asked for at most 20"`
}

// SearchOutput is the result of web_search, exactly the JSON of `gatehouse
// search --json`: {"success":true,"data":{"web":[{title,url,description,
// position,unsafe_url?}]},"meta":{provider,cached,served_by?,rescued_from?,
// backend_error?,auto_selected?,notice?}} or {"success":false,"error":…,
// "reason":…,"meta"?:{provider,auto_selected,tried,notice}} (meta on a
// failure only when the keyless ring was picked automatically).
type SearchOutput struct {
	*web.SearchResponse
}

// Refused reports a failed search (no backend, vendor error, interrupted).
func (o *SearchOutput) Refused() bool { return o.SearchResponse == nil || !o.Success }

func searchTool(svc *web.Service) *Tool {
	return New(Spec{
		Name:  WebSearch,
		Title: "Search the web",
		Description: "Search the web with the configured backend and return result metadata only (no page bodies): " +
			"{\"success\":true,\"data\":{\"web\":[{title,url,description,position}]},\"meta\":{provider,cached,…}}; position is 1-based. " +
			"A result whose URL carries a credential or points at a private or cloud-metadata address is flagged with unsafe_url {reason,message} " +
			"(its query is cut when it carries a credential); web_extract would refuse it. " +
			"meta.cached says the answer came from the in-process memo (identical searches within web.cache_ttl_minutes); " +
			"meta.rescued_from and meta.backend_error say the configured backend failed and a keyless free tier answered instead. " +
			"A query containing an API key or token is refused (secret_in_query) before any vendor sees it. " +
			"Failures carry a stable reason code (vendor_rate_limited, vendor_auth, missing_key, …) and a message naming the fix.",
		Annotations: Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true},
		Schema: func(s *jsonschema.Schema) {
			s.Properties["query"].MinLength = jsonschema.Ptr(1)
			l := s.Properties["limit"]
			l.Types, l.Type = []string{"integer", "number", "string"}, ""
			l.Default = json.RawMessage("5")
		},
		Available: func() error {
			if err := svc.SearchAvailable(); err != nil {
				return err // typed: unknown_backend, missing_key, provider_disabled, search_only_backend
			}
			return nil
		},
	}, func(ctx context.Context, c *Call, in SearchInput) (*SearchOutput, error) {
		return &SearchOutput{svc.Search(ctx, web.SearchRequest{Query: in.Query, Limit: in.Limit})}, nil
	})
}
