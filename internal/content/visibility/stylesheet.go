package visibility

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page stylesheets (the page's own <style> elements) are read for the
// declarations that can hide an element (hideProps), so that text hidden by
// a class or id rule is judged like text hidden by an inline style (see
// DropHidden). The CSS is tokenized and parsed by tdewolff/parse/v2/css
// (CSS Syntax Module Level 3); selectors are compiled and matched by
// andybalholm/cascadia. External stylesheets (<link rel=stylesheet>) are
// never fetched: the direct path reads the page it was given, nothing else.
//
// The cascade is the subset that decides visibility: for each element the
// matching rules' declarations of hideProps and its inline style are ordered
// by CSS Cascade 4 §6 (importance, inline over rules, selector specificity,
// source order; cascade layers are not told apart). A rule applies when it is
// outside any at-rule, inside @layer, or inside @media whose query list
// matches at every reference viewport (media.go: a phone, a tablet, a laptop
// and a desktop screen). A rule inside @media that matches at some of them
// only (a width, orientation, hover … feature), or a query Gatehouse cannot
// evaluate, or @container, or @supports not(…): its hiding values are
// ignored (text hidden at one viewport is shown at another, e.g. a
// mobile-only menu) and its other values (display:block at min-width:
// 768px) count, so that an element a wider screen reveals is kept. Inside
// @supports (…) only the hiding values count (see mediaHideOnly). @media
// matching none of them (print, speech, min-width: 5000px), @keyframes,
// @font-face and other at-rules are skipped.
//
// The work is capped, so that a hostile stylesheet cannot make extraction
// slow: at most maxStyleBytes of CSS are parsed, at most maxStyleRules
// selectors with a hiding value and as many others are kept, selectors longer than maxSelectorLen or using :has()
// (a descendant search per element) or cascadia's non-standard extensions
// (:contains and friends, which a browser rejects) are skipped, and at most
// maxStyleMatches matches of rules with a hiding value run within twice
// styleBudget of wall time, and as many of the other rules (which can only
// show an element again) within styleBudget. Past the first cap the rest of
// the page is judged on its inline styles; past the second an element's
// cascade holds only its hiding rules and inline style, so padding a sheet
// with other rules fails closed.
const (
	maxStyleBytes   = 2 << 20
	maxStyleRules   = 20000
	maxSelectorLen  = 1024
	maxStyleMatches = 400000
	styleBudget     = 250 * time.Millisecond
)

// hideProps are the CSS properties whose values can make an element
// unrendered or unseen (see isHiddenElement and visuallyHidden); only their
// declarations are kept from a stylesheet.
var hideProps = map[string]bool{
	"display": true, "visibility": true, "content-visibility": true, "opacity": true,
	"font-size": true, "position": true, "left": true, "top": true, "right": true,
	"bottom": true, "text-indent": true, "clip": true, "clip-path": true,
	"width": true, "height": true, "max-width": true, "max-height": true,
	"overflow": true, "overflow-x": true, "overflow-y": true, "transform": true,
	"margin": true, "margin-left": true, "margin-top": true, "filter": true, "zoom": true,
	"color": true, "-webkit-text-fill-color": true,
	// Not hiding, but they tell gradient text from transparent text
	// (transparentText).
	"background-clip": true, "-webkit-background-clip": true,
	// Not hiding, but they tell an entrance animation's start state from
	// hidden text (animationStart).
	"transition": true, "animation": true, "animation-name": true,
	// White on white (sameColorText), image replacement (indentedAway),
	// a flex item's width (narrowClipped), unpainted SVG text
	// (unpaintedText).
	"background": true, "background-color": true, "white-space": true,
	"flex": true, "flex-grow": true, "fill": true, "stroke": true, "fill-opacity": true,
}

// cssDecl is one declaration: property and value lower-cased and trimmed,
// "!important" removed and recorded.
type cssDecl struct {
	prop, val string
	important bool
}

// cssRule is one selector of a style rule with the rule's hideProps
// declarations.
type cssRule struct {
	sel   cascadia.Sel
	spec  cascadia.Specificity
	order int
	decls []cssDecl
	// hides: some declaration has a hiding value on its own (hidingValue);
	// an element matching such a rule gets its full cascade computed.
	hides bool
	// conditional: the rule applies at some viewports only; its hiding
	// declarations were dropped when it was parsed.
	conditional bool
}

// styleSheet is the page's rules indexed by the key of their rightmost
// compound selector (an id, a class, a tag name, or none), as browsers do,
// so that an element is matched only against rules that can match it.
type styleSheet struct {
	byID, byClass, byTag map[string][]*cssRule
	universal            []*cssRule
	// n counts the rules kept, nHides those of them with a hiding value:
	// each kind has its own cap (maxStyleRules), so that padding a sheet
	// with other rules cannot push its hiding rules out.
	n, nHides int
}

// pageStyles holds the cascaded hideProps declarations of every element a
// page stylesheet rule matched; other elements have only their inline style.
type pageStyles struct {
	m map[*html.Node]map[string]string
	// rule holds, for the elements of m, the properties whose cascaded
	// value came from a stylesheet rule rather than the inline style.
	rule map[*html.Node]map[string]bool
	// font memoises fontPx (computed.go): the computed font size of
	// the elements asked about, in CSS px.
	font map[*html.Node]float64
	// bg memoises backdrop (computed.go).
	bg map[*html.Node]backdropOf
	// inline memoises of for the elements outside m.
	inline map[*html.Node]inlineStyle
}

// fromRule reports whether n's cascaded value of prop came from a page
// stylesheet rule (not from its inline style).
func (s *pageStyles) fromRule(n *html.Node, prop string) bool {
	return s != nil && s.rule[n][prop]
}

// of returns n's declarations of hideProps (see parseInlineStyle for the
// shape): the cascaded ones when a stylesheet rule matched n, else n's
// inline style. Nil when there are none.
func (s *pageStyles) of(n *html.Node) map[string]string {
	if s != nil {
		if st, ok := s.m[n]; ok {
			return st
		}
	}
	if s == nil || n.Namespace == "svg" {
		return parseInlineStyle(n)
	}
	// Outside SVG the inline style is a function of the style attribute
	// alone: parsed once per value (the hidden-text passes ask about the
	// same elements many times; the style may be rewritten between them).
	style, ok := dom.Attr(n, "style")
	if !ok || strings.TrimSpace(style) == "" {
		return nil
	}
	if c, ok := s.inline[n]; ok && c.style == style {
		return c.st
	}
	st := parseInlineStyle(n)
	if s.inline == nil {
		s.inline = map[*html.Node]inlineStyle{}
	}
	s.inline[n] = inlineStyle{style: style, st: st}
	return st
}

// inlineStyle is a memoised parseInlineStyle of an element whose style
// attribute was style. Callers only read st.
type inlineStyle struct {
	style string
	st    map[string]string
}

// computeStyles parses the page's <style> elements and cascades their
// hideProps declarations onto the elements they match (see the comment at
// the top of this file). The result is empty when the page has no rule
// with a hiding value.
func computeStyles(doc *html.Node) *pageStyles {
	out := &pageStyles{}
	var sheets []string
	size := 0
	keys := &pageKeys{tags: map[string]bool{}, ids: map[string]bool{}, classes: map[string]bool{}}
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		keys.add(n)
		switch n.DataAtom {
		case atom.Template:
			return false
		case atom.Style:
			if m, ok := dom.Attr(n, "media"); ok && mediaApplies(m) != mediaAlways {
				return false
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode && size < maxStyleBytes {
					t := c.Data
					if size+len(t) > maxStyleBytes {
						t = t[:maxStyleBytes-size]
					}
					size += len(t)
					sheets = append(sheets, t)
				}
			}
			return false
		}
		return true
	})

	if len(sheets) == 0 {
		return out
	}
	text := sheets[0] // (one sheet: no copy)
	if len(sheets) > 1 {
		text = strings.Join(sheets, "\n")
	}
	sh := parseSheet(text, svgHidesByAttribute(doc), keys)
	if sh == nil {
		return out
	}
	out.m, out.rule = map[*html.Node]map[string]string{}, map[*html.Node]map[string]bool{}
	m := matcher{sheet: sh, deadline: time.Now().Add(styleBudget), rule: out.rule}
	m.walk(doc, out.m, false)
	return out
}

