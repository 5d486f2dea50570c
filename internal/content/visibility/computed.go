package visibility

import (
	"math"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Hiding rules that need a value computed down the tree (issue 16 item 8),
// in step with visibility.js, which reads the browser's computed style:
//
//   - font size: a size relative to the inherited one ("0.1em", "5%",
//     "smaller", "0.1rem" against the root's) is resolved down the
//     cascade from the initial 16px (CSS Fonts 4 §2.5), so text whose
//     computed size is at most maxHiddenFontPx is hidden however the
//     size was reached (fontPx, tinyText);
//   - colour: text whose colour is nearly its background's — a WCAG 2.2
//     contrast ratio under minContrast, the background the nearest one
//     declared on the element or an ancestor, with alpha composited over
//     what is below it (lowContrastText);
//   - images drawn at most 1px wide or high (their width or height
//     attribute, or a CSS width or height, which wins): their alt text
//     is shown nowhere (tinyImage).
//
// The static path sees inline styles and the page's own <style> rules
// (stylesheet.go), where only the rules with a hiding value are
// cascaded: a colour or size set by a rule that hides nothing on its own
// counts as not set. A value it cannot compute (calc(), a viewport
// unit, a background image) hides nothing.

// maxHiddenFontPx is the computed font size, in CSS px, at or under which
// text is not seen (visibility.js uses the same bound).
const maxHiddenFontPx = 2

// initialFontPx is the initial font size ("medium") of the user agents
// Gatehouse reads pages as, in CSS px.
const initialFontPx = 16

// fontKeywords are the absolute-size keywords (CSS Fonts 4 §2.5.1, the
// table for a 16px medium), in CSS px.
var fontKeywords = map[string]float64{
	"xx-small": 9, "x-small": 10, "small": 13, "medium": 16, "large": 18,
	"x-large": 24, "xx-large": 32, "xxx-large": 48,
}

// fontRatio is the factor of "smaller" and "larger" (Chromium's and
// Firefox's for sizes outside their keyword table).
const fontRatio = 1.2

// fontPx returns n's computed font size in CSS px, or -1 when it cannot be
// computed (a viewport unit, calc(), a size relative to an unknown one).
// n must be an element; values are memoised per page.
func (s *pageStyles) fontPx(n *html.Node) float64 {
	if s != nil {
		if v, ok := s.font[n]; ok {
			return v
		}
	}
	parent := float64(initialFontPx)
	if p := n.Parent; p != nil && p.Type == html.ElementNode {
		parent = s.fontPx(p)
	}
	v := resolveFontSize(s.of(n)["font-size"], parent, func() float64 { return s.rootFontPx(n) })
	if s != nil {
		if s.font == nil {
			s.font = map[*html.Node]float64{}
		}
		s.font[n] = v
	}
	return v
}

// rootFontPx returns the computed font size of the root element of n's
// tree (what rem is relative to).
func (s *pageStyles) rootFontPx(n *html.Node) float64 {
	for n.Parent != nil && n.Parent.Type == html.ElementNode {
		n = n.Parent
	}
	if v := resolveFontSize(s.of(n)["font-size"], initialFontPx, func() float64 { return initialFontPx }); v >= 0 {
		return v
	}
	return initialFontPx
}

// resolveFontSize computes a font-size value given the parent's computed
// size (parent, -1 when unknown) and the root's (root, called for rem
// only). An empty, inherited or invalid value is the parent's size; -1
// means it cannot be computed.
func resolveFontSize(v string, parent float64, root func() float64) float64 {
	v = strings.TrimSpace(v)
	switch v {
	case "", "inherit", "unset", "revert", "revert-layer":
		return parent
	case "initial":
		return initialFontPx
	case "smaller", "larger":
		if parent < 0 {
			return -1
		}
		if v == "smaller" {
			return parent / fontRatio
		}
		return parent * fontRatio
	}
	if px, ok := fontKeywords[v]; ok {
		return px
	}
	f, unit, ok := cssLength(v)
	if !ok {
		if strings.ContainsAny(v, "(") {
			return -1 // calc(), clamp(), var(): not computed
		}
		return parent // an invalid value is ignored
	}
	if f < 0 {
		return parent
	}
	rel := func(base float64) float64 {
		if base < 0 {
			return -1
		}
		return f * base
	}
	switch unit {
	case "px", "":
		return f
	case "pt":
		return f * 96 / 72
	case "in":
		return f * 96
	case "cm":
		return f * 96 / 2.54
	case "mm":
		return f * 96 / 25.4
	case "em":
		return rel(parent)
	case "%":
		return rel(parent) / 100
	case "rem":
		return rel(root())
	}
	return -1 // vw, vh: depends on the viewport
}

// tinyText reports whether the text directly in element n is drawn at a
// computed font size of at most maxHiddenFontPx.
func (s *pageStyles) tinyText(n *html.Node) bool {
	v := s.fontPx(n)
	return v >= 0 && v <= maxHiddenFontPx
}

// readableText reports whether element n's text is not tinyText: a
// descendant that sets a size of its own inside a tiny parent renders
// its text.
func (s *pageStyles) readableText(n *html.Node) bool {
	return !s.tinyText(n)
}

// minContrast is the WCAG 2.2 contrast ratio (§1.4.3, "contrast ratio")
// under which text is taken to be the colour of its background: 1 is the
// same colour, #fefefe on #fff is 1.01, #ccc on #fff (light grey) 1.6.
const minContrast = 1.1

// rgba is a colour with straight (not premultiplied) alpha, channels in
// 0–1.
type rgba struct{ r, g, b, a float64 }

// over composites c over the opaque colour below (alpha compositing,
// Compositing and Blending 1 §5.1).
func (c rgba) over(below rgba) rgba {
	return rgba{c.r*c.a + below.r*(1-c.a), c.g*c.a + below.g*(1-c.a), c.b*c.a + below.b*(1-c.a), 1}
}

// luminance is the WCAG relative luminance of an opaque sRGB colour.
func (c rgba) luminance() float64 {
	lin := func(v float64) float64 {
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.r) + 0.7152*lin(c.g) + 0.0722*lin(c.b)
}

// contrastRatio is the WCAG contrast ratio of two opaque colours (1–21).
func contrastRatio(a, b rgba) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// lowContrastText reports whether element n, whose declarations are st,
// paints its text in a colour it declares (color, or
// -webkit-text-fill-color, which wins) whose contrast with the background
// behind it (backdrop) is under minContrast.
func (s *pageStyles) lowContrastText(n *html.Node, st map[string]string) bool {
	fg, ok := textColor(st)
	if !ok {
		return false
	}
	bg, ok := s.backdrop(n)
	return ok && contrastRatio(fg.over(bg), bg) < minContrast
}

// backdropOf is a memoised backdrop: the colour and whether it is known.
type backdropOf struct {
	c  rgba
	ok bool
}

// backdrop returns the opaque colour behind element n's text: n's own
// background colour composited over its ancestors', up to the first
// opaque one. ok is false when a background image or gradient is on the
// way, or no opaque colour is declared at all (the page's other styles
// are unknown). Values are memoised per page.
func (s *pageStyles) backdrop(n *html.Node) (rgba, bool) {
	if s != nil {
		if b, ok := s.bg[n]; ok {
			return b.c, b.ok
		}
	}
	var b backdropOf
	c, known, opaque := backgroundOf(s.of(n))
	switch {
	case !known:
	case opaque:
		b = backdropOf{c, true}
	default:
		if p := n.Parent; p != nil && p.Type == html.ElementNode {
			if below, ok := s.backdrop(p); ok {
				b = backdropOf{c.over(below), true}
			}
		}
	}
	if s != nil {
		if s.bg == nil {
			s.bg = map[*html.Node]backdropOf{}
		}
		s.bg[n] = b
	}
	return b.c, b.ok
}

// textColor reads the colour a style declares for its text: color, or
// -webkit-text-fill-color, which wins. ok is false when it declares none
// it can read, or a transparent one (transparentText's concern).
func textColor(st map[string]string) (rgba, bool) {
	v := st["-webkit-text-fill-color"]
	switch v {
	case "", "inherit", "unset", "currentcolor", "revert", "revert-layer":
		v = st["color"]
	}
	c, ok := parseColor(v)
	return c, ok && c.a > 0
}

// lowContrastDecls reports whether one set of declarations paints text
// in a colour whose contrast with the opaque background colour it also
// declares is under minContrast (a stylesheet rule's "white on white").
func lowContrastDecls(st map[string]string) bool {
	fg, ok := textColor(st)
	if !ok {
		return false
	}
	bg, known, opaque := backgroundOf(st)
	return known && opaque && contrastRatio(fg.over(bg), bg) < minContrast
}

// backgroundOf reads a style's background colour: background-color, else
// a background shorthand that is one colour and nothing else. known is
// false when the background may show more than a colour (an image, a
// gradient, a shorthand it cannot read); opaque reports an alpha of 1.
// No background declared is a known transparent one.
func backgroundOf(st map[string]string) (c rgba, known, opaque bool) {
	if strings.Contains(st["background-image"], "(") {
		return c, false, false
	}
	v := st["background-color"]
	if v == "" {
		v = st["background"]
		if strings.Contains(v, "(") && !isColorFunc(v) {
			return c, false, false // url(), a gradient, several layers
		}
	}
	switch strings.TrimSpace(v) {
	case "", "none", "transparent", "initial", "unset", "inherit", "revert", "revert-layer":
		return c, true, false
	}
	c, ok := parseColor(v)
	if !ok {
		return c, false, false
	}
	return c, true, c.a >= 1
}

// isColorFunc reports whether v is one colour function and nothing else
// ("rgb(…)", "hsl(…)").
func isColorFunc(v string) bool {
	fs, ok := cssFuncs(strings.TrimSpace(v))
	if !ok || len(fs) != 1 {
		return false
	}
	switch fs[0].name {
	case "rgb", "rgba", "hsl", "hsla":
		return true
	}
	return false
}

// parseColor reads a CSS colour (CSS Color 4): a named colour, a hex
// colour (#rgb, #rgba, #rrggbb, #rrggbbaa), rgb()/rgba() with numbers or
// percentages, comma or space syntax and an optional alpha, hsl()/hsla(),
// or transparent. ok is false for anything else (currentcolor, system
// colours, lab(), color-mix(), var()).
func parseColor(v string) (rgba, bool) {
	s := strings.ToLower(strings.TrimSpace(v))
	if s == "transparent" {
		return rgba{}, true
	}
	if hex, ok := namedColors[s]; ok {
		return rgba{float64(hex>>16) / 255, float64(hex>>8&0xff) / 255, float64(hex&0xff) / 255, 1}, true
	}
	if h, ok := strings.CutPrefix(s, "#"); ok {
		return parseHexColor(h)
	}
	fs, ok := cssFuncs(s)
	if !ok || len(fs) != 1 {
		return rgba{}, false
	}
	args := fs[0].args
	if len(args) != 3 && len(args) != 4 {
		return rgba{}, false
	}
	alpha := 1.0
	if len(args) == 4 {
		a, ok := colorNumber(args[3], 1)
		if !ok {
			return rgba{}, false
		}
		alpha = clamp01(a)
	}
	switch fs[0].name {
	case "rgb", "rgba":
		var c [3]float64
		for i := range 3 {
			x, ok := colorNumber(args[i], 255)
			if !ok {
				return rgba{}, false
			}
			c[i] = clamp01(x / 255)
		}
		return rgba{c[0], c[1], c[2], alpha}, true
	case "hsl", "hsla":
		h, err := strconv.ParseFloat(strings.TrimSuffix(args[0], "deg"), 64)
		if err != nil {
			return rgba{}, false
		}
		sat, ok1 := colorNumber(args[1], 100)
		light, ok2 := colorNumber(args[2], 100)
		if !ok1 || !ok2 {
			return rgba{}, false
		}
		r, g, b := hslToRGB(h, clamp01(sat/100), clamp01(light/100))
		return rgba{r, g, b, alpha}, true
	}
	return rgba{}, false
}

// colorNumber reads a colour channel: a number, or a percentage of full.
func colorNumber(s string, full float64) (float64, bool) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if pct {
		f = f / 100 * full
	}
	return f, true
}

