package markdown

import (
	"net/url"
	"path"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
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
// "[![](…)](…)". So, before extraction, every link without text in
// running prose (inProse) gets one character of text, LinkNameMark
// (markTextlessLinks): enough for go-trafilatura to keep the link, too
// little to change the link density the extractors weigh (the names
// themselves, added before extraction, changed which blocks they kept on
// the wcxb-dev bench: -0.002 F1). The page's names are indexed by target
// with the originals (collectLinkNames); at conversion
// (nameTextlessLinks) the mark goes where the link still holds its image
// (whose alt gets the name when it has none) and becomes the name
// elsewhere. An image without any alternative is named after its file, as
// screen readers do.

// markTextlessLinks gives every link under doc with a target, no text
// and an image or icon, standing in running prose, the text LinkNameMark.
func markTextlessLinks(doc *html.Node) {
	var links []*html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if dom.IsElem(n, "a") {
			if href, _ := dom.Attr(n, "href"); strings.TrimSpace(href) != "" && !hasText(n) {
				links = append(links, n)
			}
			return false
		}
		return true
	})

	for _, a := range links {
		if !inProse(a) {
			continue // a logo, avatar, thumbnail or icon bar: readability keeps the images
		}
		if linkName(a) != "" || imageFileName(a) != "" {
			a.InsertBefore(&html.Node{Type: html.TextNode, Data: LinkNameMark}, a.FirstChild)
		}
	}
}

// collectLinkNames maps the target of every link of doc marked by
// markTextlessLinks to its name (linkName, else its image's file name).
func collectLinkNames(doc *html.Node) map[string]string {
	names := map[string]string{}
	dom.Walk(doc, func(n *html.Node) bool {
		if !dom.IsElem(n, "a") {
			return true
		}
		if c := n.FirstChild; c != nil && c.Type == html.TextNode && c.Data == LinkNameMark {
			href, _ := dom.Attr(n, "href")
			name := linkName(n)
			if name == "" {
				name = imageFileName(n)
			}
			if _, ok := names[strings.TrimSpace(href)]; !ok && name != "" {
				names[strings.TrimSpace(href)] = name
			}
		}
		return false
	})

	return names
}

// proseMinChars is how much text outside links the block around a link
// holds for the link to stand in running prose (inProse).
const proseMinChars = 40

// inProse reports whether link a stands in running text: the nearest
// block around it (isBoxed) holds at least proseMinChars of text outside
// links. Only there does a link lost with its image lose a piece of a
// sentence; image links standing alone (logos, avatars, product
// thumbnails, icon bars) are kept by readability as images, and naming
// them would add their names to the page's text and links to its link
// density, which the extractors weigh.
//
// A link whose target another link with text nearby (in the block around
// it or the block around that) also has is not named either: a product or
// story card links its picture and its title to the same page, and the
// picture's name would repeat the title.
func inProse(a *html.Node) bool {
	b := a.Parent
	for b != nil && b.Type == html.ElementNode && !isBoxed(b) {
		b = b.Parent
	}
	if b == nil || b.Type != html.ElementNode {
		return false
	}
	href, _ := dom.Attr(a, "href")
	href = strings.TrimSpace(href)
	near := b
	if p := b.Parent; p != nil && p.Type == html.ElementNode {
		near = p
	}
	twin := false
	dom.Walk(near, func(c *html.Node) bool {
		if twin {
			return false
		}
		if dom.IsElem(c, "a") && c != a {
			if h, _ := dom.Attr(c, "href"); strings.TrimSpace(h) == href && hasText(c) {
				twin = true
			}
			return false
		}
		return true
	})

	if twin {
		return false
	}
	n := 0
	var count func(n0 *html.Node) bool
	count = func(c *html.Node) bool {
		for ; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				n += len(strings.TrimSpace(strings.ReplaceAll(c.Data, LinkNameMark, "")))
			case dom.IsElem(c, "a"), dom.IsElem(c, "script"), dom.IsElem(c, "style"):
			case c.Type == html.ElementNode:
				count(c.FirstChild)
			}
			if n >= proseMinChars {
				return true
			}
		}
		return n >= proseMinChars
	}
	return count(b.FirstChild)
}

// hasText reports whether n holds any non-space text.
func hasText(n *html.Node) bool {
	return strings.TrimFunc(dom.TextContent(n), isSpaceRune) != ""
}

