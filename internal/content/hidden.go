package content

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// dropHidden removes from the parsed page every element a browser would not
// render, before any extractor sees the tree. Text nobody can see is how
// prompt injections are slipped to agents, so it never reaches the markdown:
//
//   - an element with the hidden attribute (HTML §6.1), unless its inline
//     style sets another display; hidden="until-found" is dropped whatever
//     its style: the UA style sheet gives it content-visibility:hidden
//     (HTML §15.3.1), so it is not displayed until the reader happens to
//     search for its exact words, and it has no visible control of its own;
//   - <template> (its content is inert, never rendered);
//   - <dialog> without the open attribute (not shown until a script opens
//     it). An open <dialog> is rendered and is kept: it becomes a <div>,
//     because the extractors remove every <dialog> element as chrome (a
//     modal one, role="dialog" or aria-modal="true", is still an overlay
//     for preClean);
//   - an element whose inline style says display:none, visibility:hidden or
//     visibility:collapse (unless a descendant turns visibility back on), or
//     content-visibility:hidden;
//   - an element with aria-hidden="true" whose inline style also moves it off
//     screen or shrinks it to nothing (see offScreen): hidden from sighted
//     readers and from assistive technology alike. aria-hidden alone (icons,
//     decorative duplicates) and off-screen text without it (screen-reader
//     text such as "skip to content") are kept.
//
// Two kinds of hidden element are content a browser does show, because the
// page's scripts reveal them on load, and are kept (their descendants are
// still judged):
//
//   - a completed React streaming-SSR segment (<div hidden id="S:0">), in a
//     page that has the boundary placeholders (<template id="B:0">) the
//     segment's inline script moves it into;
//   - a page-reveal wrapper (anti-flicker: <body style="display:none">, a
//     visibility:hidden root div shown once scripts run) holding at least
//     revealShare of the page's text: hiding most of a page is a loading
//     state, not a hidden message.
//
// Kept on purpose, although a first look might call them hidden:
//
//   - the content of a closed <details>: the browser renders its <summary>
//     as a visible disclosure control and shows the rest on one click (and
//     on find-in-page); it is the page's own content (FAQ answers,
//     accordions, collapsed code), not text kept from the reader;
//   - opacity:0 and font-size:0: pages set them inline as the start state
//     of a scroll or load animation (the content fades in) and on
//     inline-block rows whose children reset the size, so they are not
//     evidence of hidden text on their own;
//   - <input type="hidden">: its value is no rendered text and never reaches
//     the markdown (form controls are removed as chrome).
//
// Only inline styles are read: class-based hiding through a stylesheet is
// not evaluated (that needs a CSS cascade; the browser tools see it).
func dropHidden(doc *html.Node) {
	react := hasReactBoundaries(doc)
	var lens map[*html.Node]int
	total := 0
	var drop, hiddenStyle []*html.Node
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if !isHiddenElement(n) {
			if n.DataAtom == atom.Dialog {
				n.DataAtom, n.Data = atom.Div, "div" // an open dialog is rendered
			}
			if v := parseInlineStyle(n)["visibility"]; v == "hidden" || v == "collapse" {
				// A visible descendant keeps only itself: the rest of
				// the subtree inherits the hidden visibility.
				if lens == nil {
					lens = map[*html.Node]int{}
					total = textLen(doc, lens)
				}
				if total == 0 || float64(lens[n]) < revealShare*float64(total) {
					drop = append(drop, invisibleParts(n)...)
					// What is left is visible; the extractors drop any
					// visibility:hidden element whole.
					hiddenStyle = append(hiddenStyle, n)
				}
			}
			return true
		}
		if n.DataAtom != atom.Template && n.DataAtom != atom.Dialog {
			if id, _ := attr(n, "id"); react && strings.HasPrefix(id, "S:") {
				removeAttr(n, "hidden")
				return true
			}
			if lens == nil {
				lens = map[*html.Node]int{}
				total = textLen(doc, lens)
			}
			if total > 0 && float64(lens[n]) >= revealShare*float64(total) {
				return true // a page-reveal wrapper: judge what is inside
			}
		}
		drop = append(drop, n)
		return false
	})
	for _, n := range drop {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	for _, n := range hiddenStyle {
		removeStyleProp(n, "visibility")
	}
}

