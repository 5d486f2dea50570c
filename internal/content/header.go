package content

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The article's own header.
//
// The extractors drop an article's headline when it differs from the
// page's <title> (they take it for the title), and its byline and date
// (they take them for boilerplate). Those tell an agent what it is reading
// and who wrote it when, so addArticleHeader puts them back in front of the
// markdown: the page's first <h1> outside page chrome as a level-1 heading
// when it is not the document title, and under it one line with the
// byline and the date found right after that <h1>, before the article's
// first paragraph of prose.

// headerScan bounds the elements after the <h1> searched for a byline
// and a date.
const headerScan = 60

// headerSearch is how many bytes at the start of the markdown are searched
// for the headline, byline and date before they are added.
const headerSearch = 16 << 10

// bylineMaxWords is the longest byline or date kept (a longer element is
// a standfirst or a whole author box).
const bylineMaxWords = 16

// articleHeader finds the page's headline (the first <h1> outside page
// chrome) and the byline and date that follow it; each may be "".
func articleHeader(doc *html.Node) (h1, byline, date string) {
	var h *html.Node
	var find func(n *html.Node, inContent bool)
	find = func(n *html.Node, inContent bool) {
		if h != nil || n.Type == html.ElementNode && isChrome(n, inContent) {
			return
		}
		if dom.IsElem(n, "h1") {
			h = n
			return
		}
		if dom.IsElem(n, "article") || dom.IsElem(n, "main") {
			inContent = true
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c, inContent)
		}
	}
	find(doc, false)
	if h == nil {
		return "", "", ""
	}
	h1 = dom.CollapseSpace(markdown.UnmarkText(dom.TextContent(h)))
	// The elements after the headline, in document order, up to the
	// first paragraph of prose.
	steps := 0
	var stop bool
	var scan func(n *html.Node)
	scan = func(n *html.Node) {
		if stop || n.Type != html.ElementNode {
			return
		}
		if steps++; steps > headerScan {
			stop = true
			return
		}
		if isChrome(n, true) || n.Data == "figure" || n.Data == "h2" {
			if n.Data == "h2" {
				stop = true
			}
			return
		}
		// (The text of n is read only when it can decide something: a
		// container's text is the whole article, read again at every
		// level of the scan.)
		var text string
		if n.Data == "p" {
			text = dom.CollapseSpace(markdown.UnmarkText(dom.TextContent(n)))
			if countTokens(text) >= proseMinTokens {
				stop = true
				return
			}
		}
		wantByline, wantDate := byline == "" && isBylineElem(n), date == "" && isDateElem(n)
		if wantByline || wantDate {
			if n.Data != "p" {
				text = dom.CollapseSpace(markdown.UnmarkText(dom.TextContent(n)))
			}
			if short := text != "" && len(strings.Fields(text)) <= bylineMaxWords; short {
				if wantByline {
					byline = text
				} else {
					date = text
				}
				return
			}
		}
		for c := n.FirstChild; c != nil && !stop; c = c.NextSibling {
			scan(c)
		}
	}
	for n := h; n != nil && !stop; n = n.Parent {
		for s := n.NextSibling; s != nil && !stop; s = s.NextSibling {
			scan(s)
		}
		if dom.IsElem(n, "article") || dom.IsElem(n, "main") || dom.IsElem(n, "body") {
			break
		}
	}
	if date != "" && strings.Contains(byline, date) {
		date = ""
	}
	return h1, byline, date
}

// isBylineElem reports whether n marks an author: rel="author",
// itemprop="author", or an id or class naming a byline or author.
func isBylineElem(n *html.Node) bool {
	if v, _ := dom.Attr(n, "rel"); strings.EqualFold(v, "author") {
		return true
	}
	if v, _ := dom.Attr(n, "itemprop"); strings.EqualFold(v, "author") {
		return true
	}
	for _, key := range []string{"class", "id"} {
		v, _ := dom.Attr(n, key)
		for _, c := range strings.Fields(strings.ToLower(v)) {
			if strings.Contains(c, "byline") || c == "author" || strings.HasSuffix(c, "-author") || strings.HasPrefix(c, "author-") || strings.HasSuffix(c, "__author") || c == "by-author" {
				return true
			}
		}
	}
	return false
}

// isDateElem reports whether n holds a publication date: a <time>,
// itemprop="datePublished", or a class naming a date or publication time.
func isDateElem(n *html.Node) bool {
	if n.Data == "time" {
		return true
	}
	if v, _ := dom.Attr(n, "itemprop"); strings.EqualFold(v, "datePublished") {
		return true
	}
	v, _ := dom.Attr(n, "class")
	for _, c := range strings.Fields(strings.ToLower(v)) {
		switch {
		case c == "date", strings.HasSuffix(c, "-date"), strings.HasPrefix(c, "date-"), strings.Contains(c, "published"), strings.Contains(c, "pubdate"), c == "timestamp", c == "dateline":
			return true
		}
	}
	return false
}

// headlineMinTokens is the length from which a headline found inside the
// answer's text counts as held: a shorter one ("Keepers", "Rendered App")
// is a few common words that prose contains by chance, so it is held only
// as a line of its own.
const headlineMinTokens = 5

// holdsHeadline reports whether the start of the answer (top, and plain:
// its visible text normalised) already holds the headline h1: as a line of
// its own (a heading or a paragraph, after normalisation), or, for a
// headline of headlineMinTokens tokens or more, anywhere in the text.
func holdsHeadline(top, plain, h1 string) bool {
	want := normalizeForCompare(h1)
	if countTokens(h1) >= headlineMinTokens {
		return strings.Contains(plain, want)
	}
	for _, line := range strings.Split(visibleText(top), "\n") {
		if normalizeForCompare(strings.Trim(line, "#*_ \t")) == want {
			return true
		}
	}
	return false
}

// addArticleHeader puts the headline (when it is not the title), the
// byline and the date in front of md, each only when md does not already
// hold it.
func addArticleHeader(md, title string, doc *html.Node, withByline bool) string {
	h1, byline, date := articleHeader(doc)
	if h1 == "" && byline == "" && date == "" {
		return md
	}
	head := ""
	// A headline or byline the answer holds is near its top: only the
	// start is searched (this runs on every page, some of 10 MB).
	top := md
	if len(top) > headerSearch {
		top = top[:headerSearch]
	}
	plain := normalizeForCompare(visibleText(top))
	if h1 != "" && normalizeForCompare(h1) != normalizeForCompare(title) && !holdsHeadline(top, plain, h1) {
		head = "# " + textMarkdown(h1) + "\n\n"
	}
	if withByline {
		var parts []string
		for _, p := range []string{byline, date} {
			if p != "" && !strings.Contains(plain, normalizeForCompare(p)) {
				parts = append(parts, p)
			}
		}
		if len(parts) > 0 {
			head += textMarkdown(strings.Join(parts, " · ")) + "\n\n"
		}
	}
	if head == "" {
		return md
	}
	return head + strings.TrimLeft(md, "\n")
}

// textMarkdown converts plain page text to markdown inline content with
// the converter's own escaping (so it escapes as the rest of the page).
func textMarkdown(s string) string {
	p := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
	p.AppendChild(&html.Node{Type: html.TextNode, Data: s})
	md, err := markdown.Convert(p, nil)
	if err != nil {
		return s
	}
	return strings.TrimSpace(md)
}