// parseSheet returns the rules of a stylesheet text, or nil when none of
// them has a hiding value (nothing on the page can be hidden by it) and
// none sets display (nothing hidden by the hidden attribute can be shown
// by it: see hideKind) and keep is false. keep: the page has SVG
// presentation attributes with a hiding value, which any rule overrides
// (svgstyle.go). keys, when not nil, are the page's elements' keys: a
// selector indexed under a key no element has (an id, class or tag the page
// lacks) can match nothing, and is not compiled unless its validity decides
// a cap or the nil result (the answer is the same as with keys nil).
func parseSheet(text string, keep bool, keys *pageKeys) *styleSheet {
	p := css.NewParser(parse.NewInputString(text), false)
	sh := &styleSheet{byID: map[string][]*cssRule{}, byClass: map[string][]*cssRule{}, byTag: map[string][]*cssRule{}}
	// stack of the enclosing at-rules' applicability
	var stack []mediaKind
	// selToks: the current rule's selector tokens, split into selectors
	// (splitSelectors) only when the rule has a declaration Gatehouse
	// reads, which most rules of a page's sheets do not.
	var selToks []css.Token
	var decls []cssDecl
	inRule := false
	// anyHides: some rule has a hiding value; anyDisplay: some rule sets
	// display, which can show an element with the hidden attribute.
	anyHides, anyDisplay := false, false
	order := 0
	compiled := map[string]*cssRule{} // by selectorText; nil: not matched (compileRule)
	atKinds := map[string]mediaKind{} // atRuleKind by name and prelude text
	valid := func(key string) bool {
		c, seen := compiled[key]
		if !seen {
			c = compileRule(key)
			compiled[key] = c
		}
		return c != nil
	}
	// pending: the selectors no element can match, not compiled yet; a
	// valid one counts like an indexed rule (sh.n, sh.nHides, anyHides,
	// anyDisplay) when resolved. pendHides, pendOthers: how many of them
	// hide or not (an upper bound on what they add to sh's counts).
	type pend struct {
		key             string
		hides, displays bool
	}
	var pending []pend
	pendHides, pendOthers := 0, 0
	resolve := func(all bool) {
		rest := pending[:0]
		for _, e := range pending {
			if !all && !(e.hides && !anyHides || e.displays && !anyDisplay) {
				rest = append(rest, e)
				continue
			}
			if valid(e.key) {
				sh.n++
				if e.hides {
					sh.nHides++
				}
				anyHides = anyHides || e.hides
				anyDisplay = anyDisplay || e.displays
			}
		}
		pending = rest
		if all {
			pending, pendHides, pendOthers = nil, 0, 0
		}
	}
	for steps := 0; steps < 4*maxStyleBytes; steps++ {
		gt, _, data := p.Next()
		switch gt {
		case css.ErrorGrammar:
			if !p.HasParseError() {
				steps = 4 * maxStyleBytes // EOF
			}
			inRule = false
		case css.BeginAtRuleGrammar:
			// (Big sheets repeat the same few media queries: each
			// distinct at-rule prelude is judged once.)
			name := strings.ToLower(string(data))
			var b strings.Builder
			b.WriteString(name)
			b.WriteByte(0)
			for _, t := range p.Values() {
				b.Write(t.Data)
			}
			kind, seen := atKinds[b.String()]
			if !seen {
				kind = atRuleKind(name, p.Values())
				atKinds[b.String()] = kind
			}
			stack = append(stack, kind)
		case css.EndAtRuleGrammar:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case css.BeginRulesetGrammar:
			inRule, decls = true, decls[:0]
			// (Values is the parser's buffer, reused by the next grammar.)
			selToks = append(selToks[:0], p.Values()...)
		case css.DeclarationGrammar:
			if !inRule {
				continue
			}
			prop := strings.ToLower(cssUnescape(string(data)))
			if !hideProps[prop] {
				continue
			}
			val, imp := declValue(p.Values())
			decls = append(decls, cssDecl{prop: prop, val: val, important: imp})
		case css.EndRulesetGrammar:
			if !inRule {
				continue
			}
			inRule = false
			kind := mediaAlways
			for _, k := range stack {
				kind = max(kind, k)
			}
			if kind == mediaNever || len(decls) == 0 {
				continue
			}
			ds := decls
			if kind == mediaSometimes || kind == mediaHideOnly {
				ds = nil
				for _, d := range decls {
					if hidingValue(d.prop, d.val) == (kind == mediaHideOnly) {
						ds = append(ds, d)
					}
				}
				if len(ds) == 0 {
					continue
				}
			} else {
				ds = append([]cssDecl(nil), decls...)
			}
			hides := false
			for _, d := range ds {
				hides = hides || hidingValue(d.prop, d.val)
			}
			hides = hides || kind != mediaSometimes && ruleHides(ds)
			displays := false
			for _, d := range ds {
				displays = displays || d.prop == "display"
			}
			for _, toks := range splitSelectors(append([]css.Token(nil), selToks...)) {
				if hides && sh.nHides+pendHides >= maxStyleRules || !hides && sh.n-sh.nHides+pendOthers >= maxStyleRules {
					resolve(true) // (the exact counts decide)
				}
				if hides && sh.nHides >= maxStyleRules || !hides && sh.n-sh.nHides >= maxStyleRules {
					break
				}
				key := selectorText(toks)
				if keys != nil && !keys.has(ruleKey(toks)) {
					pending = append(pending, pend{key: key, hides: hides, displays: displays})
					if hides {
						pendHides++
					} else {
						pendOthers++
					}
					continue
				}
				// (A page's sheets repeat selectors, in media
				// queries and in rule after rule: each distinct one
				// is compiled once; a cascadia.Sel is only read.)
				if !valid(key) {
					continue
				}
				c := compiled[key]
				r := &cssRule{sel: c.sel, spec: c.spec}
				order++
				r.order, r.decls, r.hides, r.conditional = order, ds, hides, kind == mediaSometimes
				anyHides = anyHides || hides
				for _, d := range ds {
					anyDisplay = anyDisplay || d.prop == "display"
				}
				sh.add(r, toks)
			}
		}
	}
	if !anyHides && !anyDisplay && !keep {
		// (Only a pending selector that hides or sets display can
		// change the answer: resolved until one does.)
		resolve(false)
	}
	if !anyHides && !anyDisplay && !keep {
		return nil
	}
	return sh
}