func clamp01(f float64) float64 { return math.Min(1, math.Max(0, f)) }

// hslToRGB converts hue (degrees), saturation and lightness (0–1) to sRGB
// channels (CSS Color 4 §7.1).
func hslToRGB(h, s, l float64) (r, g, b float64) {
	h = math.Mod(h, 360)
	if h < 0 {
		h += 360
	}
	f := func(n float64) float64 {
		k := math.Mod(n+h/30, 12)
		a := s * math.Min(l, 1-l)
		return l - a*math.Max(-1, math.Min(k-3, math.Min(9-k, 1)))
	}
	return f(0), f(8), f(4)
}

// parseHexColor reads the digits of a hex colour.
func parseHexColor(h string) (rgba, bool) {
	switch len(h) {
	case 3, 4:
		var b strings.Builder
		for i := range len(h) {
			b.WriteByte(h[i])
			b.WriteByte(h[i])
		}
		h = b.String()
	case 6, 8:
	default:
		return rgba{}, false
	}
	x, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return rgba{}, false
	}
	if len(h) == 6 {
		x = x<<8 | 0xff
	}
	return rgba{float64(x>>24) / 255, float64(x>>16&0xff) / 255, float64(x>>8&0xff) / 255, float64(x&0xff) / 255}, true
}

