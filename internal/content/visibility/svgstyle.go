package visibility

import (
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// SVG presentation attributes are styles (SVG 2 §6.6): opacity="0",
// font-size="0.5" or display="none" on an SVG element hide it as its
// inline style would. They count as author rules of specificity zero,
// below every stylesheet rule and the inline style (SVG 2 §6.6, "presentation
// attributes … are overridden by … any other author style sheet").
// (hostile review session 6, D12)

// svgPresentation are the presentation attributes read (a subset of SVG 2
// §6.6's table: those that can hide text, and those that tell unpainted
// text from painted text).
var svgPresentation = []string{"display", "visibility", "opacity", "font-size", "fill", "stroke", "fill-opacity", "color"}

// presentationDecls returns n's SVG presentation attributes as
// declarations (see declValue for the value shape); nil for an element
// outside the SVG namespace.
func presentationDecls(n *html.Node) []cssDecl {
	if n.Namespace != "svg" {
		return nil
	}
	var out []cssDecl
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		for _, p := range svgPresentation {
			if strings.EqualFold(a.Key, p) {
				out = append(out, cssDecl{prop: p, val: strings.ToLower(strings.TrimSpace(a.Val))})
			}
		}
	}
	return out
}

// unpaintedText reports whether a style (of an SVG element) paints no
// text: fill none (or transparent, or fill-opacity 0) and no stroke. fill
// and stroke inherit, so a descendant that sets either may paint again
// (see paintedSVG).
func unpaintedText(st map[string]string) bool {
	f := st["fill"]
	if f != "none" && !transparentColor(f) && !(f != "" && zeroOpacity(st["fill-opacity"])) {
		return false
	}
	s := st["stroke"]
	return s == "" || s == "none" || transparentColor(s)
}

// paintedSVG reports whether n's style sets a fill or stroke of its own.
func (s *pageStyles) paintedSVG(n *html.Node) bool {
	st := s.of(n)
	return st["fill"] != "" && st["fill"] != "none" || st["stroke"] != "" && st["stroke"] != "none"
}

// svgViewportHides reports whether n is an <svg> whose viewport has no
// area (width or height attribute, or the style's, of 0): an inner <svg>
// clips its overflow (the UA style sheet's svg:not(:root) {overflow:
// hidden}), so nothing in it is seen, as visibility.js leaves out a box at
// most 1px wide or high that clips its overflow. An overflow of visible
// set on it keeps it.
func svgViewportHides(n *html.Node, st map[string]string) bool {
	if n.Namespace != "svg" || n.DataAtom != atom.Svg {
		return false
	}
	if o := st["overflow"]; o == "visible" || o == "auto" || o == "scroll" {
		return false
	}
	for _, p := range []string{"width", "height"} {
		v := st[p]
		if v == "" {
			v, _ = dom.Attr(n, p)
		}
		if x, _, ok := cssLength(v); ok && x == 0 && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// svgTextAway reports whether n is an SVG <text> element placed entirely
// outside the viewport of the <svg> it is in, which clips it: its x (or y)
// attribute, in user units, lies more than svgFar beyond the viewport's
// width (or height) on either side, the viewport taken from the svg's
// viewBox, else from its width and height in px. Any transform on the way
// (on the text or an ancestor inside the svg), a nested viewport, or a
// value it cannot read and it judges nothing: the text's length on screen
// needs layout.
func svgTextAway(n *html.Node) bool {
	if n.Namespace != "svg" || n.Data != "text" {
		return false
	}
	var svg *html.Node
	for p := n; p != nil && p.Namespace == "svg"; p = p.Parent {
		if _, ok := dom.Attr(p, "transform"); ok {
			return false
		}
		if p.DataAtom == atom.Svg {
			svg = p
			break
		}
	}
	if svg == nil {
		return false
	}
	minX, minY, w, h, ok := svgViewport(svg)
	if !ok {
		return false
	}
	first := func(k string) (float64, bool) {
		v, present := dom.Attr(n, k)
		if !present {
			return 0, true
		}
		f := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
		if len(f) != 1 {
			return 0, false // one position per glyph: needs layout
		}
		x, err := strconv.ParseFloat(f[0], 64)
		return x, err == nil
	}
	x, okx := first("x")
	y, oky := first("y")
	if !okx || !oky {
		return false
	}
	far := func(v, lo, size float64) bool {
		d := max(svgFar, 10*size)
		return v < lo-d || v > lo+size+d
	}
	return far(x, minX, w) || far(y, minY, h)
}

// svgFar is how far (user units) beyond its svg's viewport a text's
// anchor must be to be judged out of sight without layout.
const svgFar = 1000

// svgViewport returns the user-space rectangle an <svg> shows: its
// viewBox, else 0 0 width height (px or unitless attributes).
func svgViewport(svg *html.Node) (minX, minY, w, h float64, ok bool) {
	if vb, has := dom.Attr(svg, "viewBox"); has {
		f := strings.FieldsFunc(vb, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
		if len(f) != 4 {
			return 0, 0, 0, 0, false
		}
		var v [4]float64
		for i, s := range f {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return 0, 0, 0, 0, false
			}
			v[i] = x
		}
		return v[0], v[1], v[2], v[3], v[2] > 0 && v[3] > 0
	}
	px := func(k string) (float64, bool) {
		v, _ := dom.Attr(svg, k)
		x, unit, ok := cssLength(v)
		return x, ok && (unit == "" || unit == "px") && x > 0
	}
	w, okw := px("width")
	h, okh := px("height")
	return 0, 0, w, h, okw && okh
}

// svgUnpainted reports whether n is SVG text (<text>, <tspan>,
// <textPath>) that paints nothing: its fill, its own or inherited from the
// nearest SVG ancestor that sets one, is none or transparent, and so is
// its stroke (unset: none), and no descendant paints again (paintedSVG).
func svgUnpainted(n *html.Node, sty *pageStyles) bool {
	switch n.Data {
	case "text", "tspan", "textPath":
	default:
		return false
	}
	eff := map[string]string{}
	for p := n; p != nil && p.Type == html.ElementNode && p.Namespace == "svg"; p = p.Parent {
		st := sty.of(p)
		for _, k := range []string{"fill", "stroke", "fill-opacity"} {
			if _, set := eff[k]; !set && st[k] != "" && st[k] != "inherit" {
				eff[k] = st[k]
			}
		}
	}
	if _, set := eff["fill"]; !set {
		return false // the initial fill is black
	}
	return unpaintedText(eff) && !hasDescendant(n, sty.paintedSVG)
}

// svgHidesByAttribute reports whether some SVG element of doc has a
// presentation attribute with a hiding value (hidingValue): then the
// page's stylesheet rules are cascaded even when none of them hides, since
// any of them overrides a presentation attribute.
func svgHidesByAttribute(doc *html.Node) bool {
	found := false
	dom.Walk(doc, func(n *html.Node) bool {
		if found {
			return false
		}
		if n.Type == html.ElementNode && n.Namespace == "svg" {
			for _, d := range presentationDecls(n) {
				found = found || hidingValue(d.prop, d.val)
			}
		}
		return !found
	})

	return found
}
