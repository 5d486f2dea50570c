package visibility

import (
	"strconv"
	"strings"
)

// Media queries (Media Queries 4) are judged at a fixed set of reference
// viewports (mediaViewports) rather than at one: text hidden by a rule
// that applies at every one of them is hidden from every reader, text
// hidden at some of them only is shown to some readers (a mobile-only
// menu, a desktop-only sidebar) and kept, and a rule that applies at none
// of them (min-width: 5000px, a print or speech query) is skipped whole.
// A query whose features cannot be evaluated (prefers-color-scheme,
// resolution, an unknown feature) is taken to apply at some viewports only.
//
// This closes the gap of judging every conditional query as "some
// viewports": a page could wrap its hiding rule in (min-width: 0) or
// (orientation: portrait), (orientation: landscape) to have it ignored.

// mediaViewport is one reference viewport: its size in CSS px and the
// input it comes with.
type mediaViewport struct {
	width, height float64
	touch         bool // a coarse pointer without hover (a phone or tablet)
}

// mediaViewports are the reference viewports: a phone and a tablet held
// upright, a laptop and a desktop screen.
var mediaViewports = [...]mediaViewport{
	{375, 667, true},
	{820, 1180, true},
	{1366, 768, false},
	{1920, 1080, false},
}

// tri is a three-valued truth value: a feature Gatehouse cannot evaluate
// is unknown.
type tri int8

const (
	triFalse tri = iota
	triTrue
	triUnknown
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func (t tri) not() tri {
	switch t {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triUnknown
}

func triAnd(a, b tri) tri {
	switch {
	case a == triFalse || b == triFalse:
		return triFalse
	case a == triTrue && b == triTrue:
		return triTrue
	}
	return triUnknown
}

// triOr is Kleene's or, by De Morgan from triAnd.
func triOr(a, b tri) tri { return triAnd(a.not(), b.not()).not() }

// mediaApplies classifies a media query list (Media Queries 4 §2, §3): always
// when, at every reference viewport, some query of the list matches; never
// when none matches at any of them; sometimes otherwise (including a query
// Gatehouse cannot evaluate). Media types other than screen and all (print,
// speech, tv, …) never match.
func mediaApplies(list string) mediaKind {
	toks := mediaTokens(strings.ToLower(list))
	queries := splitTop(toks, ",")
	if len(strings.TrimSpace(list)) == 0 {
		return mediaAlways // an empty query list matches all
	}
	all, none := true, true
	for _, vp := range mediaViewports {
		v := triFalse
		for _, q := range queries {
			v = triOr(v, evalQuery(q, vp))
		}
		all = all && v == triTrue
		none = none && v == triFalse
	}
	switch {
	case all:
		return mediaAlways
	case none:
		return mediaNever
	}
	return mediaSometimes
}

// mediaTokens splits a query list into words, parentheses, commas and
// comparison operators.
func mediaTokens(s string) []string {
	r := strings.NewReplacer("(", " ( ", ")", " ) ", ",", " , ", ">=", " >= ", "<=", " <= ", ":", " : ")
	s = r.Replace(s)
	// Lone < > = (not part of <= >=).
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '<' || c == '>') && (i+1 >= len(s) || s[i+1] != '=') || c == '=' && (i == 0 || s[i-1] != '<' && s[i-1] != '>') {
			b.WriteString(" ")
			b.WriteByte(c)
			b.WriteString(" ")
			continue
		}
		b.WriteByte(c)
	}
	return strings.Fields(b.String())
}

// splitTop splits toks at top-level occurrences of sep.
func splitTop(toks []string, sep string) [][]string {
	var out [][]string
	depth, start := 0, 0
	for i, t := range toks {
		switch t {
		case "(":
			depth++
		case ")":
			depth--
		case sep:
			if depth == 0 {
				out = append(out, toks[start:i])
				start = i + 1
			}
		}
	}
	return append(out, toks[start:])
}

// evalQuery evaluates one media query at vp: [only|not] [type] [and cond…],
// or a bare condition.
func evalQuery(q []string, vp mediaViewport) tri {
	if len(q) == 0 {
		return triFalse // an invalid (empty) query in a list matches nothing
	}
	neg := false
	switch q[0] {
	case "only":
		q = q[1:]
	case "not":
		if len(q) > 1 && q[1] != "(" {
			neg, q = true, q[1:]
		}
	}
	if len(q) == 0 {
		return triFalse
	}
	v := triTrue
	if q[0] != "(" && q[0] != "not" {
		switch q[0] {
		case "screen", "all":
		default:
			v = triFalse // print, speech and the deprecated types
		}
		q = q[1:]
		if len(q) > 0 {
			if q[0] != "and" {
				return triFalse
			}
			q = q[1:]
		}
	}
	if len(q) > 0 {
		c, rest := evalCond(q, vp, 0)
		if len(rest) > 0 {
			c = triUnknown
		}
		v = triAnd(v, c)
	}
	if neg {
		v = v.not()
	}
	return v
}

// evalCond evaluates a media condition (not X, X and Y…, X or Y…) and
// returns what follows it.
func evalCond(q []string, vp mediaViewport, depth int) (tri, []string) {
	if depth > 32 {
		return triUnknown, nil
	}
	v, q := evalInParens(q, vp, depth)
	for len(q) > 0 && (q[0] == "and" || q[0] == "or") {
		op := q[0]
		var w tri
		w, q = evalInParens(q[1:], vp, depth)
		if op == "and" {
			v = triAnd(v, w)
		} else {
			v = triOr(v, w)
		}
	}
	return v, q
}