// tinyImage reports whether an <img> is drawn at most 1px wide or high:
// by a CSS width or height (height, max-height, width, max-width) of at
// most 1px, or, where CSS sets no width (height), by its width (height)
// attribute. Its alt text then shows nowhere.
func tinyImage(n *html.Node, st map[string]string) bool {
	if n.DataAtom != atom.Img {
		return false
	}
	for _, dim := range []string{"width", "height"} {
		if v, ok := st["max-"+dim]; ok && tinyLength(v) {
			return true
		}
		if v, ok := st[dim]; ok {
			if tinyLength(v) {
				return true
			}
			continue // CSS sets it: the attribute does not count
		}
		if v, ok := dom.Attr(n, dim); ok && tinyDimension(v) {
			return true
		}
	}
	return false
}

// tinyLength reports whether a CSS length is at most 1px (0 in any unit).
func tinyLength(v string) bool {
	f, unit, ok := cssLength(v)
	return ok && f >= 0 && (f == 0 || f <= 1 && (unit == "px" || unit == ""))
}

// tinyDimension reports whether a width or height attribute's value (HTML
// §2.3.4.4, rules for parsing dimension values: leading digits) is at
// most 1.
func tinyDimension(v string) bool {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	f, err := strconv.ParseFloat(v[:i], 64)
	return err == nil && f <= 1 && !strings.HasPrefix(v[i:], "%")
}
