package tools

// Pages implements Paged: a search result's titles and descriptions come
// from the pages (and the vendor), so they are untrusted text for a model
// just as page bodies are; MCP wraps each in a content boundary.
func (o *SearchOutput) Pages() []Page {
	if o.SearchResponse == nil || o.Data == nil {
		return nil
	}
	var out []Page
	for i := range o.Data.Web {
		r := &o.Data.Web[i]
		out = append(out, Page{Text: &r.Title}, Page{Text: &r.Description})
	}
	return out
}
