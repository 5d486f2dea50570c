package content

import (
	"net/url"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// mdConverter is shared: html-to-markdown converters are safe for
// concurrent use once built.
var mdConverter = converter.NewConverter(
	converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(
			commonmark.WithListEndComment(false),
			commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
			commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip),
		),
		strikethrough.NewStrikethroughPlugin(),
		table.NewTablePlugin(
			table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
			table.WithSpanCellBehavior(table.SpanBehaviorEmpty),
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
			table.WithSkipEmptyRows(true),
			table.WithHeaderPromotion(true),
		),
	),
)

// toMarkdown converts node to markdown, links absolute against base.
func toMarkdown(node *html.Node, base *url.URL) (string, error) {
	var opts []converter.ConvertOptionFunc
	if base != nil {
		opts = append(opts, converter.WithDomain(base.String()))
	}
	out, err := mdConverter.ConvertNode(node, opts...)
	if err != nil {
		return "", err
	}
	return strings.NewReplacer(cellBreak, "<br>", cellPipe, `\|`).Replace(string(out)), nil
}

// originals holds the page's own <pre> and <table> elements, keyed by their
// collapsed text, to undo the extractors' rewriting of those elements.
type originals struct {
	pre   map[string][]*html.Node
	table map[string][]*html.Node
}

// collectOriginals indexes every non-empty <pre> and outermost <table> of doc.
func collectOriginals(doc *html.Node) *originals {
	o := &originals{pre: map[string][]*html.Node{}, table: map[string][]*html.Node{}}
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.Data {
		case "pre":
			if k := textKey(n); k != "" {
				o.pre[k] = append(o.pre[k], n)
			}
			return false
		case "table":
			if k := textKey(n); k != "" {
				o.table[k] = append(o.table[k], n)
			}
			return false
		}
		return true
	})
	return o
}

// restoreOriginals replaces each code block or table in the extracted tree
// by a copy of the page's original element with the same text. The
// extractors turn <pre><code class="language-go"> into bare <code> and
// re-space text; the original keeps the class and the exact bytes.
func restoreOriginals(root *html.Node, o *originals) {
	if len(o.pre) == 0 && len(o.table) == 0 {
		return
	}
	// Each original is used once per call; the index itself stays intact
	// for the next extraction.
	pools := map[string]map[string][]*html.Node{"pre": copyPool(o.pre), "table": copyPool(o.table)}
	var swaps [][2]*html.Node
	walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == root {
			return true
		}
		var pool map[string][]*html.Node
		// Extractors build nodes without DataAtom, so compare tag names.
		switch n.Data {
		case "pre", "code", "blockquote", "p":
			// trafilatura turns <pre> into <code> or <blockquote>, and its
			// last-resort "baseline" into a plain <p>.
			pool = pools["pre"]
		case "table":
			pool = pools["table"]
		default:
			return true
		}
		if len(pool) == 0 {
			return true
		}
		k := textKey(n)
		cands := pool[k]
		if k == "" || len(cands) == 0 {
			return true
		}
		multiline := strings.Contains(textContent(cands[0]), "\n")
		if (n.Data == "code" && !isBlockCode(n) || n.Data == "p") && !multiline {
			// An inline code span or a sentence that happens to equal a
			// one-line <pre>.
			return true
		}
		pool[k] = cands[1:]
		swaps = append(swaps, [2]*html.Node{n, cloneNode(cands[0])})
		return false
	})
	for _, s := range swaps {
		old, repl := s[0], s[1]
		if old.Parent == nil {
			continue
		}
		old.Parent.InsertBefore(repl, old)
		old.Parent.RemoveChild(old)
	}
}

