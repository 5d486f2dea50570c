package content

import (
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/html"
)

// Links without text.
//
// A link whose content is only an image ("<a href=/docs><img alt="Project
// docs"></a>", a thumbnail linking to the full picture, a logo, an icon)
// has the image's text alternative as its name (WAI-ARIA's accessible
// name computation, "Accessible Name and Description Computation 1.2"
// §4.3.2: aria-label, then the content's names, of which an image's alt,
// then the title attribute). go-trafilatura removes the images of its
// tree (images off), leaving "<a href=…></a>", which the converter drops
// (an empty link), and readability's images without alt text became
// "[![](…)](…)". So, before extraction, every link without text gets its
// name as a text marked with linkNameMark (markTextlessLinks), which keeps
// the link in go-trafilatura's tree; at conversion (nameTextlessLinks) the
// marked text goes where the link still holds its image (the image's alt
// is the name) and loses its mark elsewhere. An image without any
// alternative is named after its file, as screen readers do.

// linkNameMark starts a link's name added by markTextlessLinks
// (private-use code points: clear of real text).
const linkNameMark = "\uE000name\uE001"

// markTextlessLinks appends to every link under doc with a target, no
// text and an image or icon its name (linkName, else the image's file
// name), marked with linkNameMark.
func markTextlessLinks(doc *html.Node) {
	var links []*html.Node
	walk(doc, func(n *html.Node) bool {
		if isElem(n, "a") {
			if href, _ := attr(n, "href"); strings.TrimSpace(href) != "" && !hasText(n) {
				links = append(links, n)
			}
			return false
		}
		return true
	})
	for _, a := range links {
		name := linkName(a)
		if name == "" {
			name = imageFileName(a)
		}
		if name != "" {
			a.InsertBefore(&html.Node{Type: html.TextNode, Data: linkNameMark + name}, a.FirstChild)
		}
	}
}

// hasText reports whether n holds any non-space text.
func hasText(n *html.Node) bool {
	return strings.TrimFunc(textContent(n), isSpaceRune) != ""
}

// linkName is the accessible name of link a that has no text: its
// aria-label, else the alt (or aria-label) of its images and the
// <title> of its inline SVG icons, else its title, else the title of its
// images; collapsed, or "".
func linkName(a *html.Node) string {
	if v, _ := attr(a, "aria-label"); strings.TrimSpace(v) != "" {
		return collapseSpace(v)
	}
	var parts []string
	walk(a, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.Data {
		case "img":
			v, _ := attr(n, "alt")
			if strings.TrimSpace(v) == "" {
				v, _ = attr(n, "aria-label")
			}
			if v = collapseSpace(v); v != "" {
				parts = append(parts, v)
			}
			return false
		case "svg":
			if v, _ := attr(n, "aria-label"); strings.TrimSpace(v) != "" {
				parts = append(parts, collapseSpace(v))
				return false
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if isElem(c, "title") {
					if v := collapseSpace(textContent(c)); v != "" {
						parts = append(parts, v)
					}
				}
			}
			return false
		}
		return true
	})
	if len(parts) > 0 {
		return strings.Join(parts, " ")
	}
	if v, _ := attr(a, "title"); strings.TrimSpace(v) != "" {
		return collapseSpace(v)
	}
	var title string
	walk(a, func(n *html.Node) bool {
		if title == "" && isElem(n, "img") {
			v, _ := attr(n, "title")
			title = collapseSpace(v)
		}
		return title == ""
	})
	return title
}

// imageFileName is the file name of the first image under n with a src
// ("chart-2024.png"), or "".
func imageFileName(n *html.Node) string {
	var name string
	walk(n, func(c *html.Node) bool {
		if name != "" {
			return false
		}
		if isElem(c, "img") {
			src, _ := attr(c, "src")
			src = strings.TrimSpace(src)
			if strings.HasPrefix(strings.ToLower(src), "data:") {
				return false
			}
			if u, err := url.Parse(src); err == nil && u.Path != "" {
				if b := path.Base(u.Path); b != "/" && b != "." {
					if un, err := url.PathUnescape(b); err == nil {
						b = un
					}
					name = collapseSpace(b)
				}
			}
		}
		return name == ""
	})
	return name
}

// nameTextlessLinks finishes the names of links without text under root
// (markTextlessLinks): a link that still holds an image loses the marked
// name, which becomes the image's alt when it has none; any other marked
// name loses its mark and stays as the link's text. A link without text
// that was not marked (a tree built after the page's) is named the same
// way here.
func nameTextlessLinks(root *html.Node) {
	var marked []*html.Node
	var bare []*html.Node
	walk(root, func(n *html.Node) bool {
		switch {
		case n.Type == html.TextNode && strings.Contains(n.Data, linkNameMark):
			marked = append(marked, n)
		case isElem(n, "a"):
			if href, _ := attr(n, "href"); strings.TrimSpace(href) != "" && !hasText(n) {
				bare = append(bare, n)
			}
		}
		return true
	})
	for _, t := range marked {
		name := strings.ReplaceAll(t.Data, linkNameMark, "")
		a := t.Parent
		for a != nil && !isElem(a, "a") {
			a = a.Parent
		}
		img := firstImage(a)
		if img == nil {
			t.Data = name
			continue
		}
		t.Parent.RemoveChild(t)
		if alt, _ := attr(img, "alt"); strings.TrimSpace(alt) == "" {
			setAttr(img, "alt", strings.TrimSpace(name))
		}
	}
	for _, a := range bare {
		name := linkName(a)
		if img := firstImage(a); img != nil {
			if alt, _ := attr(img, "alt"); strings.TrimSpace(alt) == "" {
				if name == "" {
					name = imageFileName(a)
				}
				if name != "" {
					setAttr(img, "alt", name)
				}
			}
			continue
		}
		if name != "" {
			a.AppendChild(&html.Node{Type: html.TextNode, Data: name})
		}
	}
}

// firstImage returns the first <img> under n (n may be nil), or nil.
func firstImage(n *html.Node) *html.Node {
	var img *html.Node
	if n == nil {
		return nil
	}
	walk(n, func(c *html.Node) bool {
		if img == nil && isElem(c, "img") {
			img = c
		}
		return img == nil
	})
	return img
}

// setAttr sets n's attribute key to val.
func setAttr(n *html.Node, key, val string) {
	removeAttr(n, key)
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}
