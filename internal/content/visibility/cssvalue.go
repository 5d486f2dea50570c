package visibility

import (
	"strconv"
	"strings"
)

// CSS values that hide an element or its text (see DropHidden). Each
// parser reads the lower-cased, trimmed value of one declaration (see
// parseInlineStyle) and fails safe: a value it cannot read hides nothing.

// cssFuncs splits a value made of CSS functions ("translatex(-9999px)
// scale(1)") into their names and comma- or space-separated arguments.
// ok is false when the value is not a list of functions.
func cssFuncs(v string) (out []cssFunc, ok bool) {
	s := strings.TrimSpace(v)
	for s != "" {
		open := strings.IndexByte(s, '(')
		if open <= 0 {
			return nil, false
		}
		end := strings.IndexByte(s, ')')
		if end < open {
			return nil, false
		}
		name := strings.TrimSpace(s[:open])
		args := strings.FieldsFunc(s[open+1:end], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '/' })
		out = append(out, cssFunc{name, args})
		s = strings.TrimSpace(s[end+1:])
		if len(out) > 32 {
			return nil, false
		}
	}
	return out, len(out) > 0
}

// cssFunc is one function of a value: its name and arguments.
type cssFunc struct {
	name string
	args []string
}

// transformHides reports whether a transform value moves the element far
// off screen (a translation beyond farNegative's offsets: translateX(-9999px),
// translate(-100vw), translate3d(…), a matrix with such a translation) or
// squashes it to nothing (scale(0), scaleX(0), scaleY(0), a matrix whose
// scale is 0).
func transformHides(v string) bool {
	fs, ok := cssFuncs(v)
	if !ok {
		return false
	}
	zero := func(a string) bool {
		f, err := strconv.ParseFloat(strings.TrimSuffix(a, "%"), 64)
		return err == nil && f == 0
	}
	for _, f := range fs {
		a := f.args
		switch f.name {
		case "translate", "translate3d":
			if len(a) > 0 && farNegative(a[0]) || len(a) > 1 && farNegative(a[1]) {
				return true
			}
		case "translatex", "translatey":
			if len(a) == 1 && farNegative(a[0]) {
				return true
			}
		case "scale", "scale3d":
			if len(a) > 0 && (zero(a[0]) || len(a) > 1 && zero(a[1])) {
				return true
			}
		case "rotatex", "rotatey":
			if edgeOnRotation(f) {
				return true
			}
		case "scalex", "scaley":
			if len(a) == 1 && zero(a[0]) {
				return true
			}
		case "matrix": // matrix(a, b, c, d, tx, ty)
			if len(a) == 6 && (zero(a[0]) && zero(a[1]) || zero(a[2]) && zero(a[3]) || farNegative(a[4]+"px") || farNegative(a[5]+"px")) {
				return true
			}
		}
	}
	return false
}

// filterHides reports whether a filter value makes the element fully
// transparent: opacity(0) or opacity(0%) among its functions.
func filterHides(v string) bool {
	fs, ok := cssFuncs(v)
	if !ok {
		return false
	}
	for _, f := range fs {
		if f.name == "opacity" && len(f.args) == 1 && zeroOpacity(f.args[0]) {
			return true
		}
	}
	return false
}

// zoomHides reports whether a zoom value shrinks the element to at most
// 5 % of its size (zoom: 0.01, 1%).
func zoomHides(v string) bool {
	n, unit, ok := cssLength(v)
	if !ok || unit != "" && unit != "%" {
		return false
	}
	if unit == "%" {
		n /= 100
	}
	return n >= 0 && n <= 0.05
}

// tinyFont reports whether a font-size value computes to at most
// maxHiddenFontPx against the initial 16px: 2px, 1.5pt, 0.125em or rem,
// 12.5 %. Zero (font-size: 0, 0px, 0em) is among them. (Text is judged by its
// computed size, fontPx; this is the value on its own, for the
// stylesheet's choice of the rules that can hide.)
func tinyFont(v string) bool {
	n, unit, ok := cssLength(v)
	if !ok || strings.TrimSpace(v) == "" || n < 0 {
		return false
	}
	switch unit {
	case "", "px":
		return n <= maxHiddenFontPx
	case "pt":
		return n <= maxHiddenFontPx*0.75
	case "em", "rem":
		return n <= maxHiddenFontPx/float64(initialFontPx)
	case "%":
		return n <= 100*maxHiddenFontPx/float64(initialFontPx)
	}
	return n == 0
}

// shrinkingFont reports whether a font-size value makes text at most half
// its parent's size (0.5em, 50 %, smaller): two of them in a row can reach
// maxHiddenFontPx, so a stylesheet rule setting one is cascaded like a
// hiding rule (hidingValue) and the size is computed down the tree.
func shrinkingFont(v string) bool {
	if strings.TrimSpace(v) == "smaller" {
		return true
	}
	n, unit, ok := cssLength(v)
	return ok && n >= 0 && (unit == "em" && n <= 0.5 || unit == "%" && n <= 50)
}

// transparentColor reports whether a color value is fully transparent:
// transparent, or an rgb()/rgba()/hsl()/hsla()/hwb()/lab()… function or a
// #rrggbbaa / #rgba hex colour with alpha 0.
func transparentColor(v string) bool {
	s := strings.TrimSpace(v)
	if s == "transparent" {
		return true
	}
	if h, ok := strings.CutPrefix(s, "#"); ok {
		switch len(h) {
		case 4:
			return h[3] == '0'
		case 8:
			return h[6:] == "00"
		}
		return false
	}
	fs, ok := cssFuncs(s)
	if !ok || len(fs) != 1 {
		return false
	}
	a := fs[0].args
	switch fs[0].name {
	case "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch":
		if len(a) == 4 {
			return zeroOpacity(a[3])
		}
	}
	return false
}

// farNegativeMargin reports whether a style's margins move the element
// far off the top or left of the page (margin-left or margin-top, or the
// margin shorthand, beyond farNegative's offsets).
func farNegativeMargin(st map[string]string) bool {
	if farNegative(st["margin-left"]) || farNegative(st["margin-top"]) {
		return true
	}
	f := strings.Fields(st["margin"])
	switch len(f) {
	case 1, 2, 3:
		return farNegative(f[0]) || len(f) > 1 && farNegative(f[1])
	case 4:
		return farNegative(f[0]) || farNegative(f[3])
	}
	return false
}

// collapsed reports whether a style clips its box to nothing in height:
// overflow (or overflow-x/-y) hidden or clip with a height or max-height
// of at most 1px. It is how accordion panels and "read more" sections wait
// for a script to open them, and also a way to hide text; see hideKind. (A
// width of 1px is not judged: flex layouts write width:1px on items that
// grow to fill their row.)
func collapsed(st map[string]string) bool {
	clipped := false
	for _, p := range []string{"overflow", "overflow-x", "overflow-y"} {
		for _, w := range strings.Fields(st[p]) {
			clipped = clipped || w == "hidden" || w == "clip"
		}
	}
	if !clipped {
		return false
	}
	for _, p := range []string{"height", "max-height"} {
		v, unit, ok := cssLength(st[p])
		if ok && (v == 0 || v <= 1 && v >= 0 && (unit == "px" || unit == "")) {
			return true
		}
	}
	return false
}
