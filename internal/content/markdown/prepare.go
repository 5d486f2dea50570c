package markdown

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/metadata"
)

// Convert converts node to markdown, links absolute against base
// (Render), with the image marks dropped and IPv6 hosts restored. node is
// a tree after Prepare; base may be nil (links are left as they are).
func Convert(node *html.Node, base *url.URL) (string, error) {
	md, err := Render(node, base)
	if err != nil {
		return "", err
	}
	return metadata.RestoreIPv6Hosts(dropImageMarks(md)), nil
}

// Originals holds the page's own <pre> and <table> elements, keyed by their
// collapsed text, to undo the extractors' rewriting of those elements.
// CollectOriginals builds it once per page, before extraction;
// RestoreOriginals uses it on each extracted tree and leaves it intact.
type Originals struct {
	pre   map[string][]*html.Node
	table map[string][]*html.Node
	// looseTable indexes the tables by looseKey: trafilatura drops the
	// text after an inline element in a cell ("e.g. <code>x</code>.").
	looseTable map[string][]*html.Node
	// tables are the outermost tables in document order, for the match
	// of a table that lost text (lossyTableMatch, tables.go).
	tables []*html.Node
	// nest indexes the page's containers holding nested blocks
	// (restoreNesting).
	nest nestIndex
	// linkNames are the names of the page's links without text, by
	// target (collectLinkNames, linkname.go).
	linkNames map[string]string
	// Images are the page's images in running text, by the index their
	// mark holds: the caller sets them to what MarkInlineImages returned
	// for the same page.
	Images []*html.Node
}

// CollectOriginals indexes every non-empty <pre> and outermost <table> of doc.
func CollectOriginals(doc *html.Node) *Originals {
	o := &Originals{pre: map[string][]*html.Node{}, table: map[string][]*html.Node{}, looseTable: map[string][]*html.Node{}, nest: collectNested(doc), linkNames: collectLinkNames(doc)}
	dom.Walk(doc, func(n *html.Node) bool {
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
				lk := looseKey(k)
				o.looseTable[lk] = append(o.looseTable[lk], n)
				o.tables = append(o.tables, n)
			}
			return false
		}
		return true
	})

	return o
}

// RestoreOriginals gives the extracted tree back the page's nested blocks
// (restoreNesting), then replaces each code block or table in it by a copy
// of the page's original element with the same text. The
// extractors turn <pre><code class="language-go"> into bare <code> and
// re-space text; the original keeps the class and the exact bytes.
func RestoreOriginals(root *html.Node, o *Originals) {
	restoreNesting(root, o.nest)
	nameTextlessLinks(root, o.linkNames)
	restoreInlineImages(root, o.Images)
	if len(o.pre) == 0 && len(o.table) == 0 {
		return
	}
	// Each original is used once per call; the index itself stays intact
	// for the next extraction.
	pools := map[string]map[string][]*html.Node{"pre": copyPool(o.pre), "table": copyPool(o.table)}
	loose := copyPool(o.looseTable)
	used := map[*html.Node]bool{}
	lossy := lossyTables{page: o.tables, keys: map[*html.Node][][]string{}}
	var swaps [][2]*html.Node
	dom.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == root {
			return true
		}
		var pool map[string][]*html.Node

		switch n.Data {
		case "pre", "code", "blockquote", "p":

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
		for len(cands) > 0 && used[cands[0]] {
			cands = cands[1:]
		}
		if len(cands) == 0 && n.Data == "table" && k != "" {

			lk := looseKey(k)
			for len(loose[lk]) > 0 && used[loose[lk][0]] {
				loose[lk] = loose[lk][1:]
			}
			cands = loose[lk]
			if len(cands) > 0 {
				loose[lk] = cands[1:]
			}
		}
		if len(cands) == 0 && n.Data == "table" && k != "" {
			cands = lossy.match(n, used)
		}
		if k == "" || len(cands) == 0 {
			return true
		}
		multiline := strings.Contains(dom.TextContent(cands[0]), "\n")
		if (n.Data == "code" && !isBlockCode(n) || n.Data == "p") && !multiline {

			return true
		}
		used[cands[0]] = true

		repl := dom.CloneNode(cands[0])
		if repl.Data == "pre" {
			setLanguage(repl, codeLanguage(cands[0]))
		}
		swaps = append(swaps, [2]*html.Node{n, repl})
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

// looseKey keeps only the letters and digits of a textKey.
func looseKey(k string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, k)
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
	t := dom.TextContent(n)
	var b strings.Builder
	b.Grow(len(t))
	for f := range strings.FieldsSeq(t) {
		b.WriteString(f)
	}
	return b.String()
}

// isBlockCode reports whether a <code> element stands for a code block: its
// text spans lines, it wraps another <code>, or it stands alone in a block
// container (no text beside it) rather than inside a paragraph.
func isBlockCode(n *html.Node) bool {
	if strings.Contains(dom.TextContent(n), "\n") {
		return true
	}
	if c := n.FirstChild; dom.IsElem(c, "code") {
		return true
	}
	// trafilatura turns a one-line <pre> into a <code> standing alone
	// between blocks (an inline span sits in a <p> or among text).
	p := n.Parent
	if p == nil || p.Type != html.ElementNode {
		return false
	}
	switch p.Data {
	case "body", "div", "section", "article", "main", "blockquote", "figure":
	default:
		return false
	}
	for c := p.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
			return false
		}
	}
	return true
}

