package markdown

import (
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
)

// Images inside running text.
//
// go-trafilatura runs with images off (turned on, its extraction changed
// and cost the extraction bench 0.002 F1), so an image with alt text
// inside a paragraph ("press the <img alt="gear icon"> button") was lost
// whenever the merge used trafilatura's paragraph; readability's images
// are merged back only as blocks of their own. So, before extraction,
// each such image gets a mark in front of it (MarkInlineImages): one
// character of Unicode's Supplementary Private Use Area-A that numbers it
// (U+F0000 + its index), clear of real text. At conversion the mark of an
// image the extractor dropped becomes a copy of the page's image, the mark
// of one it kept goes (restoreInlineImages); any mark left is removed by
// Convert.

// imageMarkBase is the first code point of the image marks.
const imageMarkBase = 0xF0000

// maxInlineImages bounds the images marked on one page (the code points
// of the area).
const maxInlineImages = 0xFFFE

// isImageMark reports whether r is an image mark.
func isImageMark(r rune) bool {
	return r >= imageMarkBase && r < imageMarkBase+maxInlineImages
}

// MarkInlineImages puts an image mark before every <img> with alt text
// standing in the text of a paragraph (inParagraph, with text of its own;
// not inside a link, whose image names it: linkname.go), and returns the
// marked images by index. An image alone in its paragraph is a block,
// which the merge keeps from readability's answer.
func MarkInlineImages(doc *html.Node) []*html.Node {
	var imgs []*html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if dom.IsElem(n, "a") {
			return false
		}
		if len(imgs) < maxInlineImages && dom.IsElem(n, "img") && n.Parent != nil && inParagraph(n) {
			if alt, _ := dom.Attr(n, "alt"); strings.TrimSpace(alt) != "" && hasText(paragraphOf(n)) {
				imgs = append(imgs, n)
			}
		}
		return true
	})

	for i, img := range imgs {
		img.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: string(rune(imageMarkBase + i))}, img)
	}
	return imgs
}

// restoreInlineImages replaces each image mark under root by a copy of the
// page's image it numbers (imgs, from MarkInlineImages), unless that image
// is still there right after it.
func restoreInlineImages(root *html.Node, imgs []*html.Node) {
	var texts []*html.Node
	dom.Walk(root, func(n *html.Node) bool {
		if n.Type == html.TextNode && hasImageMark(n.Data) {
			texts = append(texts, n)
		}
		return true
	})

	for _, t := range texts {
		if t.Parent == nil {
			continue
		}
		s := t.Data
		start := 0
		for i := 0; i < len(s); {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !isImageMark(r) {
				i += w
				continue
			}
			t.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: s[start:i]}, t)
			idx := int(r - imageMarkBase)
			rest := s[i+w:]
			kept := rest == "" && dom.IsElem(t.NextSibling, "img")
			if !kept && idx < len(imgs) {
				t.Parent.InsertBefore(dom.CloneNode(imgs[idx]), t)
			}
			i += w
			start = i
		}
		t.Data = s[start:]
	}
}

// hasImageMark reports whether s holds an image mark (all of them encode
// as four bytes starting 0xF3).
func hasImageMark(s string) bool {
	for i := strings.IndexByte(s, 0xF3); i >= 0 && i < len(s); {
		if r, _ := utf8.DecodeRuneInString(s[i:]); isImageMark(r) {
			return true
		}
		j := strings.IndexByte(s[i+1:], 0xF3)
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// dropImageMarks removes the image marks from s.
func dropImageMarks(s string) string {
	if !hasImageMark(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isImageMark(r) {
			return -1
		}
		return r
	}, s)
}

// paragraphOf returns the nearest ancestor of n that is not an inline
// element (phrasingElements).
func paragraphOf(n *html.Node) *html.Node {
	p := n.Parent
	for p != nil && isPhrasing(p) {
		p = p.Parent
	}
	return p
}
