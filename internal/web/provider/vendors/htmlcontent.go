package vendors

import (
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// htmlPage converts HTML a vendor returned for pageURL (its final URL) the
// way the direct backend converts a fetched page: content.Convert as
// text/html, so main-content extraction, the hidden-text filter (text a
// browser would not render, how prompt injections are slipped in, never
// reaches the agent) and markdown conversion all apply. label names the
// vendor in the error. It returns the markdown and the page's title, or a
// *reason.Error (empty_content when nothing is left).
func htmlPage(label, html, pageURL string) (markdown, title string, err error) {
	base, _ := url.Parse(pageURL)
	doc, cerr := content.Convert([]byte(html), "text/html; charset=utf-8", base)
	if cerr != nil {
		return "", "", reason.Newf(reason.EmptyContent, "", "%s returned HTML for %s with no readable text in it.", label, pageURL)
	}
	if strings.TrimSpace(doc.Markdown) == "" {
		return "", "", reason.Newf(reason.EmptyContent, "", "%s returned HTML for %s with no readable text in it.", label, pageURL)
	}
	return doc.Markdown, doc.Title, nil
}

// looksLikeHTMLDocument reports whether text a vendor labelled markdown or
// plain text is in fact a whole HTML document (it starts, after white
// space and a byte order mark, with "<!doctype html", "<html" or "<head" in
// any case): such an answer is converted with htmlPage instead of being
// handed to the agent raw. Markdown with inline HTML further down is left
// alone.
func looksLikeHTMLDocument(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n\ufeff")
	if len(t) > 16 {
		t = t[:16]
	}
	t = strings.ToLower(t)
	for _, p := range []string{"<!doctype html", "<html", "<head"} {
		if strings.HasPrefix(t, p) {
			if len(t) == len(p) {
				return true
			}
			switch t[len(p)] {
			case ' ', '>', '\t', '\r', '\n', '/':
				return true
			}
		}
	}
	return false
}

// asMarkdown returns p with a Content that is a whole HTML document
// (looksLikeHTMLDocument) converted by htmlPage against pageURL, and the
// HTML's title used when p has none; a page with nothing readable left
// becomes an empty_content error page. Any other p is returned unchanged.
func asMarkdown(label, pageURL string, p provider.Page) provider.Page {
	if p.Err != nil || !looksLikeHTMLDocument(p.Content) {
		return p
	}
	md, title, err := htmlPage(label, p.Content, pageURL)
	if err != nil {
		return provider.Page{URL: p.URL, FinalURL: p.FinalURL, Err: err}
	}
	p.Content, p.Title = md, orStr(p.Title, title)
	return p
}
