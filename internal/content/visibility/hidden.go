package visibility

import (
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DropHidden removes from the parsed page every element a browser would not
// render, before any extractor sees the tree. Text nobody can see is how
// prompt injections are slipped to agents, so it never reaches the markdown:
//
//   - an element with the hidden attribute (HTML §6.1), unless its inline
//     style or a page <style> rule sets another display (any author rule
//     beats the UA sheet's [hidden]{display:none}: CSS Cascade 4 §6.1);
//     hidden="until-found" is dropped whatever
//     its style: the UA style sheet gives it content-visibility:hidden
//     (HTML §15.3.1), so it is not displayed until the reader happens to
//     search for its exact words, and it has no visible control of its own;
//   - <template> (its content is inert, never rendered);
//   - <dialog> without the open attribute (not shown until a script opens
//     it). An open <dialog> is rendered and is kept: it becomes a <div>,
//     because the extractors remove every <dialog> element as chrome (a
//     modal one, role="dialog" or aria-modal="true", is still an overlay
//     for preClean);
//   - an element whose style (inline, or from the page's own <style>
//     rules: stylesheet.go; an SVG element's presentation attributes
//     count as styles, svgstyle.go) says display:none,
//     content-visibility:hidden, an opacity under 0.05 (faint.go) or
//     filter:opacity(0); visibility:hidden or
//     visibility:collapse (unless a descendant turns visibility back on:
//     then the rest is dropped and the visible descendant kept); a
//     computed font size of at most 2px, relative sizes (em, %, smaller,
//     rem) resolved down the tree from 16px (likewise, unless a
//     descendant's computed size is readable again, the inline-block row
//     trick: computed.go); a transparent text colour
//     (color or -webkit-text-fill-color; likewise, unless a descendant
//     sets a colour; gradient text, background-clip:text, is kept); zoom
//     of at most 5 %; text the colour of its own background, or nearly
//     (sameColorText; lowContrastText: a contrast ratio under 1.1 against
//     the background declared on it or its ancestors, computed.go), on an
//     element holding only its own text (plainText); an <img> drawn at
//     most 1px wide or high (tinyImage: its alt text shows nowhere); SVG text that
//     paints nothing (fill none, no stroke), an <svg> of zero width or
//     height, SVG text anchored far outside its svg's viewport
//     (svgstyle.go);
//   - an element whose style hides it from sight while it stays in the page
//     (see visuallyHidden): moved far off screen (by position, transform
//     or margin), text-indent far negative, or far positive with nowrap
//     and overflow hidden (image replacement), clipped to nothing, a 1px
//     box with overflow hidden (the "sr-only" pattern), scaled to zero or
//     turned edge on (rotateY(90deg)). A box of zero width (or max-width)
//     with overflow hidden is judged like a zero height (narrowClipped).
//     Screen-reader text ("skip to content") is
//     lost with it, a small price: a sighted reader does not see it, and
//     the same patterns carry injected instructions;
//   - an element with aria-hidden="true" whose style also shrinks it to
//     nothing (see offScreen). aria-hidden alone (icons, decorative
//     duplicates) is kept.
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
//   - likewise a tab or accordion panel hidden by a stylesheet rule
//     (display:none, content-visibility:hidden) or collapsed to nothing
//     (height, max-height or width of at most 1px with overflow hidden),
//     when a control on the page names it (aria-controls, data-bs-target,
//     a tab's href: see controlledIDs and hideWidget); without one such a
//     panel is dropped;
//   - <input type="hidden">: its value is no rendered text and never reaches
//     the markdown (form controls are removed as chrome).
//
// opacity:0 together with a transform, transition or animation is the start
// state of an entrance animation and kept (animationStart).
// opacity:0 and visibility:hidden are also the start state of a page's load
// and scroll animations: when the text hidden these ways is at least
// loadingShare of the page, spread over several elements, it is taken for
// that and kept (see loadingState and hideAnimated); a hidden message is a
// small share of a page. External stylesheets are not fetched
// (stylesheet.go).
func DropHidden(doc *html.Node) {
	dropHiddenWith(doc, computeStyles(doc))
}

// dropHiddenWith is DropHidden with the page's styles computed. It runs
// to a fixed point (at most maxHiddenRounds passes): whether an element is
// hidden can depend on its children (font-size:0 with a child that resets
// the size), so removing a hidden child can hide its parent.
func dropHiddenWith(doc *html.Node, sty *pageStyles) {
	for range maxHiddenRounds {
		if !dropHiddenOnce(doc, sty) {
			break
		}
	}
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			dropOverridden(n)
		}
		return true
	})

}