// evalInParens evaluates "not (…)" or "(…)": a nested condition or a feature.
func evalInParens(q []string, vp mediaViewport, depth int) (tri, []string) {
	if len(q) > 0 && q[0] == "not" {
		v, rest := evalInParens(q[1:], vp, depth+1)
		return v.not(), rest
	}
	if len(q) == 0 || q[0] != "(" {
		return triUnknown, nil
	}
	// Find the matching parenthesis.
	d, end := 0, -1
	for i, t := range q {
		if t == "(" {
			d++
		} else if t == ")" {
			d--
			if d == 0 {
				end = i
				break
			}
		}
	}
	if end < 0 {
		return triUnknown, nil
	}
	inner, rest := q[1:end], q[end+1:]
	if len(inner) > 0 && (inner[0] == "(" || inner[0] == "not") {
		v, left := evalCond(inner, vp, depth+1)
		if len(left) > 0 {
			v = triUnknown
		}
		return v, rest
	}
	return evalFeature(inner, vp), rest
}

// evalFeature evaluates a media feature: name, name: value, or a range
// (width >= 600px, 400px < width <= 700px).
func evalFeature(f []string, vp mediaViewport) tri {
	switch {
	case len(f) == 1:
		return boolFeature(f[0], vp)
	case len(f) == 3 && f[1] == ":":
		name, val := f[0], f[2]
		for _, p := range []string{"min-", "max-"} {
			if base, ok := strings.CutPrefix(name, p); ok {
				if p == "min-" {
					return rangeFeature(base, ">=", val, vp)
				}
				return rangeFeature(base, "<=", val, vp)
			}
		}
		return discreteFeature(name, val, vp)
	case len(f) == 3 && isCmp(f[1]):
		if isRangeName(f[0]) {
			return rangeFeature(f[0], f[1], f[2], vp)
		}
		return rangeFeature(f[2], flipCmp(f[1]), f[0], vp)
	case len(f) == 5 && isCmp(f[1]) && isCmp(f[3]):
		return triAnd(rangeFeature(f[2], flipCmp(f[1]), f[0], vp), rangeFeature(f[2], f[3], f[4], vp))
	}
	return triUnknown
}

func isCmp(s string) bool { return s == "<" || s == ">" || s == "<=" || s == ">=" || s == "=" }

func isRangeName(s string) bool {
	switch s {
	case "width", "height", "device-width", "device-height", "aspect-ratio":
		return true
	}
	return false
}

// flipCmp turns "a < name" into "name > a".
func flipCmp(op string) string {
	switch op {
	case "<":
		return ">"
	case ">":
		return "<"
	case "<=":
		return ">="
	case ">=":
		return "<="
	}
	return op
}

// rangeFeature evaluates "name op value" for the size features.
func rangeFeature(name, op, val string, vp mediaViewport) tri {
	var have float64
	switch name {
	case "width", "device-width":
		have = vp.width
	case "height", "device-height":
		have = vp.height
	default:
		return triUnknown
	}
	want, ok := mediaLength(val)
	if !ok {
		return triUnknown
	}
	switch op {
	case "<":
		return triOf(have < want)
	case ">":
		return triOf(have > want)
	case "<=":
		return triOf(have <= want)
	case ">=":
		return triOf(have >= want)
	case "=":
		return triOf(have == want)
	}
	return triUnknown
}

// mediaLength converts a length in a media query to CSS px (em and rem
// are the initial 16px, Media Queries 4 §1.3).
func mediaLength(s string) (float64, bool) {
	for _, u := range []struct {
		unit string
		px   float64
	}{{"px", 1}, {"rem", 16}, {"em", 16}, {"pt", 4.0 / 3}, {"cm", 96 / 2.54}, {"mm", 96 / 25.4}, {"in", 96}} {
		if num, ok := strings.CutSuffix(s, u.unit); ok {
			f, err := strconv.ParseFloat(num, 64)
			return f * u.px, err == nil
		}
	}
	if s == "0" {
		return 0, true
	}
	return 0, false
}

// discreteFeature evaluates "name: value" for the features that differ
// between the reference viewports; others are unknown.
func discreteFeature(name, val string, vp mediaViewport) tri {
	switch name {
	case "orientation":
		switch val {
		case "portrait":
			return triOf(vp.height >= vp.width)
		case "landscape":
			return triOf(vp.width > vp.height)
		}
	case "hover", "any-hover":
		switch val {
		case "hover":
			return triOf(!vp.touch)
		case "none":
			return triOf(vp.touch)
		}
	case "pointer", "any-pointer":
		switch val {
		case "fine":
			return triOf(!vp.touch)
		case "coarse":
			return triOf(vp.touch)
		case "none":
			return triFalse
		}
	}
	return triUnknown
}

// boolFeature evaluates a feature named alone, "(hover)".
func boolFeature(name string, vp mediaViewport) tri {
	switch name {
	case "hover", "any-hover", "pointer", "any-pointer":
		if strings.Contains(name, "hover") {
			return triOf(!vp.touch)
		}
		return triTrue
	case "color", "width", "height", "orientation":
		return triTrue
	case "monochrome", "grid":
		return triFalse
	}
	return triUnknown
}
