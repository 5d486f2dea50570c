package markdown

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
)

// Nested block structure.
//
// go-trafilatura rebuilds the tree it extracts and flattens blocks that nest
// in places it does not expect: a table inside a block quote or a list item
// becomes the run-together text of its cells ("ab12"), lists and quotes
// inside a quote become paragraphs. readability keeps the nesting but is
// not always the answer the merge uses. So, before conversion, every
// container of an extracted tree whose text equals (white space aside) the
// text of a container of the page that holds more nested blocks is
// replaced by a copy of the page's container: what the extractor kept is
// unchanged, only the structure comes back, to any depth. The same holds
// for links: go-trafilatura drops the target of a link inside a quote and
// splits the sentence around it; a container of the page with the same
// text and more links with a target comes back whole, and so does one
// holding more ordered lists that count from a number other than 1
// (go-trafilatura drops the start attribute, renumbering "3." as "1.").
// And for quotes
// themselves: go-trafilatura turns a quote holding one block with a
// <code> anywhere inside it into a code element (its port of trafilatura's
// is_code_block_element looks for <code> among all descendants where lxml's
// find looks among the children), so "<blockquote><p>run <code>x</code>
// and see <a>…</a></p></blockquote>" came back as one code span without
// the link; readability renames a quote next to the article's top
// candidate into a <div> (Readability.js's ALTER_TO_DIV). A block of
// either kind whose text equals a quote of the page, outside any quote of
// the extraction, is that quote.
//
// Texts are compared by a polynomial hash of their non-space characters
// computed bottom-up, so indexing the page and checking an extraction take
// time linear in their size however deep they nest. go-trafilatura also
// reorders the text of a quote whose paragraph the HTML parser closed
// early ("<blockquote><p>see <a>…</a> <div>…</div> and …</p>": the text
// after the <div> comes before the link): an extracted block holding the
// same characters as a page container in another order (a second,
// order-free hash: the sum of a hash of each character) is that container
// too, its text restored with its order.

// nestContainers are the elements whose nested blocks are restored, on
// the page's side.
var nestContainers = map[string]bool{"blockquote": true, "ul": true, "ol": true, "dl": true, "li": true, "dd": true}

// nestBlocks are the nested blocks counted: a container of the page is
// richer than the extracted one when it holds more of them.
var nestBlocks = map[string]bool{"table": true, "pre": true, "ul": true, "ol": true, "dl": true, "blockquote": true, "li": true, "dd": true, "dt": true}

// textSig is the hash and length (non-space runes) of an element's text.
type textSig struct {
	hash uint64
	n    int
}

// nodeStat is what the bottom-up pass learns about one element.
type nodeStat struct {
	sig textSig
	// bag is the order-free hash of the same runes: the sum of
	// runeHash over them.
	bag    textSig
	blocks int // nested blocks (nestBlocks) below it
	links  int // links with a target below it
	// numbered counts the ordered lists that do not count from 1
	// (numberedList), it included: go-trafilatura drops the start
	// attribute, so "3. … 4. …" came back as "1. … 2. …".
	numbered int
}

const sigBase = 1099511628211 // the FNV prime, as a polynomial base