// removeStyleProp removes every declaration of prop from n's style
// attribute (prop compared case-insensitively).
func removeStyleProp(n *html.Node, prop string) {
	for i, a := range n.Attr {
		if a.Namespace != "" || a.Key != "style" {
			continue
		}
		var keep []string
		for _, decl := range strings.Split(a.Val, ";") {
			p, _, _ := strings.Cut(decl, ":")
			if !strings.EqualFold(strings.TrimSpace(p), prop) && strings.TrimSpace(decl) != "" {
				keep = append(keep, decl)
			}
		}
		n.Attr[i].Val = strings.Join(keep, ";")
	}
}

// revealShare is the share of the page's text (chars outside script and
// style) above which a hidden element is taken for a page-reveal wrapper.
const revealShare = 0.8

// hasReactBoundaries reports whether doc holds a React streaming-SSR
// boundary placeholder (<template id="B:…">).
func hasReactBoundaries(doc *html.Node) bool {
	found := false
	walk(doc, func(n *html.Node) bool {
		if found {
			return false
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Template {
			if id, _ := attr(n, "id"); strings.HasPrefix(id, "B:") {
				found = true
			}
			return false
		}
		return true
	})
	return found
}

// textLen returns the bytes of text under n (script, style and template
// content excluded) and records it for every element in lens.
func textLen(n *html.Node, lens map[*html.Node]int) int {
	switch n.Type {
	case html.TextNode:
		return len(strings.TrimSpace(n.Data))
	case html.ElementNode:
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Template, atom.Noscript:
			return 0
		}
	}
	sum := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		sum += textLen(c, lens)
	}
	if n.Type == html.ElementNode {
		lens[n] = sum
	}
	return sum
}

// isHiddenElement reports whether n itself (not its ancestors) makes its
// subtree unrendered; see dropHidden.
func isHiddenElement(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Template:
		return true
	case atom.Dialog:
		if _, open := attr(n, "open"); !open {
			return true
		}
	}
	st := parseInlineStyle(n)
	if v, ok := attr(n, "hidden"); ok {
		if strings.EqualFold(strings.TrimSpace(v), "until-found") {
			return true
		}
		if d, set := st["display"]; !set || d == "none" {
			return true
		}
	}
	if st["display"] == "none" || st["content-visibility"] == "hidden" {
		return true
	}
	if v := st["visibility"]; (v == "hidden" || v == "collapse") && !visibleDescendant(n) {
		return true
	}
	if v, _ := attr(n, "aria-hidden"); strings.EqualFold(strings.TrimSpace(v), "true") && offScreen(st) {
		return true
	}
	return false
}

// invisibleParts returns the children of n (a visibility:hidden element),
// and of its descendants on the way to a visibility:visible one, that hold
// no visibility:visible element: a browser renders none of them.
func invisibleParts(n *html.Node) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.ElementNode && parseInlineStyle(c)["visibility"] == "visible":
		case c.Type == html.ElementNode && visibleDescendant(c):
			out = append(out, invisibleParts(c)...)
		case c.Type == html.TextNode || c.Type == html.ElementNode:
			out = append(out, c)
		}
	}
	return out
}

// visibleDescendant reports whether some descendant of n sets
// visibility:visible inline (which a browser renders inside a hidden parent).
func visibleDescendant(n *html.Node) bool {
	found := false
	for c := n.FirstChild; c != nil && !found; c = c.NextSibling {
		walk(c, func(d *html.Node) bool {
			if found || d.Type != html.ElementNode {
				return !found
			}
			if parseInlineStyle(d)["visibility"] == "visible" {
				found = true
			}
			return !found
		})
	}
	return found
}