// maxNesting is how many lists and block quotes may nest in the markdown.
// The converter re-indents (or re-prefixes with "> ") the whole content of
// a list item or quote at every level, so its time is the text times the
// nesting depth: 3.6 s for a 10 MB outline 32 levels deep. Deeper levels
// are kept as plain blocks of the deepest allowed item.
const maxNesting = 8

// Prepare adjusts the tree before conversion: code blocks get a
// "language-x" class the converter understands, a <br> in a table cell
// becomes CellBreak, lists and quotes nested deeper than maxNesting become
// plain <div>s, permalink marks and script links go (cleanLinks), link
// targets are repaired (repairHref) and lazy images get a src (setLazySrc).
func Prepare(root *html.Node) {
	cleanLinks(root)
	nameTextlessLinks(root, nil)
	listingsToCode(root)
	flattenNestedTables(root)
	var brs []*html.Node
	var visit func(n *html.Node, inCell, inCode bool, nest int)
	visit = func(n *html.Node, inCell, inCode bool, nest int) {
		switch n.Type {
		case html.TextNode:
			if inCell && inCode {
				n.Data = strings.ReplaceAll(n.Data, "|", CellPipe)
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
			case "a", "area":
				repairHref(n)
			case "img":
				setLazySrc(n, nil)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inCell, inCode, nest)
		}
	}
	visit(root, false, false, 0)
	for _, br := range brs {
		br.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: CellBreak}, br)
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
	if len(kids) == 0 || len(kids) == 1 && (dom.IsElem(kids[0], "strong") || dom.IsElem(kids[0], "b")) {
		return
	}
	wrapChildren(dt, "strong", atom.Strong)
}

// wrapChildren moves every child of n into a new <tag> element, which becomes
// n's only child, and returns it.
func wrapChildren(n *html.Node, tag string, a atom.Atom) *html.Node {
	w := &html.Node{Type: html.ElementNode, Data: tag, DataAtom: a}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		n.RemoveChild(c)
		w.AppendChild(c)
		c = next
	}
	n.AppendChild(w)
	return w
}

// codeLanguage finds the language of a code block from the class or data
// attributes of the <pre>, its <code> child, or the wrapper around the <pre>.
func codeLanguage(pre *html.Node) string {
	cands := []*html.Node{pre}
	for c := pre.FirstChild; c != nil; c = c.NextSibling {
		if dom.IsElem(c, "code") {
			cands = append(cands, c)
		}
	}
	// Wrappers: GitHub's <div class="highlight highlight-source-rust"><pre>,
	// Sphinx's <div class="highlight-python"><div class="highlight"><pre>,
	// Jekyll's <div class="language-ruby highlighter-rouge"> two levels up.
	for p, i := pre.Parent, 0; i < maxLangAncestors && dom.IsElem(p, "div"); p, i = p.Parent, i+1 {
		cands = append(cands, p)
	}
	for _, n := range cands {
		// lang="…" is a human language, so only the data attributes count.
		for _, key := range []string{"data-lang", "data-language"} {
			if v, ok := dom.Attr(n, key); ok && isLangName(v) {
				return strings.ToLower(v)
			}
		}
		class, _ := dom.Attr(n, "class")
		if lang := languageFromClass(class); lang != "" {
			return lang
		}
	}
	return ""
}