// pageKeys are the keys the page's elements are candidates under
// (matcher.candidates): tag names, id values and classes.
type pageKeys struct {
	tags, ids, classes map[string]bool
}

// add records element n's keys.
func (k *pageKeys) add(n *html.Node) {
	k.tags[n.Data] = true
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch a.Key {
		case "id":
			k.ids[a.Val] = true
		case "class":
			for c := range strings.FieldsSeq(a.Val) { // (as candidates splits it, without a slice)
				k.classes[c] = true
			}
		}
	}
}

// has reports whether some element is a candidate for a rule indexed under
// the key ruleKey returned (the universal list: always).
func (k *pageKeys) has(id, class, tag string) bool {
	switch {
	case id != "":
		return k.ids[id]
	case class != "":
		return k.classes[class]
	case tag != "":
		return k.tags[tag]
	}
	return true
}

// splitSelectors splits a rule's selector tokens at top-level commas.
func splitSelectors(toks []css.Token) [][]css.Token {
	var out [][]css.Token
	start := 0
	topLevel(toks, func(i int, t css.Token) {
		if t.TokenType == css.CommaToken {
			out = append(out, toks[start:i])
			start = i + 1
		}
	})
	return append(out, toks[start:])
}

// selectorText is the text of a selector's tokens, trimmed.
func selectorText(toks []css.Token) string {
	var b strings.Builder
	for _, t := range toks {
		b.Write(t.Data)
	}
	return strings.TrimSpace(b.String())
}

