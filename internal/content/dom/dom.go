// Package dom holds the small helpers over golang.org/x/net/html trees that
// the content packages share: walking a tree, reading and removing
// attributes, and telling a running script from data.
package dom

import (
	"strings"

	"golang.org/x/net/html"
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