// maxLangAncestors is how many <div> wrappers above a <pre> are searched
// for its language.
const maxLangAncestors = 3

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
		if dom.IsElem(c, "code") {
			target = c
			break
		}
	}
	dom.Walk(pre, func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			dom.RemoveAttr(n, "class")
		}
		return true
	})

	if lang != "" {
		target.Attr = append(target.Attr, html.Attribute{Key: "class", Val: "language-" + lang})
	}
}

// ---------------------------------------------------------------- tree helpers

// FiguresToImages replaces every <figure> under root by a paragraph that
// holds only its images (<img>, or <picture> with its sources), followed by
// its caption when Polish made it a paragraph of class captionClass,
// and drops stray <figcaption> elements: credits and gallery counters go.
func FiguresToImages(root *html.Node) {
	var figs []*html.Node
	dom.Walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n != root && (n.Data == "figure" || n.Data == "figcaption") {
			figs = append(figs, n)
			return false
		}
		return true
	})

	for _, f := range figs {
		if f.Data == "figure" {
			p := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
			var imgs, caps []*html.Node
			dom.Walk(f, func(n *html.Node) bool {
				switch {
				case dom.IsElem(n, "img") || dom.IsElem(n, "picture"):
					imgs = append(imgs, n)
					return false
				case dom.IsElem(n, "p") && dom.HasAnyClass(n, []string{captionClass}):
					caps = append(caps, n)
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
			for _, c := range caps {
				c.Parent.RemoveChild(c)
				f.Parent.InsertBefore(c, f)
			}
		}
		f.Parent.RemoveChild(f)
	}
}

// RemoveElements detaches every element under root named one of names.
func RemoveElements(root *html.Node, names ...string) {
	var drop []*html.Node
	dom.Walk(root, func(n *html.Node) bool {
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

// ---------------------------------------------------------------- links and images

// permalinkMarks are the texts of the "link to this heading" anchors that
// documentation generators put in headings (Sphinx "¶", GitHub "#", "§",
// "🔗").
var permalinkMarks = map[string]bool{"": true, "¶": true, "#": true, "§": true, "🔗": true, "🔗\uFE0F": true}

// isPermalink reports whether a is a "link to this section" mark: class
// headerlink (Sphinx), or class anchor / header-anchor / hash-link /
// anchor-link (GitHub, VitePress, Docusaurus, Jupyter) with only a mark as
// text, or any in-page link whose text is only a mark. An empty anchor
// counts only when it is aria-hidden or holds an aria-hidden icon and no
// image.
func isPermalink(a *html.Node) bool {
	class, _ := dom.Attr(a, "class")
	classes := strings.Fields(strings.ToLower(class))
	if slices.Contains(classes, "headerlink") {
		return true
	}
	text := strings.TrimSpace(dom.TextContent(a))
	if !permalinkMarks[text] {
		return false
	}
	href, _ := dom.Attr(a, "href")
	marked := strings.Contains(href, "#")
	for _, c := range classes {
		switch c {
		case "anchor", "header-anchor", "hash-link", "anchor-link", "heading-anchor", "anchorjs-link":
			marked = true
		}
	}
	if !marked {
		return false
	}
	if text != "" {
		return true
	}
	hidden, image := false, false
	dom.Walk(a, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if v, _ := dom.Attr(n, "aria-hidden"); v == "true" {
			hidden = true
		}
		switch n.Data {
		case "img", "picture":
			image = true
		case "svg":

			hidden = true
		}
		return true
	})

	return hidden && !image
}

// cleanLinks removes every permalink mark (isPermalink) under root, so
// headings and titles do not end in "¶" or "[#](…#id)", and replaces every
// link whose target is javascript:, vbscript: or a non-image data: URI by
// its content (the text stays, the target goes).
func cleanLinks(root *html.Node) {
	var drop, unwrap []*html.Node
	dom.Walk(root, func(n *html.Node) bool {
		if !dom.IsElem(n, "a") || n == root {
			return true
		}
		if isPermalink(n) || isBacklink(n) {
			drop = append(drop, n)
			return false
		}
		if scriptTarget(n) {
			unwrap = append(unwrap, n)
		}
		return true
	})

	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
	for _, n := range unwrap {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			n.RemoveChild(c)
			n.Parent.InsertBefore(c, n)
			c = next
		}
		n.Parent.RemoveChild(n)
	}
}

// AbsolutizeLinks resolves a[href], img[src] and img[data-src] against
// base (RFC 3986 via net/url), before the extractors see the page:
// go-trafilatura resolves "../x" against the page URL as if it were a
// directory, so it must only ever meet absolute URLs. Fragment-only links,
// mailto:/tel: links and unparsable values are left alone; javascript:,
// vbscript: and data: link targets are removed (the text stays). It also
// drops permalink marks (cleanLinks) and gives lazy images their real
// src (setLazySrc), so that the extractors keep them. base may be nil
// (nothing is resolved).
func AbsolutizeLinks(doc *html.Node, base *url.URL) {
	cleanLinks(doc)
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		var keys []string
		switch n.Data {
		case "a", "area":
			keys = []string{"href"}

			repairHref(n)
		case "img":
			keys = []string{"src", "data-src"}
			setLazySrc(n, base)
		default:
			return true
		}
		if base == nil {
			return true
		}
		for i, a := range n.Attr {
			if a.Namespace != "" || !slices.Contains(keys, a.Key) {
				continue
			}
			v := strings.TrimSpace(a.Val)
			if v == "" || strings.HasPrefix(v, "#") || linkScheme(v) != "" {
				continue
			}
			ref, err := url.Parse(v)
			if err != nil {
				continue
			}
			n.Attr[i].Val = base.ResolveReference(ref).String()
		}
		return true
	})

}

// scriptTarget reports whether link a points at javascript:, vbscript: or
// a data: URI other than an image, also when an extractor resolved it as a
// relative path.
func scriptTarget(a *html.Node) bool {
	v, ok := dom.Attr(a, "href")
	if !ok {
		return false
	}
	v = strings.TrimSpace(v)
	if j := embeddedScheme(v); j >= 0 {
		v = v[j:]
	}
	s := linkScheme(v)
	if s == "data:" {
		return !strings.HasPrefix(strings.ToLower(strings.TrimLeft(v, " \t\r\n\f\x00")), "data:image/")
	}
	return slices.Contains(droppedSchemes, s)
}

// keptSchemes are the non-hierarchical link schemes kept as written: they
// must never be resolved against the page's URL.
var keptSchemes = []string{"mailto:", "tel:", "sms:", "callto:"}

// droppedSchemes are link schemes that run code or embed a document; such a
// link keeps its text and loses its target. (data: is fine for images.)
var droppedSchemes = []string{"javascript:", "vbscript:", "data:"}

// linkSchemes is keptSchemes and droppedSchemes.
var linkSchemes = append(slices.Clip(keptSchemes), droppedSchemes...)

// linkScheme returns the lower-cased "scheme:" prefix of href when it is
// one of keptSchemes or droppedSchemes, else "". Leading white space and
// control characters are ignored, as browsers do.
func linkScheme(href string) string {
	h := strings.ToLower(strings.TrimLeft(href, " \t\r\n\f\x00"))
	for _, s := range linkSchemes {
		if strings.HasPrefix(h, s) {
			return s
		}
	}
	return ""
}

// repairHref fixes the target of a link element: a mailto:/tel: target an
// extractor resolved as a relative path ("https://ex.com/a/mailto:x@y")
// gets back its own form, and a javascript:/vbscript:/data: target is
// removed so only the link text remains.
func repairHref(a *html.Node) {
	for i, at := range a.Attr {
		if at.Namespace != "" || at.Key != "href" {
			continue
		}
		v := strings.TrimSpace(at.Val)
		if linkScheme(v) == "" {
			if j := embeddedScheme(v); j >= 0 {
				v = v[j:]
				if u, err := url.PathUnescape(v); err == nil {
					v = u
				}
			}
		}
		switch s := linkScheme(v); {
		case s == "":
		case slices.Contains(droppedSchemes, s):
			// cleanLinks unwraps the element.
		default:
			a.Attr[i].Val = v
		}
		return
	}
}

// embeddedScheme finds, in an http(s) URL, a path segment that starts with
// mailto:, tel:, sms:, javascript: or vbscript: (what resolving "mailto:x"
// as a relative path produces) and returns its index, or -1. To spare real
// paths such as "/wiki/Tel:Aviv", a mailto: segment needs an '@' after it
// and a tel:/sms: one a digit or '+'.
func embeddedScheme(v string) int {
	lv := strings.ToLower(v)
	if !strings.HasPrefix(lv, "http://") && !strings.HasPrefix(lv, "https://") {
		return -1
	}
	for _, s := range []string{"mailto:", "tel:", "sms:", "javascript:", "vbscript:"} {
		for _, enc := range []string{s, strings.TrimSuffix(s, ":") + "%3a"} {
			j := strings.Index(lv, "/"+enc)
			if j < 0 {
				continue
			}
			rest := lv[j+1+len(enc):]
			switch s {
			case "mailto:":
				if !strings.Contains(rest, "@") && !strings.Contains(rest, "%40") {
					continue
				}
			case "tel:", "sms:":
				if rest == "" || !strings.ContainsRune("+0123456789(", rune(rest[0])) {
					continue
				}
			}
			return j + 1
		}
	}
	return -1
}

// lazySrcAttrs are the attributes lazy-loading scripts read the real image
// URL from, in order of preference.
var lazySrcAttrs = []string{"data-src", "data-lazy-src", "data-original", "data-lazy", "data-url"}

// lazySrcsetAttrs hold a srcset whose largest candidate is used when no
// plain URL is found.
var lazySrcsetAttrs = []string{"srcset", "data-srcset", "data-lazy-srcset"}

// setLazySrc gives an <img> whose src is missing, empty or a data: URI
// placeholder the real image URL: the first of lazySrcAttrs, else the
// largest candidate of its srcset or data-srcset, else of the srcset of
// the first <source> of its <picture> that has one. The new src is resolved
// against base when base is non-nil. A real src is left alone.
func setLazySrc(img *html.Node, base *url.URL) {
	src, _ := dom.Attr(img, "src")
	src = strings.TrimSpace(src)
	if src != "" && !strings.HasPrefix(strings.ToLower(src), "data:") {
		return
	}
	var v string
	for _, k := range lazySrcAttrs {
		if c, ok := dom.Attr(img, k); ok && strings.TrimSpace(c) != "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(c)), "data:") {
			v = strings.TrimSpace(c)
			break
		}
	}
	srcs := []*html.Node{img}
	if p := img.Parent; dom.IsElem(p, "picture") {
		// <picture><source srcset=…><img>: the sources, in order.
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if dom.IsElem(c, "source") {
				srcs = append(srcs, c)
			}
		}
	}
	for _, n := range srcs {
		for _, k := range lazySrcsetAttrs {
			if v != "" {
				break
			}
			if c, ok := dom.Attr(n, k); ok {
				v = largestCandidate(c)
			}
		}
	}
	if v == "" {
		return
	}
	if base != nil {
		if ref, err := url.Parse(v); err == nil {
			v = base.ResolveReference(ref).String()
		}
	}
	dom.RemoveAttr(img, "src")
	img.Attr = append(img.Attr, html.Attribute{Key: "src", Val: v})
}

