package content

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
)

// Short and simple pages.
//
// The extractors are tuned for news pages and misbehave on tiny ones:
//
//   - go-trafilatura (v1.12.2) falls back to its "baseline" whenever its
//     own extraction holds under 250 characters, which is every page with
//     a paragraph or two. The baseline returns plain-text <p> elements:
//     the whole <article> as one paragraph (paragraphs run together), every
//     <p>, <pre> and <blockquote> of the page without links or headings,
//     and, when those hold under 100 characters, the text of the whole
//     document appended (the title glued to the body, the paragraphs
//     repeated, tables and code flattened). trafilaturaRescued spots it and
//     the answer is then dropped.
//     (Before, the merge kept those flat blocks because readability had
//     the same words, and dropped readability's headings, lists and
//     tables as found by one extractor only.)
//   - readability alone, on a page this small, may drop the second of two
//     teasers or turn a <blockquote> into plain paragraphs.
//
// So on such a small page (trafilatura's own extraction under 250
// characters, or none) the page's main container (see mainContainer) is
// also converted directly, and that rendering replaces readability's when
// it holds readability's text and not much more (see preferDirect): the
// container then is the main content, and converting it as is keeps every
// heading, list, table, code block, quote and link. A container holding
// far more text than readability kept (site chrome without semantic
// markup) leaves readability's answer; the cheap token count of the
// container (containerTokens) decides before anything is converted.
//
// Bigger pages never take this path: on news pages the container also
// holds bylines, datelines, captions and teasers that the extractors
// rightly drop (on the shared 181-page bench, the direct rendering chosen
// by the same test on every page lowers F1 from 0.975 to 0.954).
const (
	// directMaxGrowth and directSlack bound the direct rendering's size:
	// it may hold at most directMaxGrowth times the extraction's tokens
	// plus directSlack (a byline, a heading or two the extractors left
	// out).
	directMaxGrowth = 1.25
	directSlack     = 12
	// directMinCover is the share of the extraction's shingles that the
	// direct rendering must hold: the extraction's text comes from the
	// container, not from elsewhere on the page.
	directMinCover = 0.9
)

// trafilaturaRescued reports whether go-trafilatura's result came from its
// baseline rescue rather than from its extraction (see the comment at the
// top of this file): the content is nothing but attribute-less <p>
// elements holding one text node each, and either its text is under
// trafilatura's MinExtractedSize (the regular path never returns less), or
// it is one paragraph equal to the text of an <article> of doc, or its
// last paragraph holds all the others (the document dump).
func trafilaturaRescued(res *trafilatura.ExtractResult, doc *html.Node) bool {
	var paras []*html.Node
	for c := res.ContentNode.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) == "":
		case dom.IsElem(c, "p") && len(c.Attr) == 0 && c.FirstChild != nil &&
			c.FirstChild == c.LastChild && c.FirstChild.Type == html.TextNode:
			paras = append(paras, c)
		default:
			return false
		}
	}
	if len(paras) == 0 {
		return false
	}
	if utf8.RuneCountInString(res.ContentText) < trafilatura.DefaultConfig().MinExtractedSize {
		return true
	}
	if len(paras) > 1 && len(paras[len(paras)-1].FirstChild.Data) < len(res.ContentText)/2 {
		// Not the document dump: that last paragraph is about all of
		// ContentText.
		return false
	}
	ps := make([]string, len(paras))
	for i, p := range paras {
		ps[i] = dom.CollapseSpace(p.FirstChild.Data)
	}
	if len(ps) == 1 {
		found := false
		dom.Walk(doc, func(n *html.Node) bool {
			if found {
				return false
			}
			if dom.IsElem(n, "article") {
				found = dom.CollapseSpace(dom.TextContent(n)) == ps[0]
				return false
			}
			if dom.IsElem(n, "body") {

				pt, bt := countTokens(ps[0]), countTokens(dom.TextContent(n))
				found = pt >= dumpMinTokens && float64(pt) >= dumpMinShare*float64(bt)
			}
			return true
		})

		return found
	}
	// The dump follows paragraphs of at most 100 characters in all;
	// longer ones mean a regular answer (and keep this test linear).
	last, before := ps[len(ps)-1], 0
	for _, p := range ps[:len(ps)-1] {
		if before += len(p); before > 4*baselineMaxParas {
			return false
		}
	}
	for _, p := range ps[:len(ps)-1] {
		if !strings.Contains(last, p) {
			return false
		}
	}
	return true
}

// dumpMinTokens and dumpMinShare: a single-paragraph answer of at least
// dumpMinTokens tokens holding dumpMinShare of the body's is the baseline's
// dump of the whole document (a page whose text is not in <p> elements: a
// chart, a listing), not an extraction: a regular answer keeps block
// structure, and never every word of the page's chrome.
const (
	dumpMinTokens = 200
	dumpMinShare  = 0.9
)

// baselineMaxParas is the text (characters) of the paragraphs under which
// go-trafilatura's baseline goes on to dump the whole document.
const baselineMaxParas = 100

// chromeRoles are ARIA landmark roles of page chrome.
var chromeRoles = map[string]bool{"navigation": true, "banner": true, "contentinfo": true, "complementary": true, "search": true}

