package content

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/visibility"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Repeated records.
//
// A forum thread is a run of posts, a listing a run of story or product
// cards, a results page a run of entries: sibling elements built from one
// template (the same tag and the same first class), each with its own
// text. Article extractors score one block at a time and often settle on
// one record (the first post, the lead story) of such a page. The page's
// structure says when that happened: when one group of at least
// recordMinCount sibling records of at least recordMinTokens words each
// holds at least recordMinShare of the words of the page outside chrome,
// an answer that covers some records but under recordMinCover of the
// group's words (a record counts as covered when half its shingles are in
// the answer) is a fragment of the page. On an article the group is its run of paragraphs,
// which the answer covers; a comment list is removed before (preClean) and
// does not count.
const (
	recordMinCount  = 3
	recordMinTokens = 4
	recordMinShare  = 0.4
	recordMinCover  = 0.5
)

// records is the dominant record group of a page (see above).
type records struct {
	sets   []map[uint64]struct{} // each record's shingles
	tokens []int                 // each record's words
	total  int                   // words of all records
	// covered memoises cover: one extraction asks about the same
	// answers several times (the selection in extract, sideSection).
	covered []coverMemo
}

// coverMemo is cover's answer for one markdown text.
type coverMemo struct {
	md    string
	cover float64
}

// findRecords returns the page's dominant record group, or nil when no
// group holds recordMinShare of the page's words outside chrome. It reads
// doc without changing it; time is linear in the page's size.
func findRecords(doc *html.Node) *records {
	var body *html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if body != nil {
			return false
		}
		if dom.IsElem(n, "body") {
			body = n
			return false
		}
		return true
	})

	if body == nil {
		return nil
	}
	// Words under every element outside chrome, bottom up.
	count := map[*html.Node]int{}
	var order []*html.Node // elements outside chrome, children first
	var visit func(n *html.Node, inContent bool) int
	visit = func(n *html.Node, inContent bool) int {
		switch n.Type {
		case html.TextNode:
			return countTokens(n.Data)
		case html.ElementNode:
			if isChrome(n, inContent) {
				return 0
			}
			if n.Data == "article" || n.Data == "main" {
				inContent = true
			}
		default:
			return 0
		}
		sum := 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			sum += visit(c, inContent)
		}
		count[n] = sum
		order = append(order, n)
		return sum
	}
	pageTok := visit(body, false)
	if pageTok == 0 {
		return nil
	}
	// The group with the most words.
	var best []*html.Node
	bestTok := 0
	for _, n := range order {
		groups := map[string][]*html.Node{}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || count[c] < recordMinTokens {
				continue
			}
			sig := c.Data
			if v, ok := dom.Attr(c, "class"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					sig += "." + f[0]
				}
			}
			groups[sig] = append(groups[sig], c)
		}
		for _, g := range groups {
			if len(g) < recordMinCount {
				continue
			}
			tok := 0
			for _, c := range g {
				tok += count[c]
			}
			if tok > bestTok {
				best, bestTok = g, tok
			}
		}
	}
	if float64(bestTok) < recordMinShare*float64(pageTok) {
		return nil
	}
	r := &records{total: 0}
	for _, c := range best {
		var toks []string
		containerText(c, func(text string) { toks = appendTokens(toks, text) })
		r.sets = append(r.sets, shingles(toks))
		r.tokens = append(r.tokens, len(toks))
		r.total += len(toks)
	}
	return r
}

// cover returns the share of the records' words that md covers (records
// with half their shingles in md's); 1 when r is nil.
func (r *records) cover(md string) float64 {
	if r == nil || r.total == 0 {
		return 1
	}
	for _, c := range r.covered {
		if c.md == md {
			return c.cover
		}
	}
	c := r.coverOf(md)
	if len(r.covered) < 8 {
		r.covered = append(r.covered, coverMemo{md: md, cover: c})
	}
	return c
}

// coverOf computes cover (r has records).
func (r *records) coverOf(md string) float64 {
	set := shingles(tokenize(visibleText(md)))
	in := 0
	for i, s := range r.sets {
		n := 0
		for h := range s {
			if _, ok := set[h]; ok {
				n++
			}
		}
		if float64(n) >= sharedMinOverlap*float64(len(s)) {
			in += r.tokens[i]
		}
	}
	return float64(in) / float64(r.total)
}

// fragmentOf reports whether md is one or a few of the records: it
// covers some of them, under recordMinCover of their words (always false
// when r is nil). An answer that covers none lies outside the group (an
// article whose page ends with teaser cards of other articles).
func (r *records) fragmentOf(md string) bool {
	if r == nil {
		return false
	}
	c := r.cover(md)
	return c > 0 && c < recordMinCover
}

// sideSection reports whether the merged answer md is a side section of
// the page of records r that readability's answer (secondary) covers: md
// holds none of the records, trafilatura's answer (primary) is not an
// article (nonArticle: under half its words in prose) and secondary
// covers recordMinCover of the records' words (always false when r is
// nil). An article followed by teaser cards also holds none of the
// records, rightly, but its answer is prose.
func (r *records) sideSection(md, primary, secondary string) bool {
	return r != nil && r.cover(md) == 0 && nonArticle(primary) && r.cover(secondary) >= recordMinCover
}

// contentFormShare: a <form> holding at least this share of the page's
// text is a wrapper of the page's content, not a control.
const contentFormShare = 0.5

// unwrapContentForms turns every outermost <form> of doc that holds
// contentFormShare of the text of the page (visibility.TextLen: outside scripts and
// styles) into a <div>. Forum software wraps a thread's posts in a
// moderation form (Invision Community's multimodComment, vBulletin's
// inline moderation) and ASP.NET wraps whole pages in one; the extractors
// and the main-container logic (isChrome) take a form for controls and
// would drop the posts with it.
func unwrapContentForms(doc *html.Node) {
	var forms []*html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if dom.IsElem(n, "form") {
			forms = append(forms, n)
			return false
		}
		return true
	})

	if len(forms) == 0 {
		return
	}
	// (The forms are outermost, so disjoint: measuring each again costs
	// less than recording the length of every element of the page.)
	total := visibility.TextLen(doc, nil)
	for _, f := range forms {
		if total > 0 && float64(visibility.TextLen(f, nil)) >= contentFormShare*float64(total) {
			f.Data, f.DataAtom = "div", atom.Div
			for _, k := range []string{"action", "method", "enctype", "target"} {
				dom.RemoveAttr(f, k)
			}
		}
	}
}