// compileRule compiles one selector (its text, selectorText), or returns nil for one Gatehouse does
// not match: too long, a pseudo-element (it styles generated content, not
// the element), :has() or a cascadia extension, or invalid (a browser
// drops the rule too).
func compileRule(s string) *cssRule {
	if s == "" || len(s) > maxSelectorLen {
		return nil
	}
	ls := strings.ToLower(s)
	for _, bad := range []string{":has(", ":haschild(", ":contains(", ":containsown(", ":matches(", ":matchesown("} {
		if strings.Contains(ls, bad) {
			return nil
		}
	}
	sel, err := cascadia.ParseWithPseudoElement(s)
	if err != nil || sel.PseudoElement() != "" {
		return nil
	}
	return &cssRule{sel: sel, spec: sel.Specificity()}
}

// topLevel calls fn for each token of toks outside parentheses, brackets
// and functions (:not(…), [attr=…]).
func topLevel(toks []css.Token, fn func(i int, t css.Token)) {
	depth := 0
	for i, t := range toks {
		switch t.TokenType {
		case css.FunctionToken, css.LeftParenthesisToken, css.LeftBracketToken:
			depth++
		case css.RightParenthesisToken, css.RightBracketToken:
			depth--
		default:
			if depth == 0 {
				fn(i, t)
			}
		}
	}
}

