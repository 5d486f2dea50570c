package content

import (
	"golang.org/x/net/html"
)

// Size-aware extraction: limits on the parsed page (see the package doc for
// the measurements behind them). Every limit is at least ten times the
// largest value seen on the shared 181-page bench, whose pages all take
// the full path.
const (
	// fullMaxText is the visible text (bytes, outside <head>, scripts,
	// styles, <noscript>, <template> and <svg>) up to which both
	// extractors run and are merged. Bench maximum: 101 KB.
	fullMaxText = 1 << 20
	// fullMaxElements is the element count (same scope) up to which both
	// extractors run: a 1 MB table (36,000 elements) takes 0.7 s on the
	// full path. Bench maximum: 1,536.
	fullMaxElements = 30_000
	// fullMaxParaCost bounds go-trafilatura's quadratic step: its
	// extractContent concatenates the text of every <p> of the page with
	// += (v1.12.2), which copies Σ over the <p> of the text of all <p> up
	// to it: paraCost bytes. 2e8 bytes cost about 0.1 s. Bench maximum:
	// 9.7e6.
	fullMaxParaCost = 2e8
	// fullMaxDepthCost and singleMaxDepthCost bound Σ text bytes × element
	// depth: readability's cleaning and trafilatura's pruning re-count the
	// text of every ancestor, so deeply nested text (comment threads)
	// costs depth times its size. Readability alone takes about 1.3 s at
	// 1e8. Bench maximum: 1.5e6.
	fullMaxDepthCost   = 2e7
	singleMaxDepthCost = 1e8
	// singleMaxElements is the element count up to which readability runs
	// alone; beyond, its link-density and scoring passes take over 1 s
	// per 100,000 elements on link-heavy pages.
	singleMaxElements = 100_000
)

// strategy is how much main-content extraction a page gets.
type strategy int

const (
	// strategyFull runs go-trafilatura and readability and merges them.
	strategyFull strategy = iota
	// strategySingle runs readability alone (it scales better than
	// go-trafilatura and rarely loses text).
	strategySingle
	// strategyWhole converts the whole <body> minus page chrome (see
	// wholeBody), in linear time.
	strategyWhole
)

// pageStats are the size measures strategy decisions are based on.
type pageStats struct {
	text      int     // visible text bytes
	elements  int     // elements outside <head> and skipped subtrees
	paraCost  float64 // Σ over <p> of the text of all <p> up to it, bytes
	depthCost float64 // Σ text bytes × element depth
}

// measurePage walks doc once and returns its pageStats.
func measurePage(doc *html.Node) pageStats {
	var s pageStats
	paraText := 0
	var visit func(n *html.Node, depth int, inPara bool)
	visit = func(n *html.Node, depth int, inPara bool) {
		switch n.Type {
		case html.TextNode:
			s.text += len(n.Data)
			s.depthCost += float64(len(n.Data)) * float64(depth)
			if inPara {
				paraText += len(n.Data)
			}
			return
		case html.ElementNode:
			switch n.Data {
			case "head", "script", "style", "noscript", "template", "svg":
				return
			case "p":
				inPara = true
			}
			s.elements++
			depth++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, depth, inPara)
		}
		if n.Type == html.ElementNode && n.Data == "p" {
			s.paraCost += float64(paraText)
		}
	}
	visit(doc, 0, false)
	return s
}

// strategy picks the extraction strategy for a page of these measures.
func (s pageStats) strategy() strategy {
	switch {
	case s.text <= fullMaxText && s.elements <= fullMaxElements &&
		s.paraCost <= fullMaxParaCost && s.depthCost <= fullMaxDepthCost:
		return strategyFull
	case s.elements <= singleMaxElements && s.depthCost <= singleMaxDepthCost:
		return strategySingle
	}
	return strategyWhole
}
