package content

import (
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Pages made of links.
//
// A front page of a link aggregator, an index or a directory is mostly
// links, often laid out with tables (30 stories, each a row with a rank, a
// title link and a line of points and comments). The extractors look for
// prose: they return the text run together on one line, or a few of the
// links. Such a page is recognised by its main container (mainContainer,
// chrome removed): at least linkPageMinLinks distinct link targets, link
// text making up at least linkPageMinShare of its words, and tables
// without header cells holding at least half of the targets (a layout
// table, see layoutHoldsLinks). The container is then converted directly,
// every layout table (no <th>, rows that hold links or nest other tables)
// written as a list with one item per row: every link is kept, one story
// per line. (Links in lists and cards are left to the extractors: on the
// shared 181-page bench, the rule without the layout-table condition
// lowered F1 from 0.976 to 0.954.)
const (
	linkPageMinLinks = 10
	linkPageMinShare = 0.4
)

// linkPageMarkdown returns the direct rendering of doc's main container
// with layout tables as lists, and true, when doc is a page of links laid
// out with tables (see above); else "", false.
func linkPageMarkdown(doc *html.Node, base *url.URL) (string, bool) {
	c := mainContainer(doc)
	if c == nil {
		return "", false
	}
	inContent := c.Data == "article" || c.Data == "main" || hasAncestor(c, "article", "main")
	// Counted on the page itself (no copy: this runs on every page).
	targets := map[string]bool{}
	linkTok, allTok := 0, 0
	var visit func(n *html.Node, inLink, inContent bool)
	visit = func(n *html.Node, inLink, inContent bool) {
		switch n.Type {
		case html.TextNode:
			k := countTokens(n.Data)
			allTok += k
			if inLink {
				linkTok += k
			}
			return
		case html.ElementNode:
			if n != c && isChrome(n, inContent) {
				return
			}
			if n.Data == "a" {
				if h, ok := dom.Attr(n, "href"); ok && strings.TrimSpace(h) != "" && !strings.HasPrefix(strings.TrimSpace(h), "#") {
					targets[strings.TrimSpace(h)] = true
				}
				inLink = true
			}
			inContent = inContent || n.Data == "article" || n.Data == "main"
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			visit(ch, inLink, inContent)
		}
	}
	visit(c, false, inContent)
	if len(targets) < linkPageMinLinks || float64(linkTok) < linkPageMinShare*float64(allTok) {
		return "", false
	}
	root := dom.CloneNode(c)
	stripChrome(root, inContent)
	if !layoutHoldsLinks(root, len(targets)) {
		return "", false // links in lists and cards: the extraction stands
	}
	layoutTablesToLists(root)
	markdown.FiguresToImages(root)
	markdown.Prepare(root)
	out, err := markdown.Convert(root, base)
	if err != nil || !hasWords(out) {
		return "", false
	}
	return out, true
}

// layoutHoldsLinks reports whether tables without header cells hold at
// least half of the n link targets under root: the links are laid out with
// tables, which the extractors render as data tables (a rank and a title
// in one row, the points in the next).
func layoutHoldsLinks(root *html.Node, n int) bool {
	in := map[string]bool{}
	dom.Walk(root, func(t *html.Node) bool {
		if !dom.IsElem(t, "table") {
			return true
		}
		header := false
		dom.Walk(t, func(d *html.Node) bool {
			header = header || dom.IsElem(d, "th")
			return !header
		})

		if header {
			return false
		}
		dom.Walk(t, func(d *html.Node) bool {
			if dom.IsElem(d, "a") {
				if h, ok := dom.Attr(d, "href"); ok {
					in[strings.TrimSpace(h)] = true
				}
			}
			return true
		})

		return false
	})

	return 2*len(in) >= n
}

// layoutTablesToLists rewrites every layout table under root: a table
// without <th> whose rows nest tables becomes a <div> of its rows' cells;
// one whose rows mostly hold links becomes a <ul> with an <li> per row
// that has text, its cells written inline (a space between them).
func layoutTablesToLists(root *html.Node) {
	var tables []*html.Node
	dom.Walk(root, func(n *html.Node) bool {
		if dom.IsElem(n, "table") {
			tables = append(tables, n)
		}
		return true
	})

	// Innermost first, so that a rewritten inner table is plain markup
	// inside its outer one's cells.
	converted := map[*html.Node]bool{}
	for i := len(tables) - 1; i >= 0; i-- {
		t := tables[i]
		rows, linked, nested, header := tableRows(t, converted)
		switch {
		case header || len(rows) == 0:
		case nested > 0:
			converted[t] = true
			t.Data, t.DataAtom = "div", atom.Div
			for _, r := range rows {
				r.Data, r.DataAtom = "div", atom.Div
				cellsTo(r, "div", atom.Div)
			}
			unwrapSections(t)
		case 2*linked >= len(rows):
			converted[t] = true
			t.Data, t.DataAtom = "ul", atom.Ul
			for _, r := range rows {
				if strings.TrimSpace(dom.TextContent(r)) == "" {
					r.Parent.RemoveChild(r)
					continue
				}
				r.Data, r.DataAtom = "li", atom.Li
				cellsTo(r, "span", atom.Span)
			}
			unwrapSections(t)
		}
	}
}

// tableRows returns the rows of table t (not of tables nested in it), how
// many hold a link, how many hold a nested table (or a table already
// converted), and whether it has a header cell.
func tableRows(t *html.Node, converted map[*html.Node]bool) (rows []*html.Node, linked, nested int, header bool) {
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case dom.IsElem(c, "tr"):
				rows = append(rows, c)
				hasLink, hasTable := false, false
				dom.Walk(c, func(d *html.Node) bool {
					switch {
					case dom.IsElem(d, "a"):
						hasLink = true
					case dom.IsElem(d, "table") || converted[d]:
						hasTable = true
					case dom.IsElem(d, "th"):
						header = true
					}
					return true
				})

				if hasLink {
					linked++
				}
				if hasTable {
					nested++
				}
			case dom.IsElem(c, "thead"), dom.IsElem(c, "tbody"), dom.IsElem(c, "tfoot"):
				visit(c)
			}
		}
	}
	visit(t)
	return rows, linked, nested, header
}

// cellsTo renames the cells of row r to tag, with a space after each.
func cellsTo(r *html.Node, tag string, a atom.Atom) {
	for c := r.FirstChild; c != nil; c = c.NextSibling {
		if dom.IsElem(c, "td") || dom.IsElem(c, "th") {
			c.Data, c.DataAtom = tag, a
			c.AppendChild(&html.Node{Type: html.TextNode, Data: " "})
		}
	}
}

// unwrapSections moves the rows of <thead>, <tbody> and <tfoot> directly
// under t and removes those sections.
func unwrapSections(t *html.Node) {
	for c := t.FirstChild; c != nil; {
		next := c.NextSibling
		if dom.IsElem(c, "thead") || dom.IsElem(c, "tbody") || dom.IsElem(c, "tfoot") {
			for r := c.FirstChild; r != nil; {
				rn := r.NextSibling
				c.RemoveChild(r)
				t.InsertBefore(r, c)
				r = rn
			}
			t.RemoveChild(c)
		}
		c = next
	}
}