// sigStats computes the textSig and nested block count of every element
// under root (root included), skipping scripts and styles, and returns
// those of the elements named in keep (the others are only summed into
// their ancestors: a map entry per element of a page is most of the cost).
func sigStats(root *html.Node, keep map[string]bool) map[*html.Node]nodeStat {
	stats := map[*html.Node]nodeStat{}
	var visit func(n *html.Node) nodeStat
	visit = func(n *html.Node) nodeStat {
		switch n.Type {
		case html.TextNode:
			var s nodeStat
			for i := 0; i < len(n.Data); {
				r, w := rune(n.Data[i]), 1
				if r >= utf8.RuneSelf {
					r, w = utf8.DecodeRuneInString(n.Data[i:])
				}
				i += w
				if asciiSpace(r) || r >= utf8.RuneSelf && unicode.IsSpace(r) {
					continue
				}
				s.sig.hash = s.sig.hash*sigBase + uint64(r)
				s.sig.n++
				s.bag.hash += runeHash(r)
			}
			return s
		case html.ElementNode, html.DocumentNode:
			if n.Data == "script" || n.Data == "style" {
				return nodeStat{}
			}
		default:
			return nodeStat{}
		}
		var s nodeStat
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			cs := visit(c)
			s.sig.hash = s.sig.hash*powSig(cs.sig.n) + cs.sig.hash
			s.sig.n += cs.sig.n
			s.bag.hash += cs.bag.hash
			s.blocks += cs.blocks
			s.links += cs.links
			s.numbered += cs.numbered
			if c.Type == html.ElementNode && nestBlocks[c.Data] {
				s.blocks++
			}
			if dom.IsElem(c, "a") {
				if h, _ := dom.Attr(c, "href"); strings.TrimSpace(h) != "" {
					s.links++
				}
			}
		}
		s.bag.n = s.sig.n
		if numberedList(n) {
			s.numbered++
		}
		if keep[n.Data] && n.Type == html.ElementNode {
			stats[n] = s
		}
		return s
	}
	visit(root)
	return stats
}

// asciiSpace reports whether r is one of the ASCII runes unicode.IsSpace
// accepts.
func asciiSpace(r rune) bool {
	return r == ' ' || '\t' <= r && r <= '\r'
}

// restoreCandidates are the elements of an extraction restoreOne can
// replace.
var restoreCandidates = map[string]bool{"blockquote": true, "ul": true, "ol": true, "dl": true, "li": true, "dd": true, "p": true, "div": true, "section": true, "code": true}

// runeHash mixes a rune into 64 bits (splitmix64's finaliser), so that
// sums of different multisets of runes rarely collide.
func runeHash(r rune) uint64 {
	z := uint64(r) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// powSig returns sigBase^k (mod 2^64) by squaring.
func powSig(k int) uint64 {
	r, b := uint64(1), uint64(sigBase)
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			r *= b
		}
		b *= b
	}
	return r
}

// nestIndex maps the text of the page's containers that hold nested blocks
// to those containers, in document order: by the text (bySig) and by the
// text's runes in any order (byBag).
type nestIndex struct {
	bySig, byBag map[textSig][]nestEntry
}

type nestEntry struct {
	node                    *html.Node
	sig                     textSig
	blocks, links, numbered int
}

// collectNested indexes the containers (nestContainers) of doc that hold
// at least one nested block, link or numbered list, and every block
// quote.
func collectNested(doc *html.Node) nestIndex {
	idx := nestIndex{bySig: map[textSig][]nestEntry{}, byBag: map[textSig][]nestEntry{}}
	stats := sigStats(doc, nestContainers)
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && nestContainers[n.Data] {
			if s := stats[n]; (s.blocks > 0 || s.links > 0 || s.numbered > 0 || n.Data == "blockquote") && s.sig.n > 0 {
				e := nestEntry{n, s.sig, s.blocks, s.links, s.numbered}
				idx.bySig[s.sig] = append(idx.bySig[s.sig], e)
				idx.byBag[s.bag] = append(idx.byBag[s.bag], e)
			}
		}
		return true
	})

	return idx
}

// restoreNesting replaces each element under root whose text equals that
// of an indexed page container holding more nested blocks, links or
// numbered lists, or
// that stands for a quote of the page (lostQuote), by a copy of that
// container (outermost first; each page container is used once).
func restoreNesting(root *html.Node, idx nestIndex) {
	if len(idx.bySig) == 0 {
		return
	}
	stats := sigStats(root, restoreCandidates)
	used := map[*html.Node]bool{}
	var swaps [][2]*html.Node
	var visit func(n *html.Node, inQuote bool)
	visit = func(n *html.Node, inQuote bool) {
		if n.Type == html.ElementNode && n != root && restoreOne(n, inQuote, stats[n], idx, used, &swaps) {
			return
		}
		inQuote = inQuote || dom.IsElem(n, "blockquote")
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inQuote)
		}
	}
	visit(root, false)
	for _, s := range swaps {
		old, repl := s[0], s[1]
		if old.Parent == nil {
			continue
		}
		old.Parent.InsertBefore(repl, old)
		old.Parent.RemoveChild(old)
	}
}