func copyPool(m map[string][]*html.Node) map[string][]*html.Node {
	c := make(map[string][]*html.Node, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// textKey is n's text with all white space removed: extractors re-space
// text and drop white-space-only nodes, so only the other characters can be
// compared.
func textKey(n *html.Node) string {
	return strings.Join(strings.Fields(textContent(n)), "")
}

// isBlockCode reports whether a <code> element stands for a code block: it
// is not inside a paragraph-like inline context, or its text spans lines.
func isBlockCode(n *html.Node) bool {
	if strings.Contains(textContent(n), "\n") {
		return true
	}
	if c := n.FirstChild; isElem(c, "code") {
		return true
	}
	return false
}

// cellBreak stands in for a <br> inside a table cell during conversion; it
// becomes "<br>" in the markdown, which GFM renders as a line break inside
// the cell without ending the row. Private-use code points keep it clear of
// real text.
const cellBreak = "\uE000br\uE001"

// cellPipe stands in for '|' inside code in a table cell: the converter
// does not escape code, but GFM needs "\|" there too, or the pipe splits
// the cell.
const cellPipe = "\uE000pipe\uE001"

// maxNesting is how many lists and block quotes may nest in the markdown.
// The converter re-indents (or re-prefixes with "> ") the whole content of
// a list item or quote at every level, so its time is the text times the
// nesting depth: 3.6 s for a 10 MB outline 32 levels deep. Deeper levels
// are kept as plain blocks of the deepest allowed item.
const maxNesting = 8

// prepareForMarkdown adjusts the tree before conversion: code blocks get a
// "language-x" class the converter understands, a <br> in a table cell
// becomes cellBreak, lists and quotes nested deeper than maxNesting become
// plain <div>s.
func prepareForMarkdown(root *html.Node) {
	var brs []*html.Node
	var visit func(n *html.Node, inCell, inCode bool, nest int)
	visit = func(n *html.Node, inCell, inCode bool, nest int) {
		switch n.Type {
		case html.TextNode:
			if inCell && inCode {
				n.Data = strings.ReplaceAll(n.Data, "|", cellPipe)
			}
		case html.ElementNode:
			switch n.Data {
			case "pre":
				setLanguage(n, codeLanguage(n))
				return
			case "td", "th":
				inCell = true
			case "table":
				inCell = false
			case "code", "kbd", "samp", "tt":
				inCode = true
			case "br":
				if inCell {
					brs = append(brs, n)
				}
			case "ul", "ol", "blockquote":
				if nest++; nest > maxNesting {
					n.Data, n.DataAtom = "div", atom.Div
				}
			case "li":
				if nest > maxNesting {
					n.Data, n.DataAtom = "div", atom.Div
				}
			case "dt":
				emboldenTerm(n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inCell, inCode, nest)
		}
	}
	visit(root, false, false, 0)
	for _, br := range brs {
		br.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: cellBreak}, br)
		br.Parent.RemoveChild(br)
	}
}

// emboldenTerm wraps the content of a definition list's <dt> in <strong>:
// GFM has no definition lists, so a term becomes a bold line above its
// definition's paragraph. A term that is already bold is left alone.
func emboldenTerm(dt *html.Node) {
	var kids []*html.Node
	for c := dt.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) == "" {
			continue
		}
		kids = append(kids, c)
	}
	if len(kids) == 0 || len(kids) == 1 && (isElem(kids[0], "strong") || isElem(kids[0], "b")) {
		return
	}
	strong := &html.Node{Type: html.ElementNode, Data: "strong", DataAtom: atom.Strong}
	for c := dt.FirstChild; c != nil; {
		next := c.NextSibling
		dt.RemoveChild(c)
		strong.AppendChild(c)
		c = next
	}
	dt.AppendChild(strong)
}

// codeLanguage finds the language of a code block from the class or data
// attributes of the <pre>, its <code> child, or the wrapper around the <pre>.
func codeLanguage(pre *html.Node) string {
	cands := []*html.Node{pre}
	for c := pre.FirstChild; c != nil; c = c.NextSibling {
		if isElem(c, "code") {
			cands = append(cands, c)
		}
	}
	if p := pre.Parent; isElem(p, "div") {
		cands = append(cands, p)
		if gp := p.Parent; isElem(gp, "div") {
			cands = append(cands, gp)
		}
	}
	for _, n := range cands {
		// lang="…" is a human language, so only the data attributes count.
		for _, key := range []string{"data-lang", "data-language"} {
			if v, ok := attr(n, key); ok && isLangName(v) {
				return strings.ToLower(v)
			}
		}
		class, _ := attr(n, "class")
		if lang := languageFromClass(class); lang != "" {
			return lang
		}
	}
	return ""
}

