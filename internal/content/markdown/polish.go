package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// textMarks turns the marks Polish puts in the page's text back into
// what they stand for: GapMark a space, LinkLeadMark nothing (image marks,
// inlineimg.go, go too: UnmarkText).
var textMarks = strings.NewReplacer(GapMark, " ", LinkLeadMark, "")

// UnmarkText is s, text read from the polished page (a heading, a byline,
// an extracted title), without Polish's marks (textMarks).
func UnmarkText(s string) string {
	s = dropImageMarks(s)
	if !strings.ContainsAny(s, GapMark+LinkLeadMark) {
		return s
	}
	return textMarks.Replace(s)
}

// CaptionsToParagraphs turns every non-empty <figcaption> under root into
// an italic paragraph of class captionClass, which FiguresToImages keeps
// under the image. Only the direct rendering of a small page does this:
// kept everywhere, captions lowered the extraction bench's F1 from 0.975
// to 0.974 (its reference texts mostly leave captions out).
func CaptionsToParagraphs(root *html.Node, sentencesOnly bool) {
	var caps []*html.Node
	dom.Walk(root, func(n *html.Node) bool {
		if dom.IsElem(n, "figcaption") && (!sentencesOnly || isSentence(dom.TextContent(n))) {
			caps = append(caps, n)
			return false
		}
		return true
	})

	for _, n := range caps {
		if strings.TrimSpace(dom.TextContent(n)) == "" {
			continue
		}
		wrapChildren(n, "em", atom.Em)
		n.Data, n.DataAtom = "p", atom.P
		n.Attr = []html.Attribute{{Key: "class", Val: captionClass}}
	}
}

// captionClass marks the paragraph a <figcaption> becomes
// (CaptionsToParagraphs). It must not contain "caption": the extractors
// drop elements of such classes.
const captionClass = "gatehouse-figtext"

// Polish rewrites page structures the extractors lose, before they run:
//   - a <figcaption> that reads as a sentence (isSentence) becomes an
//     italic paragraph after its <figure> (CaptionsToParagraphs,
//     moveCaptionsOut); the extractors drop figure captions;
//   - a checkbox <input> in a list item (GFM task list) becomes TaskDone or
//     TaskOpen text;
//   - a <footer> or <cite> inside a <blockquote> (the quote's attribution)
//     becomes a paragraph inside the quote;
//   - Discourse's <aside class="quote"> becomes a block quote holding its
//     title ("alice:") and the quoted text;
//   - two adjacent inline elements with classes and no space between them
//     ("<span class=user>alice</span><span class=date>Jan 3</span>",
//     laid out apart by CSS) get a space between them;
//   - the white space between a text and an inline element next to it
//     ("an <em>outbox</em> table") becomes GapMark (see keepInlineGaps);
//   - a block ("<div>Item head</div><div>Item body</div>", a span laid
//     out as a block) and what follows it with no white space between
//     get a space between them (boxedNextTo): a browser puts them on
//     two lines, the extractors glued them into one word inside list
//     items and cells;
//   - a heading holding the blocks after it (an unclosed <h1>) ends before
//     them (splitHeadings);
//   - a link without text gets its name (markTextlessLinks, linkname.go);
//   - a link whose content opens with an element ("<a><code>x</code></a>")
//     gets LinkLeadMark as its first text (markElementLinks, linkname.go);
//   - a code listing laid out as a table with line numbers becomes a code
//     block (listingsToCode, tables.go).
func Polish(doc *html.Node) {
	splitHeadings(doc)
	markTextlessLinks(doc)
	markElementLinks(doc)
	listingsToCode(doc) // tables.go (the code keeps its wrappers' language)
	CaptionsToParagraphs(doc, true)
	moveCaptionsOut(doc)
	var inputs, attribs, asides, gaps, spaced, details []*html.Node
	var visit func(n *html.Node, inCode, inQuote bool)
	visit = func(n *html.Node, inCode, inQuote bool) {
		if n.Type == html.TextNode && !inCode && (isPhrasing(n.PrevSibling) || isPhrasing(n.NextSibling)) {
			spaced = append(spaced, n)
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "pre", "code", "script", "style", "svg", "math", "textarea":
				inCode = true
			case "input":
				if t, _ := dom.Attr(n, "type"); strings.EqualFold(t, "checkbox") && leadsItem(n) {
					inputs = append(inputs, n)
				}
			case "details":
				details = append(details, n)
			case "blockquote":
				inQuote = true
			case "footer", "cite":
				if inQuote {
					attribs = append(attribs, n)
					return
				}
			case "aside":
				if dom.HasAnyClass(n, []string{"quote"}) {
					asides = append(asides, n)
				}
			}
			if !inCode && (spacedInline(n) && spacedInline(n.NextSibling) || boxedNextTo(n)) && endsWord(n) && startsWord(n.NextSibling) {
				gaps = append(gaps, n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inCode, inQuote)
		}
	}
	visit(doc, false, false)
	for _, n := range inputs {
		mark := TaskOpen
		if _, ok := dom.Attr(n, "checked"); ok {
			mark = TaskDone
		}
		n.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: mark + " "}, n)
		n.Parent.RemoveChild(n)
	}
	for _, n := range attribs {
		if n.Data == "cite" && !lastInParent(n) {
			continue // an inline title in the quoted text
		}
		n.Data, n.DataAtom = "p", atom.P
	}
	for _, n := range asides {
		var title, quote *html.Node
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case dom.IsElem(c, "blockquote") && quote == nil:
				quote = c
			case c.Type == html.ElementNode && dom.HasAnyClass(c, []string{"title"}) && title == nil:
				title = c
			}
		}
		n.Data, n.DataAtom = "div", atom.Div
		if quote != nil && title != nil {
			n.RemoveChild(title)
			title.Data, title.DataAtom = "p", atom.P
			quote.InsertBefore(title, quote.FirstChild)
		}
	}
	for _, n := range spaced {
		keepInlineGaps(n)
	}
	for _, n := range details {
		blockDetails(n)
	}
	for _, n := range gaps {
		// (The extractors drop a white-space-only node between the two
		// and trim a leading space: GapMark survives, Convert makes it
		// a space.)
		done := false
		dom.Walk(n.NextSibling, func(c *html.Node) bool {
			if !done && c.Type == html.TextNode && c.Data != "" {
				c.Data = GapMark + c.Data
				done = true
			}
			return !done
		})

	}
}