// parseInlineStyle returns the declarations of n's style attribute, property
// names and values lower-cased and trimmed, "!important" removed; a later
// declaration of a property wins, as in CSS. Nil when there is no style.
func parseInlineStyle(n *html.Node) map[string]string {
	s, ok := attr(n, "style")
	if !ok || strings.TrimSpace(s) == "" {
		return nil
	}
	out := map[string]string{}
	for _, decl := range strings.Split(s, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.ToLower(strings.TrimSpace(prop))
		val = strings.ToLower(strings.TrimSpace(val))
		val = strings.TrimSpace(strings.TrimSuffix(val, "!important"))
		if prop != "" {
			out[prop] = val
		}
	}
	return out
}

// offScreen reports whether an inline style (see parseInlineStyle) puts the
// element where nobody sees it: positioned (absolute or fixed) far outside
// the viewport (left/top/right/bottom beyond -500px, -50em or -100%), a
// text-indent beyond those offsets, clipped to nothing (clip: rect(0 0 0 0),
// rect(1px …), clip-path: inset(50%) or more), a zero width or height, a
// 1px box with overflow hidden (the "visually hidden" pattern), or
// transform: scale(0).
func offScreen(st map[string]string) bool {
	if len(st) == 0 {
		return false
	}
	if pos := st["position"]; pos == "absolute" || pos == "fixed" {
		for _, p := range []string{"left", "top", "right", "bottom"} {
			if farNegative(st[p]) {
				return true
			}
		}
	}
	if farNegative(st["text-indent"]) {
		return true
	}
	if c := strings.ReplaceAll(st["clip"], " ", ""); strings.HasPrefix(c, "rect(") {
		inner := strings.NewReplacer("rect(", "", ")", "", "px", "").Replace(c)
		tiny := true
		for _, f := range strings.FieldsFunc(inner, func(r rune) bool { return r == ',' }) {
			if v, err := strconv.ParseFloat(f, 64); err != nil || v > 1 {
				tiny = false
			}
		}
		if tiny {
			return true
		}
	}
	if c := strings.ReplaceAll(st["clip-path"], " ", ""); strings.HasPrefix(c, "inset(") {
		if v, unit, ok := cssLength(strings.TrimSuffix(strings.TrimPrefix(c, "inset("), ")")); ok && unit == "%" && v >= 50 {
			return true
		}
	}
	zero := func(p string) bool {
		v, _, ok := cssLength(st[p])
		return ok && v == 0
	}
	if zero("width") || zero("height") || zero("max-width") || zero("max-height") {
		return true
	}
	tiny := func(p string) bool {
		v, unit, ok := cssLength(st[p])
		return ok && v <= 1 && (unit == "px" || unit == "")
	}
	if tiny("width") && tiny("height") && st["overflow"] == "hidden" {
		return true
	}
	if t := strings.ReplaceAll(st["transform"], " ", ""); t == "scale(0)" || t == "scale(0,0)" {
		return true
	}
	return false
}

// farNegative reports whether a CSS length is far enough below zero to
// leave the viewport: beyond -500px, -50em/rem or -100% (vw, vh).
func farNegative(s string) bool {
	v, unit, ok := cssLength(s)
	if !ok || v >= 0 {
		return false
	}
	switch unit {
	case "px", "":
		return v <= -500
	case "em", "rem":
		return v <= -50
	case "%", "vw", "vh":
		return v <= -100
	}
	return false
}

// cssLength parses a CSS length such as "-9999px", "0", "50%" into its
// number and unit (lower case). ok is false for anything else (auto, calc()).
func cssLength(s string) (v float64, unit string, ok bool) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] == '-' || s[i] == '+' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	if i == 0 {
		return 0, "", false
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, "", false
	}
	unit = strings.TrimSpace(s[i:])
	switch unit {
	case "", "px", "em", "rem", "%", "vw", "vh", "pt", "cm", "mm", "in":
		return f, unit, true
	}
	return 0, "", false
}