// dropOverridden rewrites n's style attribute without the declarations a
// later (or !important) one of the same property overrides, so that the
// extractors, which read a style's first display or visibility, judge the
// element by the value a browser uses (style="display:none;display:block"
// is shown).
func dropOverridden(n *html.Node) {
	decls := inlineDecls(n)
	if len(decls) < 2 {
		return
	}
	win := map[string]int{} // property → index of the declaration that wins
	for i, d := range decls {
		if j, ok := win[d.prop]; !ok || d.important || !decls[j].important {
			win[d.prop] = i
		}
	}
	if len(win) == len(decls) {
		return
	}
	var b strings.Builder
	for i, d := range decls {
		if win[d.prop] != i {
			continue
		}
		b.WriteString(d.prop + ":" + d.val)
		if d.important {
			b.WriteString(" !important")
		}
		b.WriteString(";")
	}
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == "style" {
			n.Attr[i].Val = b.String()
		}
	}
}

// maxHiddenRounds bounds dropHiddenWith's passes.
const maxHiddenRounds = 4

// dropHiddenOnce is one pass of dropHiddenWith; it reports whether it
// removed anything.
func dropHiddenOnce(doc *html.Node, sty *pageStyles) bool {
	react := hasReactBoundaries(doc)
	var lens map[*html.Node]int
	total := 0
	var drop, hiddenStyle []*html.Node
	measure := func() {
		if lens == nil {
			lens = map[*html.Node]int{}
			total = TextLen(doc, lens)
		}
	}
	// small reports whether n is no page-reveal wrapper: one holds at
	// least revealShare of the page's text and wraps the page (at its
	// top, or around its main content: wrapsPage, anchorsPage).
	// A loading state (loadingState: sections of a scroll animation, a set
	// of panels) is one only on a page that runs scripts (pageRunsScripts).
	scripted := pageRunsScripts(doc)
	small := func(n *html.Node) bool {
		measure()
		return total == 0 || float64(lens[n]) < revealShare*float64(total) || !wrapsPage(n, lens) && !anchorsPage(n)
	}
	loading, loadingKnown := false, false
	isLoading := func() bool {
		if !loadingKnown {
			measure()
			loading, loadingKnown = scripted && loadingState(doc, sty, lens, total), true
		}
		return loading
	}
	var rv *revealer
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		kind := hideKind(n, sty)
		if kind == hideAnimated || kind == hideWidget {
			if rv == nil {
				measure()
				rv = &revealer{doc: doc, lens: lens, total: total, loading: isLoading()}
			}
			if rv.revealed(n, kind) {
				return true
			}
		}
		if kind == hideNone {
			if _, ok := dom.Attr(n, "hidden"); ok {

				dom.RemoveAttr(n, "hidden")
			}
			if n.DataAtom == atom.Dialog {
				n.DataAtom, n.Data = atom.Div, "div"
			}
			st := sty.of(n)
			if v := st["visibility"]; (v == "hidden" || v == "collapse") && small(n) && !isLoading() {

				drop = append(drop, invisibleParts(n, sty.visibleAgain)...)

				hiddenStyle = append(hiddenStyle, n)
			}
			if sty.tinyText(n) && small(n) {

				drop = append(drop, invisibleParts(n, sty.readableText)...)
			}
			if transparentText(st) && small(n) {

				drop = append(drop, invisibleParts(n, sty.coloredAgain)...)
			}
			return true
		}
		if n.DataAtom != atom.Template && n.DataAtom != atom.Dialog {
			if id, _ := dom.Attr(n, "id"); react && strings.HasPrefix(id, "S:") {
				dom.RemoveAttr(n, "hidden")
				return true
			}
			if !small(n) {
				return true
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
	return len(drop) > 0
}

// revealer decides which elements hidden the way scripts undo (hideAnimated,
// hideWidget) are content the page shows its reader, and kept:
//
//   - the sections of a load or scroll animation, or a set of tab or
//     accordion panels: hideAnimated and hideWidget elements holding
//     loadingShare of the page's text together, over at least
//     loadingElements of them, none holding half of it (loadingState);
//   - the page's main content waiting for its scripts: a hideAnimated or
//     hideWidget element holding loadingShare of the text that is or holds
//     the page's main content (anchorsPage: <main>, <article>, role=main,
//     a top-level heading);
//   - a panel a control opens (hideWidget): named by a control
//     (controlledIDs), or the content of a <details>.
//
// A hidden message cannot pass by being long: one paragraph, however long,
// is none of these (hostile review session 5, D14).
type revealer struct {
	doc        *html.Node
	lens       map[*html.Node]int
	total      int
	loading    bool
	controlled map[string]bool
}

func (r *revealer) revealed(n *html.Node, kind hidden) bool {
	if r.loading {
		return true
	}
	if r.total > 0 && float64(r.lens[n]) >= loadingShare*float64(r.total) && anchorsPage(n) {
		return true
	}
	if kind != hideWidget {
		return false
	}
	if n.Parent != nil && n.Parent.DataAtom == atom.Details {
		return true
	}
	if r.controlled == nil {
		r.controlled = controlledIDs(r.doc)
	}
	id, _ := dom.Attr(n, "id")
	return id != "" && r.controlled[id]
}

// pageRunsScripts reports whether the page has anything that can run a
// script and so undo what its styles hide: a <script> that runs (runsScript),
// or an event handler attribute (onclick,
// onload, …). On a page without any, nothing runs the scroll animation or
// opens the panels a loading state stands for: its elements are judged one
// by one (breaker6: a short page hiding several injected messages passed
// as a loading state). (The other exemptions stay: pages are often saved
// without their scripts, as 235 of the 783 wcxb-dev bench pages are, and
// gating them cost 0.002 F1 there.)
func pageRunsScripts(doc *html.Node) bool {
	found := false
	dom.Walk(doc, func(n *html.Node) bool {
		if found || n.Type != html.ElementNode {
			return !found
		}
		if n.DataAtom == atom.Script {
			found = dom.RunsScript(n)
			return false
		}
		for _, a := range n.Attr {
			if len(a.Key) > 2 && strings.HasPrefix(strings.ToLower(a.Key), "on") && strings.TrimSpace(a.Val) != "" {
				found = true
				return false
			}
		}
		return true
	})

	return found
}

// anchorsPage reports whether n is or holds the page's main content: it is
// <html>, <body>, <main>, <article> or role="main", or holds one of them or
// an <h1> or <h2>.
func anchorsPage(n *html.Node) bool {
	found := false
	dom.Walk(n, func(d *html.Node) bool {
		if found || d.Type != html.ElementNode {
			return !found
		}
		switch d.DataAtom {
		case atom.Html, atom.Body, atom.Main, atom.Article, atom.H1, atom.H2:
			found = true
		case atom.Script, atom.Style, atom.Template:
			return false
		default:
			if r, _ := dom.Attr(d, "role"); strings.EqualFold(r, "main") {
				found = true
			}
		}
		return !found
	})

	return found
}

// loadingShare is the share of the page's text above which text hidden
// the way scripts undo (hideAnimated, hideWidget) is taken for the page's
// interactive or animated content (sections fading in as the reader
// scrolls, the panels of an accordion or of tabs), not for hidden
// messages: a page does not hide a quarter of its own text for good, and a
// message slipped in to an agent is a small share of the page it hides in.
// The share must be spread over at least loadingElements elements, none
// holding half of it (an animation library hides every section, an
// accordion has several panels; one long hidden paragraph is a message
// padded past the share, hostile review session 5 D14). Otherwise every
// such element is dropped unless revealer keeps it. (The browser tools see
// what the scripts show.)
const (
	loadingShare    = 0.25
	loadingElements = 3
)

// loadingState reports whether the elements hidden the way scripts undo
// (hideAnimated, hideWidget) hold at least loadingShare of the page's text, over
// at least loadingElements of them with none holding half of it (lens and
// total from TextLen).
func loadingState(doc *html.Node, sty *pageStyles, lens map[*html.Node]int, total int) bool {
	if total == 0 {
		return false
	}
	sum, count, largest := 0, 0, 0
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch hideKind(n, sty) {
		case hideAnimated, hideWidget:
			sum += lens[n]
			if lens[n] > 0 {
				count++
			}
			largest = max(largest, lens[n])
			return false
		case hideOther:
			return false
		}
		return true
	})

	return float64(sum) >= loadingShare*float64(total) && count >= loadingElements && 2*largest <= sum
}