// phrasingElements are the inline elements whose neighbouring white space
// go-trafilatura drops inside list items, definitions and table cells
// ("an <em>outbox</em> table" became "*outbox*table").
var phrasingElements = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true, atom.Cite: true,
	atom.Code: true, atom.Data: true, atom.Del: true, atom.Dfn: true, atom.Em: true, atom.I: true,
	atom.Ins: true, atom.Kbd: true, atom.Mark: true, atom.Q: true, atom.S: true, atom.Samp: true,
	atom.Small: true, atom.Span: true, atom.Strong: true, atom.Sub: true, atom.Sup: true,
	atom.Time: true, atom.U: true, atom.Var: true, atom.Strike: true, atom.Tt: true, atom.Font: true,
}

// isPhrasing reports whether n is one of phrasingElements.
// blockDetails gives a <details> element the block structure a browser
// renders: the <summary> is a block of its own (display: list-item), so it
// becomes a paragraph whose text is strong (how the converters wrote it),
// and runs of text and inline elements after it are wrapped in a <p> (the
// block box the browser puts them in). Otherwise the converters
// write the summary and a text answer as one line ("**How often?**Every
// night.").
func blockDetails(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if !dom.IsElem(c, "summary") {
			continue
		}
		wrapChildren(c, "strong", atom.Strong)
		c.Data, c.DataAtom, c.Attr = "p", atom.P, nil
		break // only the first <summary> is the control
	}
	// The rest: runs of text and inline elements in a <p> each.
	var run []*html.Node
	flush := func() {
		words := false
		for _, c := range run {
			words = words || c.Type == html.ElementNode || strings.TrimFunc(c.Data, isSpaceRune) != ""
		}
		if words {
			wrapParagraph(n, run)
		}
		run = run[:0]
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.TextNode || isPhrasing(c) {
			run = append(run, c)
		} else {
			flush()
		}
		c = next
	}
	flush()
}

func isPhrasing(n *html.Node) bool {
	return n != nil && n.Type == html.ElementNode && phrasingElements[n.DataAtom]
}

// keepInlineGaps makes the white space that separates text node n from an
// inline element next to it survive extraction: go-trafilatura trims the
// text around inline elements inside list items and definitions, which
// glues words together. The run of white space at the start (when an
// inline element comes before n) or at the end (when one comes after) of
// a text node with words becomes one GapMark, which Convert writes as a
// space; a white-space-only node between two inline elements becomes
// GapMark too.
func keepInlineGaps(n *html.Node) {
	t := n.Data
	core := strings.TrimFunc(t, isSpaceRune)
	prev, next := isPhrasing(n.PrevSibling), isPhrasing(n.NextSibling)
	if core == "" {
		if prev && next && t != "" {
			n.Data = GapMark
		}
		return
	}
	lead := t[:strings.IndexFunc(t, func(r rune) bool { return !isSpaceRune(r) })]
	trail := t[len(strings.TrimRightFunc(t, isSpaceRune)):]
	if prev && lead != "" {
		lead = GapMark
	}
	if next && trail != "" {
		trail = GapMark
	}
	n.Data = lead + core + trail
}