// add indexes r under the key of its rightmost compound selector.
func (sh *styleSheet) add(r *cssRule, toks []css.Token) {
	sh.n++
	if r.hides {
		sh.nHides++
	}
	switch id, class, tag := ruleKey(toks); {
	case id != "":
		sh.byID[id] = append(sh.byID[id], r)
	case class != "":
		sh.byClass[class] = append(sh.byClass[class], r)
	case tag != "":
		sh.byTag[tag] = append(sh.byTag[tag], r)
	default:
		sh.universal = append(sh.universal, r)
	}
}

// ruleKey returns the key a selector's rule is indexed under: the id, else
// the class, else the tag name of its rightmost compound selector (all ""
// for none).
func ruleKey(toks []css.Token) (id, class, tag string) {
	// The rightmost compound: the tokens after the last top-level
	// combinator (whitespace, >, +, ~).
	start := 0
	topLevel(toks, func(i int, t css.Token) {
		if t.TokenType == css.WhitespaceToken || t.TokenType == css.DelimToken && len(t.Data) == 1 && strings.ContainsRune(">+~", rune(t.Data[0])) {
			start = i + 1
		}
	})
	comp := toks[start:]
	topLevel(comp, func(i int, t css.Token) {
		switch {
		case t.TokenType == css.HashToken && id == "":
			id = cssUnescape(string(t.Data[1:]))
		case t.TokenType == css.DelimToken && class == "" && string(t.Data) == "." && i+1 < len(comp) && comp[i+1].TokenType == css.IdentToken:
			class = cssUnescape(string(comp[i+1].Data))
		case t.TokenType == css.IdentToken && i == 0:
			tag = strings.ToLower(cssUnescape(string(t.Data)))
		}
	})
	return id, class, tag
}

// cssUnescape decodes CSS escapes in an identifier (CSS Syntax §4.3.7):
// "md\:hidden" is the class md:hidden, "\31 0" is "10".
func cssUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && j < i+7 && isHex(s[j]) {
			j++
		}
		if j == i+1 {
			b.WriteByte(s[j])
			i = j
			continue
		}
		v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
		if v == 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) {
			v = 0xfffd
		}
		b.WriteRune(rune(v))
		if j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n') {
			j++
		}
		i = j - 1
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// mediaKind is when a media query list (or an at-rule) applies on a
// screen, ordered so that the most restrictive of nested ones is the max.
type mediaKind int

const (
	mediaAlways mediaKind = iota // screen, all, or no condition
	// mediaHideOnly: @supports of a feature: its hiding declarations
	// count (a current browser supports what a page tests for) and its
	// other ones do not, so that a condition no browser meets cannot be
	// used to show, to Gatehouse only, what the page hides.
	mediaHideOnly
	mediaSometimes // at some viewports or feature sets only
	mediaNever     // print, speech, an at-rule whose content is no style rule
)

// atRuleKind classifies an at-rule by name and prelude tokens.
func atRuleKind(name string, prelude []css.Token) mediaKind {
	switch name {
	case "@media":
		var b strings.Builder
		for _, t := range prelude {
			b.Write(t.Data)
		}
		return mediaApplies(b.String())
	case "@layer":
		return mediaAlways
	case "@supports":
		var b strings.Builder
		for _, t := range prelude {
			b.Write(t.Data)
		}
		if strings.Contains(strings.ToLower(b.String()), "not") {
			return mediaSometimes
		}
		return mediaHideOnly
	case "@container", "@scope":
		return mediaSometimes
	}
	return mediaNever
}

// hidingValue reports whether one declaration can hide an element on its
// own or together with others (see isHiddenElement and visuallyHidden).
func hidingValue(prop, val string) bool {
	switch prop {
	case "display":
		return val == "none"
	case "visibility":
		return val == "hidden" || val == "collapse"
	case "content-visibility":
		return val == "hidden"
	case "opacity":
		return faintOpacityValue(val)
	case "fill":
		return val == "none" || transparentColor(val)
	case "font-size":
		return tinyFont(val) || shrinkingFont(val)
	case "left", "top", "right", "bottom", "text-indent", "margin-left", "margin-top":
		return farNegative(val)
	case "margin":
		return farNegativeMargin(map[string]string{"margin": val})
	case "filter":
		return filterHides(val)
	case "zoom":
		return zoomHides(val)
	case "color", "-webkit-text-fill-color":
		return transparentColor(val)
	case "clip":
		return tinyClip(val)
	case "clip-path":
		return insetClip(val)
	case "transform":
		return transformHides(val)
	case "width", "height", "max-width", "max-height":
		v, unit, ok := cssLength(val)
		return ok && (v == 0 || v <= 1 && (unit == "px" || unit == ""))
	}
	return false
}