// restoreOne records the swap of the extracted element n (with stats s,
// inside a quote of the extraction when inQuote) for the first unused
// page container of idx it stands for, and reports whether it found one.
func restoreOne(n *html.Node, inQuote bool, s nodeStat, idx nestIndex, used map[*html.Node]bool, swaps *[][2]*html.Node) bool {
	switch n.Data {
	case "blockquote", "ul", "ol", "dl", "li", "dd", "p", "div", "section":
	case "code":
		if !holdsBlock(n) {
			return false // a code span or block
		}
	default:
		return false
	}
	for _, e := range idx.bySig[s.sig] {
		if used[e.node] || !sameBlockKind(n, e.node) {
			continue
		}
		if e.blocks <= s.blocks && e.links <= s.links && e.numbered <= s.numbered && !lostQuote(n, e.node, inQuote) {
			continue
		}
		if textKey(n) != textKey(e.node) {
			continue // a hash collision
		}
		used[e.node] = true
		*swaps = append(*swaps, [2]*html.Node{n, dom.CloneNode(e.node)})
		return true
	}
	// The same runes in another order: the extractor reordered the text.
	for _, e := range idx.byBag[s.bag] {
		if e.sig == s.sig || used[e.node] || !sameBlockKind(n, e.node) {
			continue // (the same text in the same order: seen above)
		}
		nk, ek := textKey(n), textKey(e.node)
		if nk == ek || !sameRunes(nk, ek) {
			continue // the same order (handled above), or a collision
		}
		used[e.node] = true
		*swaps = append(*swaps, [2]*html.Node{n, dom.CloneNode(e.node)})
		return true
	}
	return false
}

// sameRunes reports whether a and b hold the same runes, in any order.
func sameRunes(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	ra, rb := []rune(a), []rune(b)
	slices.Sort(ra)
	slices.Sort(rb)
	return slices.Equal(ra, rb)
}

// lostQuote reports whether the extracted block n stands for the page's
// quote q that the extractor renamed: q is a <blockquote> whose children
// are not a lone code element (trafilatura's highlight.js rule: such a
// quote is a code block), and n is a code element holding blocks or a
// generic block, outside any quote of the extraction.
func lostQuote(n, q *html.Node, inQuote bool) bool {
	if inQuote || !dom.IsElem(q, "blockquote") || dom.IsElem(n, "blockquote") {
		return false
	}
	switch n.Data {
	case "code", "div", "p", "section":
	default:
		return false
	}
	var only *html.Node
	for c := q.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.ElementNode:
			if only != nil {
				return true
			}
			only = c
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "":
			return true
		}
	}
	return !dom.IsElem(only, "code") && !dom.IsElem(only, "pre")
}

// holdsBlock reports whether n has a block-level child: a code element
// that does is a block go-trafilatura mistook for code.
func holdsBlock(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.Data {
		case "p", "div", "section", "ul", "ol", "dl", "table", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "figure", "hr":
			return true
		}
	}
	return false
}

// sameBlockKind reports whether an extracted element may stand for the
// page's container: a list item for a list item, a list for a list, a
// quote, definition or generic block for any container (extractors
// rename those).
func sameBlockKind(extracted, page *html.Node) bool {
	switch extracted.Data {
	case "li":
		return page.Data == "li"
	case "ul", "ol":
		return page.Data == "ul" || page.Data == "ol"
	}
	if page.Data == "li" {
		return false // an item outside its list would lose its marker
	}
	return true
}

// numberedList reports whether n is an ordered list whose start
// attribute (HTML Standard §4.4.8) is a number other than 1: the
// markdown numbers its items from there (CommonMark 0.31 §5.3, the first
// item's number is the list's start).
func numberedList(n *html.Node) bool {
	if !dom.IsElem(n, "ol") {
		return false
	}
	v, ok := dom.Attr(n, "start")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(strings.TrimSpace(v))
	return err == nil && i != 1
}
