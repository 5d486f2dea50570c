// Package dom holds the small helpers over golang.org/x/net/html trees that
// the content packages share: walking a tree, reading and removing
// attributes and classes, telling a heading by its atom, and telling a
// running script from data.
package dom

import (
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Walk visits n and its descendants in document order; fn returns false to
// skip a node's children.
func Walk(n *html.Node, fn func(*html.Node) bool) {
	if n == nil {
		return
	}
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		Walk(c, fn)
	}
}

// Attr returns the value of n's attribute key (no namespace) and whether
// it is present.
func Attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// RemoveAttr deletes every attribute of n named key.
func RemoveAttr(n *html.Node, key string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Key != key {
			out = append(out, a)
		}
	}
	n.Attr = out
}

// RawText returns the text children of a raw-text element (<script>,
// <noscript>), which textContent skips.
func RawText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// RunsScript reports whether the <script> element n runs JavaScript: no
// type, a JavaScript MIME type or "module" (HTML §4.12.1.1; JSON-LD and
// templates are data), with a src or a body.
func RunsScript(n *html.Node) bool {
	t, _ := Attr(n, "type")
	t = strings.ToLower(strings.TrimSpace(t))
	if t == "" || t == "module" || strings.Contains(t, "javascript") || strings.Contains(t, "ecmascript") {
		src, _ := Attr(n, "src")
		return src != "" || strings.TrimSpace(RawText(n)) != ""
	}
	return false
}

// IsElem reports whether n is an element named name. Extractors create
// nodes without DataAtom, so the name is compared, not the atom.
func IsElem(n *html.Node, name string) bool {
	return n != nil && n.Type == html.ElementNode && n.Data == name
}

// TextContent concatenates the text nodes under n (script and style
// excluded).
func TextContent(n *html.Node) string {
	var b strings.Builder
	Walk(n, func(c *html.Node) bool {
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

// CollapseSpace trims s and turns every run of white space into one space.
func CollapseSpace(s string) string {
	// (Most strings are collapsed already: they come back as they are.)
	if collapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for f := range strings.FieldsSeq(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

// collapsed reports whether CollapseSpace(s) == s: no white space but
// single ASCII spaces between other runes.
func collapsed(s string) bool {
	prevSpace := true // (a leading space is not collapsed)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ':
				if prevSpace {
					return false
				}
				prevSpace = true
			case '\t' <= c && c <= '\r':
				return false
			default:
				prevSpace = false
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if unicode.IsSpace(r) {
			return false
		}
		prevSpace = false
	}
	return !prevSpace || s == ""
}

// CloneNode deep-copies n (detached from any tree).
func CloneNode(n *html.Node) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace}
	c.Attr = append([]html.Attribute(nil), n.Attr...)
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.AppendChild(CloneNode(ch))
	}
	return c
}

// DocumentBase returns the URL relative links resolve against: the first
// <base href> (HTML Standard "document base URL"), resolved against base,
// when it is an http(s) URL; otherwise base.
func DocumentBase(doc *html.Node, base *url.URL) *url.URL {
	var href string
	found := false
	Walk(doc, func(n *html.Node) bool {
		if found {
			return false
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Base {
			if v, ok := Attr(n, "href"); ok {
				href, found = v, true
				return false
			}
		}
		return true
	})

	if !found {
		return base
	}
	ref, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return base
	}
	u := ref
	if base != nil {
		u = base.ResolveReference(ref)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return base
	}
	return u
}

// IsHeading reports whether a is one of the heading elements h1–h6.
func IsHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// HasAnyClass reports whether one of n's classes is in names.
func HasAnyClass(n *html.Node, names []string) bool {
	v, ok := Attr(n, "class")
	if !ok {
		return false
	}
	for c := range strings.FieldsSeq(v) {
		if slices.Contains(names, c) {
			return true
		}
	}
	return false
}

// VoidElements are the HTML elements without an end tag (the void
// elements of HTML §13.1.2). Read only.
var VoidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true,
}