// controlledIDs returns the ids of the elements a control on the page
// opens: named by aria-controls (ARIA 1.2: a tab, an accordion or
// disclosure button lists the panel it shows), by data-bs-target or
// data-target ("#id", Bootstrap's collapse and tab toggles), or by the
// href="#id" of an element with role="tab" or a data-toggle /
// data-bs-toggle attribute. Such a panel is hidden until the reader uses
// the control, one click away like the content of a closed <details>.
func controlledIDs(doc *html.Node) map[string]bool {
	out := map[string]bool{}
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if v, ok := dom.Attr(n, "aria-controls"); ok {
			for _, id := range strings.Fields(v) {
				out[id] = true
			}
		}
		for _, k := range []string{"data-bs-target", "data-target"} {
			if v, ok := dom.Attr(n, k); ok {
				if id, ok := strings.CutPrefix(strings.TrimSpace(v), "#"); ok && id != "" {
					out[id] = true
				}
			}
		}
		role, _ := dom.Attr(n, "role")
		_, toggle := dom.Attr(n, "data-toggle")
		_, bsToggle := dom.Attr(n, "data-bs-toggle")
		if strings.EqualFold(role, "tab") || toggle || bsToggle {
			if v, ok := dom.Attr(n, "href"); ok {
				if id, ok := strings.CutPrefix(strings.TrimSpace(v), "#"); ok && id != "" {
					out[id] = true
				}
			}
		}
		return true
	})

	return out
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
// style) above which a hidden element at the top of the page (wrapsPage) is
// taken for a page-reveal wrapper.
const revealShare = 0.8