// languageFromClass reads a programming language from class names such as
// "language-go", "lang-go", "highlight-source-go", "brush: go;" or
// "sourceCode go".
func languageFromClass(class string) string {
	fields := strings.Fields(class)
	for i, f := range fields {
		lf := strings.ToLower(f)
		for _, prefix := range []string{"language-", "lang-", "highlight-source-", "highlight-", "brush:"} {
			if strings.HasPrefix(lf, prefix) {
				v := strings.TrimSuffix(lf[len(prefix):], ";")
				if v == "" && prefix == "brush:" && i+1 < len(fields) {
					v = strings.TrimSuffix(strings.ToLower(fields[i+1]), ";")
				}
				if isLangName(v) && v != "text" && v != "plain" && v != "none" {
					return v
				}
			}
		}
		if lf == "sourcecode" && i+1 < len(fields) && isLangName(fields[i+1]) {
			return strings.ToLower(fields[i+1])
		}
	}
	return ""
}

// isLangName accepts short identifiers such as "go", "c++", "objective-c",
// "shell-session"; anything with spaces or markup characters is refused so
// it cannot break the fence line.
func isLangName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '+' || r == '-' || r == '#' || r == '_' || r == '.':
		default:
			return false
		}
	}
	return true
}

// setLanguage makes sure the converter sees "language-<lang>" on the <pre>'s
// <code> child (or on the <pre> itself) and no other class it could read a
// language from; lang "" removes them all.
func setLanguage(pre *html.Node, lang string) {
	target := pre
	for c := pre.FirstChild; c != nil; c = c.NextSibling {
		if isElem(c, "code") {
			target = c
			break
		}
	}
	walk(pre, func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			removeAttr(n, "class")
		}
		return true
	})
	if lang != "" {
		target.Attr = append(target.Attr, html.Attribute{Key: "class", Val: "language-" + lang})
	}
}

// ---------------------------------------------------------------- tree helpers

// walk visits n and its descendants in document order; fn returns false to
// skip a node's children.
func walk(n *html.Node, fn func(*html.Node) bool) {
	if n == nil {
		return
	}
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

// isElem reports whether n is an element named name. Extractors create
// nodes without DataAtom, so the name is compared, not the atom.
func isElem(n *html.Node, name string) bool {
	return n != nil && n.Type == html.ElementNode && n.Data == name
}

// figuresToImages replaces every <figure> under root by a paragraph that
// holds only its images (<img>, or <picture> with its sources), and drops
// stray <figcaption> elements: captions, credits and gallery counters go.
func figuresToImages(root *html.Node) {
	var figs []*html.Node
	walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n != root && (n.Data == "figure" || n.Data == "figcaption") {
			figs = append(figs, n)
			return false
		}
		return true
	})
	for _, f := range figs {
		if f.Data == "figure" {
			p := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
			var imgs []*html.Node
			walk(f, func(n *html.Node) bool {
				if isElem(n, "img") || isElem(n, "picture") {
					imgs = append(imgs, n)
					return false
				}
				return true
			})
			for _, img := range imgs {
				img.Parent.RemoveChild(img)
				p.AppendChild(img)
			}
			if p.FirstChild != nil {
				f.Parent.InsertBefore(p, f)
			}
		}
		f.Parent.RemoveChild(f)
	}
}

// removeElements detaches every element under root named one of names.
func removeElements(root *html.Node, names ...string) {
	var drop []*html.Node
	walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n != root {
			for _, name := range names {
				if n.Data == name {
					drop = append(drop, n)
					return false
				}
			}
		}
		return true
	})
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func removeAttr(n *html.Node, key string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Key != key {
			out = append(out, a)
		}
	}
	n.Attr = out
}

// textContent concatenates the text nodes under n (script and style
// excluded).
func textContent(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
		case html.ElementNode:
			if c.Data == "script" || c.Data == "style" {
				return false
			}
		}
		return true
	})
	return b.String()
}

// collapseSpace trims s and turns every run of white space into one space.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cloneNode deep-copies n (detached from any tree).
func cloneNode(n *html.Node) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace}
	c.Attr = append([]html.Attribute(nil), n.Attr...)
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.AppendChild(cloneNode(ch))
	}
	return c
}