// matcher matches a styleSheet against a tree within the caps.
type matcher struct {
	rule     map[*html.Node]map[string]bool // see pageStyles.rule
	sheet    *styleSheet
	deadline time.Time
	// Two budgets: rules with a hiding value (hides) are matched first and
	// get their own, so that padding a stylesheet with other rules cannot
	// use it up; past the budget of the others an element's cascade holds
	// only its hiding rules and inline style (it fails closed).
	matches, others        int
	stopped, othersStopped bool
	// cands is candidates' buffer, reused from element to element (a
	// cascade is done with its candidates before the next one starts).
	cands []*cssRule
}

// walk computes the cascade for n and its descendants. restore is true
// under an element whose visibility is hidden or font size zero, where a
// descendant's rules may turn either back (visibility:visible, a font size).
func (m *matcher) walk(n *html.Node, out map[*html.Node]map[string]string, restore bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || m.stopped {
			continue
		}
		if c.DataAtom == atom.Template || c.DataAtom == atom.Style || c.DataAtom == atom.Script {
			continue
		}
		st := m.cascade(c, restore)
		if st != nil {
			out[c] = st
		} else {
			st = parseInlineStyle(c)
		}
		v := st["visibility"]
		m.walk(c, out, restore || v == "hidden" || v == "collapse" || tinyFont(st["font-size"]) || transparentText(st))
	}
}

// cascade returns n's cascaded hideProps declarations, or nil when no rule
// that matters matched: a rule with a hiding value, or (when n or restore
// asks for it) any rule.
func (m *matcher) cascade(n *html.Node, restore bool) map[string]string {
	cands := m.candidates(n)
	if len(cands) == 0 {
		return nil
	}
	var hit []*cssRule
	for _, r := range cands {
		if r.hides && m.match(r, n) {
			hit = append(hit, r)
		}
	}
	inline := parseInlineDecls(n)
	// An element with the hidden attribute gets its full cascade: an
	// author rule setting display beats the UA sheet's [hidden]{display:
	// none} (CSS Cascade 4 §6.1; hideKind).
	_, hiddenAttr := dom.Attr(n, "hidden")
	pres := presentationDecls(n)
	full := len(hit) > 0 || restore || hiddenAttr
	for _, d := range append(pres, inline...) {
		full = full || hidingValue(d.prop, d.val)
	}
	if !full {
		return nil
	}
	for _, r := range cands {
		if !r.hides && m.matchOther(r, n) {
			hit = append(hit, r)
		}
	}
	if len(hit) == 0 {
		return nil
	}
	sort.Slice(hit, func(i, j int) bool { return hit[i].order < hit[j].order })
	// Ascending precedence: rules by specificity then order, inline,
	// important rules, important inline (CSS Cascade 4 §6.1).
	sort.SliceStable(hit, func(i, j int) bool { return hit[i].spec.Less(hit[j].spec) })
	st := map[string]string{}
	src := map[string]bool{} // true: the value came from a rule
	for _, d := range pres { // SVG presentation attributes: below every rule
		st[d.prop], src[d.prop] = d.val, false
	}
	for _, r := range hit {
		for _, d := range r.decls {
			if !d.important {
				st[d.prop], src[d.prop] = d.val, true
			}
		}
	}
	for _, d := range inline {
		if !d.important {
			st[d.prop], src[d.prop] = d.val, false
		}
	}
	for _, r := range hit {
		for _, d := range r.decls {
			if d.important {
				st[d.prop], src[d.prop] = d.val, true
			}
		}
	}
	for _, d := range inline {
		if d.important {
			st[d.prop], src[d.prop] = d.val, false
		}
	}
	m.rule[n] = src
	return st
}