// isSpaceRune reports whether r is ASCII white space as HTML defines it
// (space, tab, LF, FF, CR): a no-break space is text.
func isSpaceRune(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

// spacedInline reports whether n is an inline element that a page lays
// out apart from its neighbours: a <span>, <a>, <time> or <small> with a
// class.
func spacedInline(n *html.Node) bool {
	if n == nil || n.Type != html.ElementNode {
		return false
	}
	switch n.Data {
	case "span", "a", "time", "small":
	default:
		return false
	}
	_, ok := dom.Attr(n, "class")
	return ok || n.Data == "time"
}

// endsWord reports whether n's text ends with a letter, digit or closing
// punctuation (no white space); startsWord whether it starts with a letter
// or digit. They look at the last (first) text node only, within
// edgeSteps nodes, so that nested elements cost no more than a few steps
// each.
func endsWord(n *html.Node) bool {
	t := edgeText(n, true)
	r, _ := utf8.DecodeLastRuneInString(t)
	return t != "" && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(".,:;!?)]", r))
}

func startsWord(n *html.Node) bool {
	t := edgeText(n, false)
	r, _ := utf8.DecodeRuneInString(t)
	return t != "" && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// edgeSteps bounds the nodes edgeText visits.
const edgeSteps = 32

// edgeText returns the text of the last (last=true) or first text node
// under n, or "" when none is found within edgeSteps nodes.
func edgeText(n *html.Node, last bool) string {
	steps := 0
	var find func(n *html.Node) (string, bool)
	find = func(n *html.Node) (string, bool) {
		if steps++; steps > edgeSteps {
			return "", true
		}
		if n.Type == html.TextNode {
			return n.Data, n.Data != ""
		}
		c := n.FirstChild
		if last {
			c = n.LastChild
		}
		for c != nil {
			if t, done := find(c); done {
				return t, true
			}
			if last {
				c = c.PrevSibling
			} else {
				c = c.NextSibling
			}
		}
		return "", false
	}
	t, _ := find(n)
	return t
}

// leadsItem reports whether the checkbox n is the first content of a list
// item: no text comes before it in its <li>.
func leadsItem(n *html.Node) bool {
	li := n.Parent
	for li != nil && !dom.IsElem(li, "li") {
		li = li.Parent
	}
	if li == nil {
		return false
	}
	lead := true
	found := false
	dom.Walk(li, func(c *html.Node) bool {
		if found || !lead {
			return false
		}
		switch {
		case c == n:
			found = true
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "":
			lead = false
		}
		return !found && lead
	})

	return found && lead
}

// lastInParent reports whether n is the last child of its parent that is
// not white space (a quote's closing attribution).
func lastInParent(n *html.Node) bool {
	for c := n.NextSibling; c != nil; c = c.NextSibling {
		if c.Type != html.TextNode || strings.TrimSpace(c.Data) != "" {
			return false
		}
	}
	return n.Parent != nil && dom.IsElem(n.Parent, "blockquote")
}

// isBacklink reports whether a is a footnote's "jump back" mark (MediaWiki's
// "^" or "↑" pointing at #cite_ref-…): it carries no text of its own.
func isBacklink(a *html.Node) bool {
	href, _ := dom.Attr(a, "href")
	if !strings.Contains(href, "#cite_ref") {
		return false
	}
	switch strings.TrimSpace(dom.TextContent(a)) {
	case "^", "↑", "":
		return true
	}
	return false
}

// isSentence reports whether s reads as a sentence: at least six words,
// ending with ".", "!" or "?".
func isSentence(s string) bool {
	s = strings.TrimSpace(s)
	return atLeastFields(s, 6) && strings.ContainsAny(s[len(s)-1:], ".!?")
}

// moveCaptionsOut moves every captionClass paragraph inside a <figure> to
// right after the figure: the extractors drop a figure's text.
func moveCaptionsOut(doc *html.Node) {
	var ps []*html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if dom.IsElem(n, "p") && dom.HasAnyClass(n, []string{captionClass}) {
			ps = append(ps, n)
			return false
		}
		return true
	})

	for _, p := range ps {
		f := p.Parent
		for f != nil && !dom.IsElem(f, "figure") {
			f = f.Parent
		}
		if f != nil && f.Parent != nil {
			p.Parent.RemoveChild(p)
			f.Parent.InsertBefore(p, f.NextSibling)
		}
	}
}

