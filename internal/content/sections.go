package content

import "strings"

// Pages of short sections.
//
// The merge (merge.go) keeps trafilatura's blocks that readability also
// found. On an article that intersection is what makes it precise:
// readability keeps the article's prose and drops the boxes trafilatura
// let in (a newsletter sign-up, a byline, a "related" heading; on the
// shared 181-page bench every trafilatura-only block the merge drops is
// outside the article). On a page built from short sections (a service or
// landing page: headings over one or two sentences, feature lists,
// testimonials, FAQ answers) readability is no such filter: it scores
// paragraphs by their length and commas, keeps the one container whose
// paragraphs score best and drops the other sections, which the
// intersection then cuts from trafilatura's answer too. Two shapes say
// that trafilatura's blocks are the page's content rather than
// boilerplate, and the merge keeps them:
//
//   - the answer is not article prose: under nonArticleMaxProse of its
//     words are in prose blocks (the test that also sends the page to the
//     second pass, nonarticle.go); its blocks are all kept and
//     readability's extra prose added as usual, except, after the last
//     block both found, what follows the first link-heavy block (a
//     "related" box, the site's links) and a tail that is a list of
//     titles (headings or bold lines holding half its words: the teasers
//     of other pages);
//   - in any answer, a run of more than maxPrimaryRun trafilatura-only
//     blocks between two blocks both found, under proseMaxLinkDensity of
//     its words in link-heavy blocks: a whole section readability left
//     out (an article's boxes come one or two blocks at a time, or as a
//     link list).

// sectionsAnswer reports whether the blocks of an answer are not article
// prose (see above; an answer without words is not).
func sectionsAnswer(bs []mdBlock) bool {
	prose, total := wordsWhere(bs, mdBlock.isProse)
	return total > 0 && float64(prose) < nonArticleMaxProse*float64(total)
}

// wordsWhere returns the tokens of the blocks of bs that satisfy pred, and
// the tokens of all of them.
func wordsWhere(bs []mdBlock, pred func(mdBlock) bool) (part, total int) {
	for _, b := range bs {
		total += len(b.tokens)
		if pred(b) {
			part += len(b.tokens)
		}
	}
	return part, total
}

// linkRun reports whether link-heavy blocks hold proseMaxLinkDensity or
// more of the words of the run.
func linkRun(run []mdBlock) bool {
	links, total := wordsWhere(run, mdBlock.isLinkHeavy)
	return total > 0 && float64(links) >= proseMaxLinkDensity*float64(total)
}

// keepSections marks every block of a sections answer as kept (keep),
// but for the end of its tail after the last found block (see above).
func keepSections(pb []mdBlock, found, keep []bool) {
	last := -1
	for j := range pb {
		if found[j] && len(pb[j].tokens) > 0 {
			last = j
		}
	}
	end := len(pb)
	if last >= 0 {
		for j := last + 1; j < end; j++ {
			if pb[j].isLinkHeavy() {
				end = j
				break
			}
		}
		if titleRun(pb[last+1 : end]) {
			end = last + 1
		}
	}
	for j := range pb[:end] {
		keep[j] = true
	}
}

// titleRun reports whether headings and lines that are bold only hold
// half the words of the run or more.
func titleRun(run []mdBlock) bool {
	titles, total := wordsWhere(run, func(b mdBlock) bool {
		return strings.HasPrefix(strings.TrimLeft(b.text, "-*+ "), "#") || isBoldLine(b.text)
	})
	return total > 0 && 2*titles >= total
}

// isBoldLine reports whether the block is one line in bold (**…** or
// __…__), a heading in all but markup.
func isBoldLine(text string) bool {
	t := strings.TrimSpace(text)
	if strings.Contains(t, "\n") {
		return false
	}
	for _, m := range []string{"**", "__"} {
		if len(t) > 2*len(m) && strings.HasPrefix(t, m) && strings.HasSuffix(t, m) && !strings.Contains(t[len(m):len(t)-len(m)], m) {
			return true
		}
	}
	return false
}
