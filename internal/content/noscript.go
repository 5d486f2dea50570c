package content

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/visibility"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The page as a client without scripts sees it.
//
// Gatehouse fetches pages without running their scripts. Some sites send
// such clients their whole content inside a <noscript> (Discourse forums
// put the thread there, as "crawler view", and render the rest with
// scripts); the parser, which reads <noscript> as a script-enabled browser
// does, keeps that markup as one raw text node, which the extractors then
// return as escaped HTML source. openNoscriptView parses such a <noscript>
// as a browser with scripting disabled does (HTML §13.2.6.4.4: its content
// is ordinary markup) and puts the result in its place, when it holds at
// least noscriptMinShare of the page's text: then it is the page, not a
// fallback notice or a tracking pixel. Smaller <noscript> elements are
// left as they are (what a script-enabled browser renders: nothing).
const noscriptMinShare = 0.5

// noscriptMinChars: a <noscript> whose raw markup is shorter than this
// cannot be a page's content and is not parsed.
const noscriptMinChars = 512

// openNoscriptView replaces each large <noscript> of doc's <body> (see
// above) with the nodes its markup parses to, in the context of its parent
// element. It runs before visibility.DropHidden, which then judges the new nodes like
// any others.
func openNoscriptView(doc *html.Node) {
	var cands []*html.Node
	inBody := false
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.Head, atom.Script, atom.Style, atom.Template, atom.Svg, atom.Math:
			return false
		case atom.Body:
			inBody = true
		case atom.Noscript:
			if inBody && rawLen(n) >= noscriptMinChars {
				cands = append(cands, n)
			}
			return false
		}
		return true
	})

	if len(cands) == 0 {
		return
	}
	type view struct {
		n     *html.Node
		nodes []*html.Node
		chars int
	}
	var views []view
	viewChars := 0
	for _, n := range cands {
		ctx := n.Parent
		if ctx == nil || ctx.Type != html.ElementNode {
			continue
		}
		nodes, err := html.ParseFragment(strings.NewReader(dom.RawText(n)), &html.Node{Type: html.ElementNode, Data: ctx.Data, DataAtom: ctx.DataAtom})
		if err != nil {
			continue
		}
		chars := 0
		for _, c := range nodes {
			chars += visibility.TextLen(c, nil)
		}
		views = append(views, view{n, nodes, chars})
		viewChars += chars
	}
	// The rest of the page's text (visibility.TextLen skips <noscript>).
	total := visibility.TextLen(doc, nil) + viewChars
	for _, v := range views {
		if v.chars == 0 || float64(v.chars) < noscriptMinShare*float64(total) {
			continue
		}
		for _, c := range v.nodes {
			v.n.Parent.InsertBefore(c, v.n)
		}
		v.n.Parent.RemoveChild(v.n)
	}
}

// rawLen is the length of the raw text children of a <noscript>.
func rawLen(n *html.Node) int {
	l := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			l += len(c.Data)
		}
	}
	return l
}