// linkName is the accessible name of link a that has no text: its
// aria-label, else the alt (or aria-label) of its images and the
// <title> of its inline SVG icons, else its title, else the title of its
// images; collapsed, or "".
func linkName(a *html.Node) string {
	if v, _ := dom.Attr(a, "aria-label"); strings.TrimSpace(v) != "" {
		return dom.CollapseSpace(v)
	}
	var parts []string
	dom.Walk(a, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.Data {
		case "img":
			v, _ := dom.Attr(n, "alt")
			if strings.TrimSpace(v) == "" {
				v, _ = dom.Attr(n, "aria-label")
			}
			if v = dom.CollapseSpace(v); v != "" {
				parts = append(parts, v)
			}
			return false
		case "svg":
			if v, _ := dom.Attr(n, "aria-label"); strings.TrimSpace(v) != "" {
				parts = append(parts, dom.CollapseSpace(v))
				return false
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if dom.IsElem(c, "title") {
					if v := dom.CollapseSpace(dom.TextContent(c)); v != "" {
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
	if v, _ := dom.Attr(a, "title"); strings.TrimSpace(v) != "" {
		return dom.CollapseSpace(v)
	}
	var title string
	dom.Walk(a, func(n *html.Node) bool {
		if title == "" && dom.IsElem(n, "img") {
			v, _ := dom.Attr(n, "title")
			title = dom.CollapseSpace(v)
		}
		return title == ""
	})

	return title
}

// imageFileName is the file name of the first image under n with a src
// ("chart-2024.png"), or "".
func imageFileName(n *html.Node) string {
	var name string
	dom.Walk(n, func(c *html.Node) bool {
		if name != "" {
			return false
		}
		if dom.IsElem(c, "img") {
			src, _ := dom.Attr(c, "src")
			src = strings.TrimSpace(src)
			if strings.HasPrefix(strings.ToLower(src), "data:") {
				return false
			}
			if u, err := url.Parse(src); err == nil && u.Path != "" {
				if b := path.Base(u.Path); b != "/" && b != "." {
					if un, err := url.PathUnescape(b); err == nil {
						b = un
					}
					name = dom.CollapseSpace(b)
				}
			}
		}
		return name == ""
	})

	return name
}

// nameTextlessLinks finishes the names of links without text under root
// (markTextlessLinks): a marked link that still holds an image loses the
// mark, and the image gets the name as alt when it has none; any other
// mark becomes the link's name, from names (the page's links by target;
// may be nil), else from the link itself. A link without text that was
// not marked gets its image an alt from its own name, and, in running
// prose, its name as text.
func nameTextlessLinks(root *html.Node, names map[string]string) {
	var marked []*html.Node
	var bare []*html.Node
	dom.Walk(root, func(n *html.Node) bool {
		switch {
		case n.Type == html.TextNode && strings.Contains(n.Data, LinkNameMark):
			marked = append(marked, n)
		case dom.IsElem(n, "a"):
			if href, _ := dom.Attr(n, "href"); strings.TrimSpace(href) != "" && !hasText(n) {
				bare = append(bare, n)
			}
		}
		return true
	})

	for _, t := range marked {
		t.Data = strings.ReplaceAll(t.Data, LinkNameMark, "")
		a := t.Parent
		for a != nil && !dom.IsElem(a, "a") {
			a = a.Parent
		}
		if a == nil || strings.TrimSpace(t.Data) != "" {
			continue // (an extractor moved it out of its link, or joined it to text)
		}
		href, _ := dom.Attr(a, "href")
		name := names[strings.TrimSpace(href)]
		if name == "" {
			if name = linkName(a); name == "" {
				name = imageFileName(a)
			}
		}
		if img := firstImage(a); img != nil {
			if alt, _ := dom.Attr(img, "alt"); strings.TrimSpace(alt) == "" && name != "" {
				setAttr(img, "alt", name)
			}
			continue
		}
		t.Data = name
	}
	for _, a := range bare {
		name := linkName(a)
		prose := inProse(a)
		if img := firstImage(a); img != nil {
			if alt, _ := dom.Attr(img, "alt"); strings.TrimSpace(alt) == "" {
				if name == "" && prose {
					name = imageFileName(a)
				}
				if name != "" {
					setAttr(img, "alt", name)
				}
			}
			continue
		}
		if name != "" && prose {
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
	dom.Walk(n, func(c *html.Node) bool {
		if img == nil && dom.IsElem(c, "img") {
			img = c
		}
		return img == nil
	})

	return img
}

// setAttr sets n's attribute key to val.
func setAttr(n *html.Node, key, val string) {
	dom.RemoveAttr(n, key)
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

// Links that open with an element.
//
// go-trafilatura removes every element of a paragraph whose own leading
// text (lxml's .text: the text before its first child) is empty, keeping
// its content: "<a href=/api><code>Client.Do</code></a>" lost its target
// and came back as the code span alone, and so did a link around
// emphasis, a keyboard key or any other element. So, before extraction,
// every link with a target whose content opens with an element gets
// LinkLeadMark as its first text (markElementLinks); Convert and the
// header's text readers drop the mark. One private-use character changes
// neither the text the extractors compare nor the link density they
// weigh by more than the mark of a textless link does. Only links in a
// paragraph are marked: that is where go-trafilatura's rule applies (its
// handleParagraphs); a link alone in a list item, which it keeps, lost its
// content to the mark ("[](…)15 Amazing Images"). The mark goes after any
// white space that opens the link, which the converter moves out of it.

// markElementLinks gives every link under doc with a target, standing in
// a paragraph (inParagraph), whose content opens (white space aside) with
// an element and which holds text, LinkLeadMark before that element.
// Links without text are markTextlessLinks' concern.
func markElementLinks(doc *html.Node) {
	var links []*html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if !dom.IsElem(n, "a") {
			return true
		}
		if href, _ := dom.Attr(n, "href"); strings.TrimSpace(href) != "" && openingElement(n) != nil && hasText(n) && inParagraph(n) {
			links = append(links, n)
		}
		return false
	})

	for _, a := range links {
		a.InsertBefore(&html.Node{Type: html.TextNode, Data: LinkLeadMark}, openingElement(a))
	}
}

// openingElement returns n's first child that is not white-space text
// when it is an element, else nil.
func openingElement(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			if strings.TrimFunc(c.Data, isSpaceRune) != "" {
				return nil
			}
		case html.ElementNode:
			return c
		}
	}
	return nil
}

// inParagraph reports whether the nearest ancestor of n that is not an
// inline element (phrasingElements) is a <p>.
func inParagraph(n *html.Node) bool {
	p := n.Parent
	for p != nil && isPhrasing(p) {
		p = p.Parent
	}
	return p != nil && p.Type == html.ElementNode && p.DataAtom == atom.P
}