// wrapsPage reports whether n wraps the page the way an anti-flicker
// wrapper does: it is <html> or <body>, or every element between it and
// <body> has it as its only child with text (lens from TextLen). A long
// hidden paragraph inside the article is no wrapper, however long
// (hostile review session 5, D14).
func wrapsPage(n *html.Node, lens map[*html.Node]int) bool {
	if n.DataAtom == atom.Html || n.DataAtom == atom.Body {
		return true
	}
	for p := n; p.Parent != nil; p = p.Parent {
		if p.Parent.DataAtom == atom.Body {
			return true
		}
		for c := p.Parent.FirstChild; c != nil; c = c.NextSibling {
			if c != p && (c.Type == html.ElementNode && lens[c] > 0 || c.Type == html.TextNode && strings.TrimSpace(c.Data) != "") {
				return false
			}
		}
	}
	return false
}

// hasReactBoundaries reports whether doc holds a React streaming-SSR
// boundary placeholder (<template id="B:…">).
func hasReactBoundaries(doc *html.Node) bool {
	found := false
	dom.Walk(doc, func(n *html.Node) bool {
		if found {
			return false
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Template {
			if id, _ := dom.Attr(n, "id"); strings.HasPrefix(id, "B:") {
				found = true
			}
			return false
		}
		return true
	})

	return found
}

// TextLen returns the bytes of text under n (script, style and template
// content excluded) and records it for every element in lens, unless lens
// is nil.
func TextLen(n *html.Node, lens map[*html.Node]int) int {
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
		sum += TextLen(c, lens)
	}
	if lens != nil && n.Type == html.ElementNode {
		lens[n] = sum
	}
	return sum
}

