package markdown

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Text laid out with line breaks.
//
// Many blog templates (Blogger's post body among them) write an article as
// text directly inside a <div>, paragraphs separated by "<br><br>":
//
//	<div class="post-body">First paragraph.<br><br>Second one.<br>…</div>
//
// go-trafilatura handles such a <div> twice: once whole (as one paragraph
// holding every line) and once per <br>, whose tail text it turns into a
// paragraph of its own, so the article comes back two or three times; and
// readability, which splits "<br><br>" runs into paragraphs itself
// (Readability.js _replaceBrs), then no longer agrees with it block by
// block. BreaksToParagraphs gives both the structure a reader sees: in a
// block container (div, section, article, main, center) that holds text of
// its own next to a <br>, every run of text and inline elements between
// blocks and "<br><br>" gaps becomes a <p>. A single <br> inside a run
// stays a line break; the element's block children stay where they are.
func BreaksToParagraphs(doc *html.Node) {
	var targets []*html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Pre, atom.Code, atom.Script, atom.Style, atom.Svg, atom.Math, atom.Textarea, atom.Template:
				return false
			case atom.Div, atom.Section, atom.Article, atom.Main, atom.Center:
				if ownTextAndBreak(n) {
					targets = append(targets, n)
				}
			}
		}
		return true
	})

	for _, n := range targets {
		splitAtBreaks(n)
	}
}

// ownTextAndBreak reports whether n has a child text node with words and a
// child <br>.
func ownTextAndBreak(n *html.Node) bool {
	text, br := false, false
	for c := n.FirstChild; c != nil && !(text && br); c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			text = text || strings.TrimFunc(c.Data, isSpaceRune) != ""
		case c.Type == html.ElementNode && c.DataAtom == atom.Br:
			br = true
		}
	}
	return text && br
}

// inRun reports whether n belongs in a paragraph run: text, a comment, an
// inline element, an image or a line break.
func inRun(n *html.Node) bool {
	switch n.Type {
	case html.TextNode, html.CommentNode:
		return true
	case html.ElementNode:
		switch n.DataAtom {
		case atom.Br, atom.Wbr, atom.Img, atom.Picture:
			return true
		}
		return isPhrasing(n)
	}
	return false
}

// splitAtBreaks wraps the paragraph runs of n's children in <p> elements
// (see BreaksToParagraphs). Two or more <br> in a row (white space between
// them aside) end a paragraph and are removed, as are <br> at a
// paragraph's edges; a run without words or images is left as it is.
func splitAtBreaks(n *html.Node) {
	var run []*html.Node
	flush := func() {
		// Trim breaks and white space at the edges.
		start, end := 0, len(run)
		for start < end && edgeFiller(run[start]) {
			start++
		}
		for end > start && edgeFiller(run[end-1]) {
			end--
		}
		body := run[start:end]
		content := false
		for _, c := range body {
			content = content || c.Type == html.ElementNode || c.Type == html.TextNode && strings.TrimFunc(c.Data, isSpaceRune) != ""
		}
		if content {
			for _, c := range run[:start] {
				if dom.IsElem(c, "br") {
					n.RemoveChild(c)
				}
			}
			for _, c := range run[end:] {
				if dom.IsElem(c, "br") {
					n.RemoveChild(c)
				}
			}
			wrapParagraph(n, body)
		}
		run = run[:0]
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case !inRun(c):
			flush()
		case dom.IsElem(c, "br") && doubleBreak(c):
			// The first <br> of a gap: it ends the paragraph, and
			// the gap's other breaks are edge filler of the next.
			run = append(run, c)
			flush()
		default:
			run = append(run, c)
		}
		c = next
	}
	flush()
}

// edgeFiller reports whether c is a <br>, white space or a comment: what a
// paragraph run is trimmed of.
func edgeFiller(c *html.Node) bool {
	return dom.IsElem(c, "br") || c.Type == html.CommentNode || c.Type == html.TextNode && strings.TrimFunc(c.Data, isSpaceRune) == ""
}

// doubleBreak reports whether the <br> br is followed by another <br>,
// with only white space or comments between them.
func doubleBreak(br *html.Node) bool {
	for c := br.NextSibling; c != nil; c = c.NextSibling {
		switch {
		case dom.IsElem(c, "br"):
			return true
		case !edgeFiller(c):
			return false
		}
	}
	return false
}
