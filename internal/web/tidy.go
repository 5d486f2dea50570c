package web

import (
	"github.com/gatehouse-dev/gatehouse/internal/safetext"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// Caps on the page-derived one-line fields of a row, in characters (code
// points). The content has its own limit (char_limit, truncate-and-store);
// these fields sit outside it and outside the content boundary over MCP,
// so a page cannot grow them without bound (a 500,000-char <title> was
// returned whole under --char-limit 2000).
const (
	MaxTitleChars = 300   // Result.Title and a search row's title
	MaxMetaChars  = 1_000 // each string of provider.PageMeta and a search row's description
)

// tidyRow makes the page-derived text of a success row safe to print and
// to hand to a model (safetext): the content loses control characters
// (ESC, BEL, C1: a page's OSC/CSI sequences can retitle or clear a
// terminal), the title and every page-metadata string become one clean
// line, capped (MaxTitleChars, MaxMetaChars), and so do link texts. It runs
// on every backend's rows, before redaction and truncate-and-store.
func tidyRow(r *Result) {
	r.Content = safetext.Clean(r.Content)
	r.Title = safetext.Cap(safetext.Line(r.Title), MaxTitleChars)
	if r.Meta != nil {
		tidyPageMeta(&r.Meta.PageMeta)
	}
	for i := range r.Links {
		r.Links[i].Text = safetext.Line(r.Links[i].Text)
	}
}

func tidyPageMeta(m *provider.PageMeta) {
	for _, f := range []*string{&m.Description, &m.Author, &m.Published, &m.Language, &m.CanonicalURL, &m.SiteName} {
		*f = safetext.Cap(safetext.Line(*f), MaxMetaChars)
	}
}
