package visibility

import (
	"math"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Hiding rules that make the static path agree with visibility.js (the
// browser's judgement) where a style alone decides (hostile review session
// 6, D2 and D12). What needs layout is left to the browser: a child
// positioned outside a parent that clips it, text clipped by a fixed-size
// box it overflows, an opacity that is faint only as the product of
// several ancestors' opacities.

// faintOpacity is visibility.js's threshold: an element whose opacity is
// under 0.05 (5 %) is not seen. (visibility.js multiplies the opacities of
// an element and its ancestors; here each element is judged on its own.)
const faintOpacity = 0.05

// faintOpacityValue reports whether an opacity value is under faintOpacity
// (opacity: 0.01, 2%, 0).
func faintOpacityValue(v string) bool {
	n, unit, ok := cssLength(v)
	if !ok || unit != "" && unit != "%" || strings.TrimSpace(v) == "" {
		return false
	}
	if unit == "%" {
		n /= 100
	}
	return n < faintOpacity
}

// defaultInline are the elements whose box is inline unless a style sets
// another display: a width does not apply to them.
var defaultInline = map[atom.Atom]bool{
	atom.A: true, atom.Span: true, atom.Em: true, atom.Strong: true, atom.B: true, atom.I: true,
	atom.U: true, atom.S: true, atom.Small: true, atom.Code: true, atom.Abbr: true, atom.Cite: true,
	atom.Q: true, atom.Sub: true, atom.Sup: true, atom.Mark: true, atom.Label: true, atom.Time: true,
	atom.Font: true, atom.Kbd: true, atom.Samp: true, atom.Var: true, atom.Dfn: true, atom.Bdi: true, atom.Bdo: true,
}

// narrowClipped reports whether n's style (st) clips its box to nothing in
// width: width or max-width of 0 with overflow (or overflow-x) hidden or
// clip, on a box a width applies to (not display:inline, nor an inline
// element with no display of its own), that no flex or grid container
// grows (flex or flex-grow on the element, or a flex or grid display on
// its parent, in the styles known: parent). visibility.js leaves out a box
// at most 1px wide that clips its overflow; a width of 1px is not judged
// here (see collapsed).
func narrowClipped(n *html.Node, st map[string]string, parent map[string]string) bool {
	clipped := false
	for _, p := range []string{"overflow", "overflow-x"} {
		w := strings.Fields(st[p])
		clipped = clipped || len(w) > 0 && (w[0] == "hidden" || w[0] == "clip")
	}
	if !clipped {
		return false
	}
	zero := false
	for _, p := range []string{"width", "max-width"} {
		v, _, ok := cssLength(st[p])
		zero = zero || ok && v == 0
	}
	if !zero {
		return false
	}
	d := st["display"]
	if d == "inline" || d == "" && defaultInline[n.DataAtom] || d == "contents" {
		return false
	}
	if g := st["flex-grow"]; g != "" && g != "0" {
		return false
	}
	if f := st["flex"]; f != "" && f != "none" && f != "0" && !strings.HasPrefix(f, "0 ") {
		return false
	}
	if pd := parent["display"]; strings.Contains(pd, "flex") || strings.Contains(pd, "grid") {
		return false
	}
	return true
}

// indentedAway reports whether a style pushes its text out of its own box
// to the right, the image-replacement pattern (text-indent: 100% or
// -9999px's mirror 9999px, white-space: nowrap, overflow hidden): a
// text-indent of at least 100% (or 500px, 50em) with overflow (or
// overflow-x) hidden or clip and white-space nowrap or pre.
func indentedAway(st map[string]string) bool {
	v, unit, ok := cssLength(st["text-indent"])
	if !ok || v <= 0 {
		return false
	}
	far := false
	switch unit {
	case "%", "vw":
		far = v >= 100
	case "px", "":
		far = v >= 500
	case "em", "rem":
		far = v >= 50
	}
	if !far {
		return false
	}
	ws := st["white-space"]
	if ws != "nowrap" && ws != "pre" && !strings.Contains(ws, "nowrap") {
		return false
	}
	for _, p := range []string{"overflow", "overflow-x"} {
		w := strings.Fields(st[p])
		if len(w) > 0 && (w[0] == "hidden" || w[0] == "clip") {
			return true
		}
	}
	return false
}

// edgeOnRotation reports whether a transform function turns the box edge
// on (rotateX or rotateY by 90° or 270°: its projection has no area, which
// visibility.js reads as a degenerate matrix).
func edgeOnRotation(f cssFunc) bool {
	if f.name != "rotatex" && f.name != "rotatey" || len(f.args) != 1 {
		return false
	}
	a := f.args[0]
	deg, found := 0.0, false
	for _, u := range []struct {
		unit string
		per  float64
	}{{"deg", 1}, {"grad", 0.9}, {"rad", 180 / math.Pi}, {"turn", 360}} {
		if s, ok := strings.CutSuffix(a, u.unit); ok && !found {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return false
			}
			deg, found = f*u.per, true
		}
	}
	if !found {
		return false
	}
	r := math.Mod(math.Abs(deg), 180)
	return math.Abs(r-90) < 0.01
}

// sameColorText reports whether a style paints its text in the colour of
// its own background, both declared on the element (color and
// background-color, or a background shorthand that is one colour and
// nothing else: no image or gradient, which could show the text): white on
// white. Colours are compared as read by rgbColor; a pair it cannot read
// hides nothing.
func sameColorText(st map[string]string) bool {
	c, ok := rgbColor(st["color"])
	if !ok {
		return false
	}
	bg := st["background-color"]
	if bg == "" {
		bg = st["background"]
	}
	b, ok := rgbColor(bg)
	return ok && c == b
}

// rgbColor reads an opaque colour: a hex colour (#rgb, #rrggbb, with an
// alpha of ff), rgb()/rgba() with integer channels and alpha 1, or the
// keywords white and black. ok is false for anything else.
func rgbColor(v string) (rgb [3]int, ok bool) {
	s := strings.TrimSpace(v)
	switch s {
	case "white":
		return [3]int{255, 255, 255}, true
	case "black":
		return [3]int{0, 0, 0}, true
	}
	if h, ok := strings.CutPrefix(s, "#"); ok {
		switch len(h) {
		case 3:
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		case 8:
			if h[6:] != "ff" {
				return rgb, false
			}
			h = h[:6]
		}
		if len(h) != 6 {
			return rgb, false
		}
		for i := range 3 {
			x, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
			if err != nil {
				return rgb, false
			}
			rgb[i] = int(x)
		}
		return rgb, true
	}
	fs, ok := cssFuncs(s)
	if !ok || len(fs) != 1 || fs[0].name != "rgb" && fs[0].name != "rgba" {
		return rgb, false
	}
	a := fs[0].args
	if len(a) == 4 {
		if x, err := strconv.ParseFloat(a[3], 64); err != nil || x != 1 {
			return rgb, false
		}
	} else if len(a) != 3 {
		return rgb, false
	}
	for i := range 3 {
		x, err := strconv.Atoi(a[i])
		if err != nil || x < 0 || x > 255 {
			return rgb, false
		}
		rgb[i] = x
	}
	return rgb, true
}

// plainText reports whether n's text is its own: its only child elements
// are <br> and unstyled emphasis (b, i, em, strong without attributes). A
// white-on-white element with other children is kept: a child can be
// coloured by a rule Gatehouse does not see (an external stylesheet, a tag
// rule), as a WordPress section whose colour matches its background holds
// paragraphs coloured by their class (wcxb-dev page 0288).
func plainText(n *html.Node) bool {
	ok := true
	for c := n.FirstChild; c != nil && ok; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.Br:
		case atom.B, atom.I, atom.Em, atom.Strong:
			ok = len(c.Attr) == 0 && plainText(c)
		default:
			ok = false
		}
	}
	return ok
}

// ruleHides reports whether a rule's declarations together hide an element
// although none does on its own (white on white, image replacement), so
// that the rule is matched like one with a hiding value.
func ruleHides(ds []cssDecl) bool {
	st := map[string]string{}
	for _, d := range ds {
		st[d.prop] = d.val
	}
	return sameColorText(st) || lowContrastDecls(st) || indentedAway(st)
}