// isHiddenElement reports whether n itself (not its ancestors) makes its
// subtree unrendered, by its attributes, its inline style and the page's
// stylesheet rules (sty); see DropHidden.
func isHiddenElement(n *html.Node, sty *pageStyles) bool {
	return hideKind(n, sty) != hideNone
}

// hideKind says how n itself hides its subtree, if it does.
type hidden int

const (
	hideNone hidden = iota
	// hideAnimated: hidden the way load and scroll animations start, or
	// an accordion panel waits, which scripts undo (see revealer), and
	// nothing else: opacity:0, filter:opacity(0), visibility:hidden, or a
	// box collapsed to nothing with overflow hidden (collapsed: the
	// script sets its height), inline or not.
	hideAnimated
	// hideWidget: hidden the way tab panels, menus and dialogs wait for a
	// script to open them, and nothing else: display:none or
	// content-visibility:hidden set by a page stylesheet rule (the script
	// sets a class). Kept when a control on the page names it (see
	// revealer). display:none and content-visibility:hidden set inline,
	// and the hidden attribute, are hideOther.
	hideWidget
	hideOther // any other kind (see DropHidden)
)

// hideKind returns how n itself (not its ancestors) makes its subtree
// unrendered, by its attributes, its inline style and the page's stylesheet
// rules (sty).
func hideKind(n *html.Node, sty *pageStyles) hidden {
	switch n.DataAtom {
	case atom.Template:
		return hideOther
	case atom.Dialog:
		if _, open := dom.Attr(n, "open"); !open {
			return hideOther
		}
	}
	st := sty.of(n)
	if v, ok := dom.Attr(n, "hidden"); ok {
		if strings.EqualFold(strings.TrimSpace(v), "until-found") {
			return hideOther
		}
		// Any author display (inline, or a page rule: stylesheet.go)
		// beats the UA sheet's [hidden]{display:none}, which is not
		// !important (CSS Cascade 4 §6.1; HTML §15.3.1); revert goes
		// back to it.
		if d, set := st["display"]; !set || d == "none" || d == "revert" || d == "revert-layer" {
			return hideOther
		}
	}
	scripted := false
	for _, p := range []string{"display", "content-visibility"} {
		if v := st[p]; (p == "display" && v == "none") || (p == "content-visibility" && v == "hidden") {
			if !sty.fromRule(n, p) {
				return hideOther // inline: no script needs to touch it
			}
			scripted = true
		}
	}
	if sty.tinyText(n) && !hasDescendant(n, sty.readableText) {
		return hideOther // computed.go
	}
	if tinyImage(n, st) {
		return hideOther // its alt text shows nowhere (computed.go)
	}
	if transparentText(st) && !hasDescendant(n, sty.coloredAgain) {
		return hideOther
	}
	if visuallyHidden(st) || zoomHides(st["zoom"]) {
		return hideOther
	}
	if (sameColorText(st) || sty.lowContrastText(n, st)) && plainText(n) {
		return hideOther // white on white, or nearly (faint.go, computed.go)
	}
	if n.Namespace == "svg" && (svgViewportHides(n, st) || svgTextAway(n) || svgUnpainted(n, sty)) {
		return hideOther // svgstyle.go
	}
	if v, _ := dom.Attr(n, "aria-hidden"); strings.EqualFold(strings.TrimSpace(v), "true") && offScreen(st) {
		return hideOther
	}
	if scripted {
		return hideWidget // a panel a script opens
	}
	var parent map[string]string
	if n.Parent != nil && n.Parent.Type == html.ElementNode {
		parent = sty.of(n.Parent)
	}
	if collapsed(st) || narrowClipped(n, st, parent) {
		return hideAnimated // an accordion panel a script opens by its height, or text clipped away
	}
	if (faintOpacityValue(st["opacity"]) || filterHides(st["filter"])) && !animationStart(st) {
		return hideAnimated
	}
	if v := st["visibility"]; (v == "hidden" || v == "collapse") && !hasDescendant(n, sty.visibleAgain) {
		return hideAnimated
	}
	return hideNone
}

