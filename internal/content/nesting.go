package content

import (
	"strings"
	"unicode"
	"unicode/utf8"

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
// text and more links with a target comes back whole.
//
// Texts are compared by a polynomial hash of their non-space characters
// computed bottom-up, so indexing the page and checking an extraction take
// time linear in their size however deep they nest.

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
	sig    textSig
	blocks int // nested blocks (nestBlocks) below it
	links  int // links with a target below it
}

const sigBase = 1099511628211 // the FNV prime, as a polynomial base

// sigStats computes the textSig and nested block count of every element
// under root (root included), skipping scripts and styles.
func sigStats(root *html.Node) map[*html.Node]nodeStat {
	stats := map[*html.Node]nodeStat{}
	// pow[k] = sigBase^k for concatenation; computed on demand.
	var visit func(n *html.Node) nodeStat
	visit = func(n *html.Node) nodeStat {
		switch n.Type {
		case html.TextNode:
			var s nodeStat
			for i := 0; i < len(n.Data); {
				r, w := utf8.DecodeRuneInString(n.Data[i:])
				i += w
				if unicode.IsSpace(r) {
					continue
				}
				s.sig.hash = s.sig.hash*sigBase + uint64(r)
				s.sig.n++
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
			s.blocks += cs.blocks
			s.links += cs.links
			if c.Type == html.ElementNode && nestBlocks[c.Data] {
				s.blocks++
			}
			if isElem(c, "a") {
				if h, _ := attr(c, "href"); strings.TrimSpace(h) != "" {
					s.links++
				}
			}
		}
		stats[n] = s
		return s
	}
	visit(root)
	return stats
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
// to those containers, in document order.
type nestIndex map[textSig][]nestEntry

type nestEntry struct {
	node          *html.Node
	blocks, links int
}

// collectNested indexes the containers (nestContainers) of doc that hold
// at least one nested block or link.
func collectNested(doc *html.Node) nestIndex {
	idx := nestIndex{}
	stats := sigStats(doc)
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && nestContainers[n.Data] {
			if s := stats[n]; (s.blocks > 0 || s.links > 0) && s.sig.n > 0 {
				idx[s.sig] = append(idx[s.sig], nestEntry{n, s.blocks, s.links})
			}
		}
		return true
	})
	return idx
}

// restoreNesting replaces each element under root whose text equals that
// of an indexed page container holding more nested blocks by a copy of
// that container (outermost first; each page container is used once).
func restoreNesting(root *html.Node, idx nestIndex) {
	if len(idx) == 0 {
		return
	}
	stats := sigStats(root)
	used := map[*html.Node]bool{}
	var swaps [][2]*html.Node
	walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == root {
			return true
		}
		switch n.Data {
		case "blockquote", "ul", "ol", "dl", "li", "dd", "p", "div", "section":
		default:
			return true
		}
		s := stats[n]
		for _, e := range idx[s.sig] {
			if used[e.node] || e.blocks <= s.blocks && e.links <= s.links || !sameBlockKind(n, e.node) {
				continue
			}
			if textKey(n) != textKey(e.node) {
				continue // a hash collision
			}
			used[e.node] = true
			swaps = append(swaps, [2]*html.Node{n, cloneNode(e.node)})
			return false
		}
		return true
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