// isChrome reports whether element n is page chrome or not content:
// navigation, sidebars, footers, forms and controls, scripts, hidden
// elements, and a <header> outside any <article> or <main> (the site
// header; an article's own header holds its title and standfirst).
func isChrome(n *html.Node, inContent bool) bool {
	switch n.Data {
	case "script", "style", "noscript", "template", "nav", "footer", "aside", "form",
		"iframe", "svg", "button", "select", "input", "textarea", "head", "title":
		return true
	case "header":
		if !inContent {
			return true
		}
	}
	if role, ok := dom.Attr(n, "role"); ok && chromeRoles[strings.ToLower(strings.TrimSpace(role))] {
		return true
	}
	if _, ok := dom.Attr(n, "hidden"); ok {
		return true
	}
	if v, ok := dom.Attr(n, "aria-hidden"); ok && strings.EqualFold(strings.TrimSpace(v), "true") {
		return true
	}
	if st, ok := dom.Attr(n, "style"); ok {
		st = strings.ToLower(strings.ReplaceAll(st, " ", ""))
		if strings.Contains(st, "display:none") || strings.Contains(st, "visibility:hidden") {
			return true
		}
	}
	return false
}

// mainContainer returns the element holding the page's main content, in
// this order: the only <article> outside page chrome (nested ones, such as
// comments, count with it), else the first <main> or role="main", else
// <body>. It returns nil when doc has no <body>.
func mainContainer(doc *html.Node) *html.Node {
	var body, main *html.Node
	var articles []*html.Node
	var visit func(n *html.Node, inContent bool)
	visit = func(n *html.Node, inContent bool) {
		if n.Type == html.ElementNode {
			if isChrome(n, inContent) {
				return
			}
			switch n.Data {
			case "body":
				if body == nil {
					body = n
				}
			case "article":
				articles = append(articles, n)
				return
			case "main":
				if main == nil {
					main = n
				}
				inContent = true
			}
			if role, _ := dom.Attr(n, "role"); main == nil && strings.EqualFold(strings.TrimSpace(role), "main") {
				main = n
				inContent = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inContent)
		}
	}
	visit(doc, false)
	switch {
	case len(articles) == 1:
		return articles[0]
	case main != nil:
		return main
	}
	return body
}

// containerText calls fn with each text node under n that lies outside page
// chrome, in document order.
func containerText(n *html.Node, fn func(text string)) {
	var visit func(n *html.Node, inContent bool)
	visit = func(n *html.Node, inContent bool) {
		switch n.Type {
		case html.TextNode:
			fn(n.Data)
			return
		case html.ElementNode:
			if isChrome(n, inContent) {
				return
			}
			if n.Data == "article" || n.Data == "main" {
				inContent = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inContent)
		}
	}
	visit(n, n.Data == "article" || n.Data == "main" || hasAncestor(n, "article", "main"))
}

// containerTokens counts the scorer-style tokens of the text under n
// outside page chrome, without building them.
func containerTokens(n *html.Node) int {
	count := 0
	containerText(n, func(text string) {
		in := false
		for _, r := range text {
			t := isTokenRune(r)
			if t && !in {
				count++
			}
			in = t
		}
	})
	return count
}

// containerShingles returns the shingles (see shingles) of the tokens of
// the text under n outside page chrome; text of different elements joins
// into one token stream, as in the renderings.
func containerShingles(n *html.Node) map[uint64]struct{} {
	var toks []string
	containerText(n, func(text string) { toks = appendTokens(toks, text) })
	return shingles(toks)
}

// hasAncestor reports whether one of n's ancestors is an element named one
// of names.
func hasAncestor(n *html.Node, names ...string) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode {
			for _, name := range names {
				if p.Data == name {
					return true
				}
			}
		}
	}
	return false
}

// stripChrome detaches every chrome element (see isChrome) under root.
func stripChrome(root *html.Node, inContent bool) {
	var drop []*html.Node
	var visit func(n *html.Node, inContent bool)
	visit = func(n *html.Node, inContent bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if isChrome(c, inContent) {
				drop = append(drop, c)
				continue
			}
			visit(c, inContent || c.Data == "article" || c.Data == "main")
		}
	}
	visit(root, inContent)
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
}

// directMarkdown converts a copy of the container c without its chrome,
// figure captions left out as in the extractions. It returns "" when the
// conversion fails.
func directMarkdown(c *html.Node, base *url.URL) string {
	inContent := c.Data == "article" || c.Data == "main" || hasAncestor(c, "article", "main")
	root := dom.CloneNode(c)
	stripChrome(root, inContent)
	markdown.CaptionsToParagraphs(root, false)
	markdown.FiguresToImages(root)
	markdown.Prepare(root)
	md, err := markdown.Convert(root, base)
	if err != nil {
		return ""
	}
	return md
}

// directFits is preferDirect's size test on token counts: the direct
// rendering (dTok tokens) may hold at most directMaxGrowth times the
// extraction's tokens (eTok) plus directSlack.
func directFits(eTok, dTok int) bool {
	return float64(dTok) <= directMaxGrowth*float64(eTok)+directSlack
}

// preferDirect reports whether the direct rendering of the main container
// should replace the extraction, both with any leading title heading
// removed: the direct rendering has words and the extraction has none, or
// it is not much bigger (directFits) and holds directMinCover of the
// extraction's shingles (all of its tokens, in order, when the extraction
// has fewer than shingleLen).
func preferDirect(extracted, direct string) bool {
	dt := tokenize(visibleText(direct))
	if len(dt) == 0 {
		return false
	}
	et := tokenize(visibleText(extracted))
	if len(et) == 0 {
		return true
	}
	if !directFits(len(et), len(dt)) {
		return false
	}
	if len(et) < shingleLen {
		return containsTokens(dt, et)
	}
	es, ds := shingles(et), shingles(dt)
	in := 0
	for h := range es {
		if _, ok := ds[h]; ok {
			in++
		}
	}
	return float64(in) >= directMinCover*float64(len(es))
}