// candidates returns the rules indexed under n's id, classes and tag, and
// the universal ones.
func (m *matcher) candidates(n *html.Node) []*cssRule {
	sh := m.sheet
	out := append(m.cands[:0], sh.universal...)
	out = append(out, sh.byTag[n.Data]...)
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch a.Key {
		case "id":
			out = append(out, sh.byID[a.Val]...)
		case "class":
			// Each distinct class once, in order of first appearance
			// (a class attribute holds a few: a linear look-back
			// beats a map).
			classes := strings.Fields(a.Val)
			for i, c := range classes {
				if !slices.Contains(classes[:i], c) {
					out = append(out, sh.byClass[c]...)
				}
			}
		}
	}
	m.cands = out
	return out
}

// match runs one match of a hiding rule within its caps (maxStyleMatches,
// twice styleBudget).
func (m *matcher) match(r *cssRule, n *html.Node) bool {
	if m.stopped {
		return false
	}
	m.matches++
	if m.matches > maxStyleMatches || m.matches%256 == 0 && time.Now().After(m.deadline.Add(styleBudget)) {
		m.stopped = true
		return false
	}
	return r.sel.Match(n)
}

// matchOther runs one match of another rule within its caps
// (maxStyleMatches, styleBudget).
func (m *matcher) matchOther(r *cssRule, n *html.Node) bool {
	if m.othersStopped || m.stopped {
		return false
	}
	m.others++
	if m.others > maxStyleMatches || m.others%256 == 0 && time.Now().After(m.deadline) {
		m.othersStopped = true
		return false
	}
	return r.sel.Match(n)
}

// parseInlineDecls returns n's inline declarations of hideProps in order
// (see parseInlineStyle for the normalisation), importance kept.
func parseInlineDecls(n *html.Node) []cssDecl {
	var out []cssDecl
	for _, d := range inlineDecls(n) {
		if hideProps[d.prop] {
			out = append(out, d)
		}
	}
	return out
}

// inlineDecls returns every declaration of n's style attribute in order,
// tokenized and parsed by tdewolff/parse/v2/css as a declaration list (CSS
// Syntax §5.3.7: comments dropped, a semicolon inside a string or url()
// is no separator, an invalid declaration is skipped) and normalised by
// declValue like a stylesheet's declarations: property and value
// lower-cased, CSS escapes decoded, "!important" removed and recorded. Nil
// when there is no style.
func inlineDecls(n *html.Node) []cssDecl {
	s, ok := dom.Attr(n, "style")
	if !ok || strings.TrimSpace(s) == "" {
		return nil
	}
	var out []cssDecl
	p := css.NewParser(parse.NewInputString(s), true)
	for steps := 0; steps <= len(s); steps++ {
		gt, _, data := p.Next()
		if gt == css.ErrorGrammar {
			if !p.HasParseError() {
				break // EOF
			}
			continue // an invalid declaration: skipped, as a browser does
		}
		if gt != css.DeclarationGrammar && gt != css.CustomPropertyGrammar {
			continue
		}
		prop := strings.ToLower(strings.TrimSpace(cssUnescape(string(data))))
		if prop == "" {
			continue
		}
		val, imp := declValue(p.Values())
		out = append(out, cssDecl{prop: prop, val: val, important: imp})
	}
	return out
}

// declValue is the one normalisation of a declaration value, shared by
// inline styles and stylesheet rules, so that every rule judging a value
// (hidingValue, hideKind, visuallyHidden) sees the value a browser
// computes from: the tokens joined with comments dropped (the parser
// drops them) and runs of white space made one space, CSS escapes in
// identifiers, function names, units and hashes decoded (CSS Syntax
// §4.3.7: display:\6e one is display:none), lower-cased and trimmed,
// and a trailing "!important" split off.
func declValue(toks []css.Token) (string, bool) {
	var b strings.Builder
	space := false
	for _, t := range toks {
		switch t.TokenType {
		case css.CommentToken:
			continue
		case css.WhitespaceToken:
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		switch t.TokenType {
		case css.IdentToken, css.FunctionToken, css.DimensionToken, css.HashToken, css.AtKeywordToken:
			b.WriteString(cssUnescape(string(t.Data)))
		default:
			b.Write(t.Data)
		}
	}
	return importance(strings.ToLower(b.String()))
}

// importance splits a trailing "!important" (any spacing) off a lower-case
// declaration value.
func importance(val string) (string, bool) {
	if i := strings.LastIndex(val, "!"); i >= 0 && strings.TrimSpace(val[i+1:]) == "important" {
		return strings.TrimSpace(val[:i]), true
	}
	return val, false
}