// visibleAgain reports whether n's style sets visibility:visible, which a
// browser renders inside a visibility:hidden parent.
func (s *pageStyles) visibleAgain(n *html.Node) bool {
	return s.of(n)["visibility"] == "visible"
}

// coloredAgain reports whether n's style sets a text colour of its own
// that is not transparent (see transparentText), which a browser renders
// inside a parent whose text colour is transparent.
func (s *pageStyles) coloredAgain(n *html.Node) bool {
	st := s.of(n)
	for _, p := range []string{"color", "-webkit-text-fill-color"} {
		switch v := st[p]; v {
		case "", "inherit", "unset", "currentcolor", "revert", "revert-layer":
		default:
			if !transparentColor(v) {
				return true
			}
		}
	}
	return false
}

// transparentText reports whether a style paints its text fully
// transparent: its color, or its -webkit-text-fill-color (which wins
// when set), is transparent, and the background is not clipped to the
// text (background-clip: text, the gradient-text pattern, which shows the
// background through the transparent glyphs).
func transparentText(st map[string]string) bool {
	if strings.Contains(st["background-clip"], "text") || strings.Contains(st["-webkit-background-clip"], "text") {
		return false
	}
	if v := st["-webkit-text-fill-color"]; v != "" && v != "inherit" && v != "unset" && v != "currentcolor" {
		return transparentColor(v)
	}
	return transparentColor(st["color"])
}

// invisibleParts returns the children of n (an element hiding its content:
// visibility:hidden, font-size:0), and of its descendants on the way to one
// that shows its content again (shown), that hold no such descendant: a
// browser renders none of them.
func invisibleParts(n *html.Node, shown func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.ElementNode && shown(c):
		case c.Type == html.ElementNode && hasDescendant(c, shown):
			out = append(out, invisibleParts(c, shown)...)
		case c.Type == html.TextNode || c.Type == html.ElementNode:
			out = append(out, c)
		}
	}
	return out
}

// hasDescendant reports whether some element below n satisfies pred.
func hasDescendant(n *html.Node, pred func(*html.Node) bool) bool {
	found := false
	for c := n.FirstChild; c != nil && !found; c = c.NextSibling {
		dom.Walk(c, func(d *html.Node) bool {
			if found || d.Type != html.ElementNode {
				return !found
			}
			if pred(d) {
				found = true
			}
			return !found
		})

	}
	return found
}

// parseInlineStyle returns the declarations of n's style attribute, property
// names and values lower-cased and trimmed, "!important" removed; a later
// declaration of a property wins, as in CSS (an !important one over later
// normal ones). Nil when there is no style.
func parseInlineStyle(n *html.Node) map[string]string {
	decls := inlineDecls(n)
	if pres := presentationDecls(n); pres != nil {
		decls = append(pres, decls...) // below the inline style (svgstyle.go)
	}
	if decls == nil {
		return nil
	}
	out := map[string]string{}
	imp := map[string]bool{}
	for _, d := range decls {
		if d.important || !imp[d.prop] {
			out[d.prop], imp[d.prop] = d.val, imp[d.prop] || d.important
		}
	}
	return out
}