// headingBlocks are the block elements that end a heading's own text when
// the heading holds them: the HTML parser puts everything after an
// unclosed "<h1>Title" inside it ("<h1>Title<p>…</p><p>…</p>"), and the
// converters then wrote the whole article as one heading line, twice when
// the two extractors disagreed about it.
var headingBlocks = map[string]bool{
	"p": true, "div": true, "section": true, "article": true, "ul": true, "ol": true, "dl": true,
	"table": true, "blockquote": true, "pre": true, "figure": true, "hr": true, "form": true,
	"header": true, "footer": true, "main": true, "aside": true, "nav": true, "address": true,
	"details": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
}

// splitHeadings moves the blocks a heading holds out of it, after it, in
// order: the heading keeps its leading text and inline elements, or, when
// it has none, its first block (a "<h1><div>Title</div></h1>" stays).
func splitHeadings(doc *html.Node) {
	var heads []*html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && dom.IsHeading(n.DataAtom) {
			heads = append(heads, n)
		}
		return true
	})

	for _, h := range heads {
		if h.Parent == nil {
			continue
		}
		words := false
		var cut *html.Node
		for c := h.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && headingBlocks[c.Data] {
				if !words && cut == nil && !dom.IsHeading(c.DataAtom) {
					words = strings.TrimFunc(dom.TextContent(c), isSpaceRune) != ""
					continue // the heading's text is this block
				}
				cut = c
				break
			}
			words = words || c.Type == html.ElementNode || c.Type == html.TextNode && strings.TrimFunc(c.Data, isSpaceRune) != ""
		}
		if cut == nil || !words {
			continue
		}
		after := h.NextSibling
		for c := cut; c != nil; {
			next := c.NextSibling
			h.RemoveChild(c)
			h.Parent.InsertBefore(c, after)
			c = next
		}
	}
}

// boxBlocks are the elements a browser lays out as blocks by default.
var boxBlocks = map[string]bool{
	"div": true, "p": true, "section": true, "article": true, "header": true, "footer": true,
	"aside": true, "nav": true, "main": true, "figure": true, "figcaption": true, "address": true,
	"ul": true, "ol": true, "li": true, "dl": true, "dt": true, "dd": true, "table": true,
	"blockquote": true, "pre": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true,
	"h6": true, "hr": true, "form": true, "fieldset": true, "details": true, "summary": true,
}

// isBoxed reports whether element n is laid out as a box of its own: a
// block element, or an element whose inline style sets display to block,
// flex, grid, list-item or a table part.
func isBoxed(n *html.Node) bool {
	if n == nil || n.Type != html.ElementNode {
		return false
	}
	if v, ok := dom.Attr(n, "style"); ok && strings.Contains(strings.ToLower(v), "display") {
		for _, decl := range strings.Split(strings.ToLower(v), ";") {
			k, val, ok := strings.Cut(decl, ":")
			if !ok || strings.TrimSpace(k) != "display" {
				continue
			}
			val = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "!important"))
			switch {
			case val == "inline", val == "contents", val == "none":
				return false
			case strings.HasPrefix(val, "inline"):
				return true // inline-block, inline-flex: a box all the same
			default:
				return true
			}
		}
	}
	return boxBlocks[n.Data]
}

// boxedNextTo reports whether n or its next sibling is a box (isBoxed),
// the sibling is an element or text, and their parent is a list item, a
// cell, a definition or an inline element: a browser separates them, the
// extractors glued them there. (Between the blocks of an article the
// converters separate them already.)
func boxedNextTo(n *html.Node) bool {
	next := n.NextSibling
	if next == nil || next.Type != html.ElementNode && next.Type != html.TextNode {
		return false
	}
	if !isBoxed(n) && !isBoxed(next) {
		return false
	}
	p := n.Parent
	if p == nil || p.Type != html.ElementNode {
		return false
	}
	switch p.Data {
	case "li", "td", "th", "dd", "dt", "caption", "figcaption", "label", "button", "summary", "legend":
		return true
	}
	return isPhrasing(p)
}

// wrapParagraph moves nodes (consecutive children of parent, at least one)
// into a new <p> put where the first of them was.
func wrapParagraph(parent *html.Node, nodes []*html.Node) {
	p := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
	parent.InsertBefore(p, nodes[0])
	for _, c := range nodes {
		parent.RemoveChild(c)
		p.AppendChild(c)
	}
}