// largestCandidate returns the URL of the srcset candidate with the largest
// width ("800w") or density ("2x") descriptor; candidates without one
// count as 1x. Candidates are split as the HTML Standard's srcset parser
// does (§4.8.4.3.1): a URL is a run of non-space characters, so commas
// inside it (data: URIs, CDN parameters) do not split it. data: candidates
// are skipped.
func largestCandidate(srcset string) string {
	best, bestSize := "", -1.0
	s := srcset
	for {
		s = strings.TrimLeft(s, " \t\n\r\f,")
		if s == "" {
			return best
		}
		end := strings.IndexAny(s, " \t\n\r\f")
		if end < 0 {
			end = len(s)
		}
		u, desc := s[:end], ""
		s = s[end:]
		if strings.HasSuffix(u, ",") {
			u = strings.TrimRight(u, ",")
		} else {
			c := strings.IndexByte(s, ',')
			if c < 0 {
				c = len(s)
			}
			desc, s = strings.TrimSpace(s[:c]), s[c:]
		}
		if u == "" || strings.HasPrefix(strings.ToLower(u), "data:") {
			continue
		}
		size := 1.0
		if f := strings.Fields(desc); len(f) > 0 {
			d := strings.ToLower(f[0])
			if n, err := strconv.ParseFloat(d[:len(d)-1], 64); err == nil && (strings.HasSuffix(d, "w") || strings.HasSuffix(d, "x")) {
				size = n
			}
		}
		if size > bestSize {
			best, bestSize = u, size
		}
	}
}