// visuallyHidden reports whether a style (see parseInlineStyle) hides the
// element's box from sight while keeping it in the page (the "visually
// hidden" / "sr-only" patterns and their older forms): positioned (absolute
// or fixed) far outside the viewport (left/top/right/bottom beyond -500px,
// -50em or -100%), a text-indent beyond those offsets, positioned and
// clipped to nothing (clip: rect(0 0 0 0), rect(1px …)), clip-path:
// inset(50%) or more, a box of at most 1px in both dimensions with overflow
// hidden, or transform: scale(0). A panel of zero height (or max-height)
// with overflow hidden is not among them: it is a collapsed accordion panel
// the reader opens with one click, kept like a closed <details>.
func visuallyHidden(st map[string]string) bool {
	if len(st) == 0 {
		return false
	}
	pos := st["position"]
	positioned := pos == "absolute" || pos == "fixed"
	if positioned {
		for _, p := range []string{"left", "top", "right", "bottom"} {
			if farNegative(st[p]) {
				return true
			}
		}
		if tinyClip(st["clip"]) {
			return true
		}
	}
	if farNegative(st["text-indent"]) || indentedAway(st) || insetClip(st["clip-path"]) || transformHides(st["transform"]) || farNegativeMargin(st) {
		return true
	}
	if st["overflow"] == "hidden" || st["overflow"] == "clip" {
		tiny := func(p string) bool {
			v, unit, ok := cssLength(st[p])
			return ok && v <= 1 && (unit == "px" || unit == "")
		}
		if tiny("width") && tiny("height") {
			return true
		}
	}
	return false
}

// offScreen reports whether a style puts an aria-hidden element where
// nobody sees it: visuallyHidden, or clipped to nothing, or of zero width
// or height whatever its overflow (an aria-hidden box is not read aloud
// either, so the looser test costs no screen-reader text).
func offScreen(st map[string]string) bool {
	if visuallyHidden(st) || tinyClip(st["clip"]) {
		return true
	}
	zero := func(p string) bool {
		v, _, ok := cssLength(st[p])
		return ok && v == 0
	}
	return zero("width") || zero("height") || zero("max-width") || zero("max-height")
}

// animationStart reports whether a style with opacity:0 is the start state
// of an entrance animation: it also moves or scales the element (transform)
// or animates it (transition, animation), as animation libraries write it
// (opacity:0; transform: translateY(30px)) before a script or the scroll
// position plays it. Such an element is shown on load or on scroll and is
// kept. (A page can dress hidden text the same way; plain opacity:0 is
// dropped.)
func animationStart(st map[string]string) bool {
	for _, p := range []string{"transform", "transition", "animation", "animation-name"} {
		if v := st[p]; v != "" && v != "none" && v != "initial" && v != "unset" {
			return true
		}
	}
	return false
}

// tinyClip reports whether a clip value is a rectangle of at most 1px
// (clip: rect(0 0 0 0), rect(1px, 1px, 1px, 1px)).
func tinyClip(v string) bool {
	c := strings.TrimSpace(v)
	if !strings.HasPrefix(c, "rect(") || !strings.HasSuffix(c, ")") {
		return false
	}
	f := strings.FieldsFunc(c[len("rect("):len(c)-1], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(f) == 0 {
		return false
	}
	for _, x := range f {
		n, unit, ok := cssLength(x)
		if !ok || n > 1 || (unit != "px" && unit != "") {
			return false
		}
	}
	return true
}

// insetClip reports whether a clip-path value is inset(50%) or more, which
// leaves nothing of the box.
func insetClip(v string) bool {
	c := strings.ReplaceAll(v, " ", "")
	if !strings.HasPrefix(c, "inset(") {
		return false
	}
	n, unit, ok := cssLength(strings.TrimSuffix(strings.TrimPrefix(c, "inset("), ")"))
	return ok && unit == "%" && n >= 50
}

// zeroOpacity reports whether an opacity value is 0 (or 0%): the element
// and everything in it is fully transparent, and no descendant can undo it.
func zeroOpacity(v string) bool {
	n, unit, ok := cssLength(v)
	return ok && n <= 0 && (unit == "" || unit == "%")
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

// LoadingState reports whether DropHidden keeps doc's hidden text as the
// start state of the page's load animations (loadingState over the page's
// computed styles). Tests of the whole conversion ask it to know which
// hidden text may remain.
func LoadingState(doc *html.Node) bool {
	lens := map[*html.Node]int{}
	return loadingState(doc, computeStyles(doc), lens, TextLen(doc, lens))
}
