package content

import "strings"

// Multi-section pages.
//
// On a page built from many short sections (a product or service page, a
// listing, an index, a forum thread) go-trafilatura often returns one of
// the sections (a card, a FAQ, the first posts) while readability returns
// all of them; the block merge then keeps the fragment, since readability's
// other sections are headings, short lines and links rather than prose.
// Size alone cannot tell such a fragment from a short article whose page
// carries a lot of boilerplate, so the page's structure decides:
//
//   - readability's answer holds trafilatura's (fragmentMinCover of its
//     shingles): trafilatura picked a part of what readability picked;
//   - it has at least fragmentMinGrowth times the words outside link lists:
//     more than bylines, captions or a related-links box;
//   - trafilatura's answer is not a titled article: no heading of it
//     repeats the page title (an article page's other sections are teasers
//     of other articles), and it is not one run of prose under at most one
//     heading (the article itself);
//
// then readability's answer is used whole.
const (
	fragmentMinCover  = 0.7
	fragmentMinGrowth = 3.0
)

// excerptMaxShare: a run of prose is an excerpt, not the article, when
// readability's answer that holds it has this many times its words in
// prose blocks.
const excerptMaxShare = 10

// proseWords counts the words of the prose blocks of bs.
func proseWords(bs []mdBlock) int {
	n := 0
	for _, b := range bs {
		if b.isProse() {
			n += len(b.tokens)
		}
	}
	return n
}

// isFragment reports whether primary is a fragment of the multi-section
// page that secondary covers (see above); title is the page title.
func isFragment(primary, secondary, title string) bool {
	return isFragmentWith(nil, primary, secondary, title)
}

// isFragmentWith is isFragment splitting the answers through memo (nil:
// no memo).
func isFragmentWith(memo *splitMemo, primary, secondary, title string) bool {
	if strings.TrimSpace(primary) == "" || strings.TrimSpace(secondary) == "" {
		return false
	}
	pb, sb := memo.split(primary), memo.split(secondary)
	pw, sw := plainWords(pb), plainWords(sb)
	if float64(sw) < fragmentMinGrowth*float64(max(pw, 1)) {
		return false
	}
	// A titled article: a heading of the answer repeats the page title.
	t := normalizeForCompare(title)
	headings, prose, other := 0, 0, 0
	for _, b := range pb {
		if strings.HasPrefix(b.text, "#") {
			headings++
			h := strings.NewReplacer("[", "", "]", "").Replace(visibleText(strings.TrimLeft(b.text, "# ")))
			if t != "" && normalizeForCompare(h) == t {
				return false
			}
			continue
		}
		switch {
		case b.isProse():
			prose += len(b.tokens)
		default:
			other += len(b.tokens)
		}
	}
	if headings <= 1 && prose > 0 && prose >= 4*other && proseWords(sb) < excerptMaxShare*(prose+other) {
		// One run of prose: the article itself, unless readability
		// found excerptMaxShare times as much prose around it (then it
		// is a standfirst or the first post).
		return false
	}
	sAll := newCorpus(sb, pb)
	pSh := shingles(newCorpus(pb, nil).tokens)
	if len(pSh) == 0 {
		return false
	}
	in := 0
	for h := range pSh {
		if _, ok := sAll.shingles[h]; ok {
			in++
		}
	}
	return float64(in) >= fragmentMinCover*float64(len(pSh))
}
