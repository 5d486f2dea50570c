package content

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
)

// Two extractors, one answer.
//
// go-trafilatura is precise about where an article starts and ends but now
// and then drops whole paragraphs; readability rarely loses text but often
// keeps boilerplate around it (bylines, photo credits, "related" links,
// newsletter boxes). mergeExtractions keeps what both agree on, in
// trafilatura's order and formatting, and adds back the paragraphs (and
// images) only readability found when they read like article prose. On the
// shared 181-page bench (scored with -drop-title) the merge reaches F1 0.975
// against 0.964 for trafilatura and 0.959 for readability alone; see
// bench/quality and TestWriteVariants.

// Merge tuning. Token counts follow the bench scorer: a token is a run of
// Unicode letters, digits and '_'.
const (
	// shingleLen is the n-gram size used to compare blocks.
	shingleLen = 4
	// sharedMinOverlap is the share of a block's shingles that must appear
	// in the other extraction for the block to count as found by both.
	sharedMinOverlap = 0.5
	// agreeMinOverlap: if the two extractions share fewer shingles than
	// this share of the smaller one, they picked different parts of the
	// page and are not merged; the one with more words outside link lists
	// is used.
	agreeMinOverlap = 0.3
	// proseMinTokens and proseMaxLinkDensity define a prose block: a
	// paragraph of at least this many tokens whose link text is under this
	// share of its tokens, and not a heading.
	proseMinTokens      = 25
	proseMaxLinkDensity = 0.3
	// proseMinRunShare: a run of blocks only readability found, between two
	// shared blocks, is added back (its prose blocks only) when prose makes
	// up at least this share of its tokens. Runs at the edges follow
	// stricter rules (see selectRun).
	proseMinRunShare = 0.9
)

// mdBlock is one markdown block (paragraph, heading, list chunk, table,
// fenced code) with its scorer-style tokens.
type mdBlock struct {
	text     string
	tokens   []string
	shingles []uint64 // distinct shingle hashes, sorted
}

// corpus is one whole extraction, indexed so that "is this block of the
// other extraction in here?" costs time in the block's size, not the
// extraction's: merging stays linear on multi-megabyte pages.
type corpus struct {
	tokens   []string
	shingles map[uint64]struct{}
	// short holds the hashes of the 1 to shingleLen-1 token runs of this
	// corpus that some short block of the other extraction consists of
	// (only those: indexing every short run would triple the memory).
	short map[uint64]struct{}
}

// mergeExtractions merges trafilatura's markdown (primary) with
// readability's (secondary); either may be "". The result holds the
// primary's blocks that the secondary also has (and its code blocks), in
// the primary's order, with the secondary-only prose and images that
// selectRun accepts inserted after the primary block matching the shared
// block they followed, and the section headings (runHeadings) only the
// secondary has inserted before the primary block matching the shared
// block they open. Answers that barely overlap are not merged: the one
// with more words outside link lists is returned whole.
//
// Time and memory are linear in the size of the two answers (hash sets and
// a capped inverted index; see corpus and blockIndex).
func mergeExtractions(primary, secondary string) string {
	return mergeWithin(primary, secondary, nil)
}

// mergeWithin is mergeExtractions with the page's main container: when
// the answers barely overlap, the one with more words in blocks that come
// from the container wins (a short article over its long comment thread);
// container returns the shingles of the container's text and may be nil.
func mergeWithin(primary, secondary string, container func() map[uint64]struct{}) string {
	return mergeWithinWith(nil, primary, secondary, container)
}

// mergeWithinWith is mergeWithin splitting the answers through memo (nil:
// no memo).
func mergeWithinWith(memo *splitMemo, primary, secondary string, container func() map[uint64]struct{}) string {
	if strings.TrimSpace(secondary) == "" {
		return primary
	}
	if strings.TrimSpace(primary) == "" {
		return secondary
	}
	pb, sb := memo.split(primary), memo.split(secondary)
	pAll, sAll := newCorpus(pb, sb), newCorpus(sb, pb)
	if len(pAll.shingles) == 0 {
		return secondary
	}
	if len(sAll.shingles) == 0 {
		return primary
	}
	inter := 0
	for h := range pAll.shingles {
		if _, ok := sAll.shingles[h]; ok {
			inter++
		}
	}
	if float64(inter) < agreeMinOverlap*float64(min(len(pAll.shingles), len(sAll.shingles))) &&
		!containsTokens(pAll.tokens, sAll.tokens) && !containsTokens(sAll.tokens, pAll.tokens) {
		// Different parts of the page: keep the one drawn from the main
		// container, else the one that reads more like an article.
		if container != nil {
			if set := container(); len(set) > 0 {
				pIn, sIn := wordsIn(pb, set), wordsIn(sb, set)
				switch {
				case sIn > pIn:
					return secondary
				case pIn > sIn:
					return primary
				}
			}
		}
		if plainWords(sb) > plainWords(pb) {
			return secondary
		}
		return primary
	}

	// Which secondary blocks are found in the primary, and where. Blocks
	// without words are skipped, except images, which travel with the runs.
	sShared := make([]bool, len(sb))
	for i, b := range sb {
		sShared[i] = len(b.tokens) > 0 && b.foundIn(pAll)
	}
	// Tables are compared by their words: the two extractors often
	// render the same table differently (one drops an image row or a
	// linked cell), which breaks most shingles. A secondary table holding
	// the words of a primary one is that table; the fuller rendering is
	// written (richer).
	pTables, sTables := tableBlocks(pb), tableBlocks(sb)
	richer, pMatched := map[int]string{}, map[int]bool{}
	if len(pTables) > 0 && len(pTables) <= maxTables && len(sTables) <= maxTables {
		pWords := make([]map[string]struct{}, len(pTables))
		for k, j := range pTables {
			pWords[k] = wordSet(pb[j].tokens)
		}
		best := map[int]int{}
		for _, i := range sTables {
			sWords := wordSet(sb[i].tokens)
			for k, j := range pTables {
				if wordCover(pb[j].tokens, sWords) < tableMinCover && wordCover(sb[i].tokens, pWords[k]) < tableMinCover {
					continue
				}
				sShared[i], pMatched[j] = true, true
				if n := len(sb[i].tokens); n > len(pb[j].tokens) && n > best[j] && wordCover(pb[j].tokens, sWords) == 1 {
					richer[j], best[j] = sb[i].text, n
				}
			}
		}
	}
	lastShared := -1
	for i := range sb {
		if sShared[i] {
			lastShared = i
		}
	}
	// Runs of secondary-only blocks, with the shared secondary block they
	// follow (-1: before everything) and what selectRun keeps of them.
	// A run's closing headings (runHeadings) go before the primary
	// block matching the shared block the run precedes (next).
	type keptRun struct {
		after int
		keep  []mdBlock
		next  int
		heads []mdBlock
	}
	var kept []keptRun
	prev := -1
	var run []mdBlock
	flush := func(next int) {
		var heads []mdBlock
		if next >= 0 {
			heads = slices.Clone(runHeadings(run)) // (run's array is reused)
		}
		keep := selectRun(run[:len(run)-len(heads)], prev < 0, prev == lastShared)
		if len(keep) > 0 || len(heads) > 0 {
			kept = append(kept, keptRun{prev, keep, next, heads})
		}
		run = run[:0]
	}
	for i, b := range sb {
		switch {
		case sShared[i]:
			flush(i)
			prev = i
		case len(b.tokens) > 0 || b.isImage():
			run = append(run, b)
		}
	}
	flush(-1)

	// Where the kept runs go: after the primary block that best matches
	// the shared block they followed.
	extras, before := map[int][]string{}, map[int][]string{}
	var idx *blockIndex
	index := func() *blockIndex {
		if idx == nil {
			var probes []mdBlock
			for _, r := range kept {
				if r.after >= 0 {
					probes = append(probes, sb[r.after])
				}
				if len(r.heads) > 0 {
					probes = append(probes, sb[r.next])
				}
			}
			idx = newBlockIndex(pb, probes)
		}
		return idx
	}
	for _, r := range kept {
		at := -1
		if r.after >= 0 {
			at = index().bestMatch(sb[r.after])
		}
		for _, b := range r.keep {
			extras[at] = append(extras[at], b.text)
		}
		if len(r.heads) > 0 {
			// (Only where the shared block's match holds it: a short
			// block found by chance in another place is no anchor.)
			if j := index().bestMatch(sb[r.next]); holds(pb[j], sb[r.next]) {
				for _, b := range r.heads {
					before[j] = append(before[j], b.text)
				}
			}
		}
	}

	pFound := make([]bool, len(pb))
	coveredTok, allTok := 0, 0
	for j, b := range pb {
		pFound[j] = pMatched[j] || b.foundIn(sAll)
		if !b.isLinkHeavy() {
			allTok += len(b.tokens)
			if pFound[j] && len(b.tokens) > 0 {
				coveredTok += len(b.tokens)
			}
		}
	}
	if float64(coveredTok) < minCoverShare*float64(allTok) && len(sAll.tokens) < len(pAll.tokens)/2 {
		// Readability kept a small part of trafilatura's answer (a
		// product page's reviews): it missed the content, so do not
		// intersect with it.
		return trimLinkTail(pb)
	}
	keepPrimary := keptPrimaryOnly(pb, pFound)
	if ns, np := float64(len(sAll.tokens)), float64(len(pAll.tokens)); ns >= supersetMinCover*np && ns <= supersetMaxGrowth*np &&
		startsInList(pb, pFound, keepPrimary) && wordCover(pAll.tokens, wordSet(sAll.tokens)) >= supersetMinCover {
		// The two hold about the same words, but the merge would
		// start inside a list whose first items trafilatura rendered
		// differently (a results page): readability's answer is the
		// better-formed one.
		return secondary
	}
	if sectionsAnswer(pb) {
		// trafilatura's answer is a page of short sections, not
		// article prose: readability, which keeps prose, is no filter
		// for it (sections.go).
		keepSections(pb, pFound, keepPrimary)
	}

	var out []string
	out = append(out, extras[-1]...)
	for j, b := range pb {
		if r, ok := richer[j]; ok && pFound[j] {
			b.text = r
		}
		// Code listings are rarely boilerplate: keep them even when
		// readability dropped them. Blocks without words or images (a
		// stray "[" left by an edit link) are dropped.
		switch {
		case b.isCode():
			out = append(out, before[j]...)
			out = append(out, b.text)
		case len(b.tokens) == 0 && !b.isImage():
		case pFound[j] || keepPrimary[j]:
			out = append(out, before[j]...)
			out = append(out, b.text)
		}
		out = append(out, extras[j]...)
	}
	return strings.Join(out, "\n\n")
}

// supersetMaxGrowth and supersetMinCover: readability's answer replaces
// the merge when it holds supersetMinCover of trafilatura's distinct
// words, has between supersetMinCover and supersetMaxGrowth times its
// tokens, and the merge would open mid-list.
const (
	supersetMaxGrowth = 1.15
	supersetMinCover  = 0.9
)

// startsInList reports whether the first block the merge keeps is not
// the first item of the list it belongs to (a continuation line, or an
// ordered item not numbered 1).
func startsInList(pb []mdBlock, found, keep []bool) bool {
	for j, b := range pb {
		if !found[j] && !keep[j] || len(b.tokens) == 0 {
			continue
		}
		if strings.HasPrefix(b.text, " ") {
			return true
		}
		_, w, first := markdown.ListMarker(b.text)
		return w > 0 && !first
	}
	return false
}

// minCoverShare: when the blocks of trafilatura's answer that readability
// also found hold less than this share of its words (outside link-heavy
// blocks), and readability's answer is under half as long, readability
// missed the content and trafilatura's answer is used alone.
const minCoverShare = 0.5

// tableMinCover is the share of a table's words (distinct tokens) that
// must appear in a table of the other extraction for the two to be the
// same table; maxTables bounds the pairwise comparison that picks the
// fuller rendering of a table.
const (
	tableMinCover = 0.8
	maxTables     = 64
)

// isTable reports whether the block is a GFM table.
func (b mdBlock) isTable() bool {
	return strings.HasPrefix(b.text, "|")
}

// tableBlocks returns the indexes of the table blocks of bs.
func tableBlocks(bs []mdBlock) []int {
	var ts []int
	for i, b := range bs {
		if b.isTable() && len(b.tokens) > 0 {
			ts = append(ts, i)
		}
	}
	return ts
}

// wordSet returns the distinct tokens of toks.
func wordSet(toks []string) map[string]struct{} {
	m := make(map[string]struct{}, len(toks))
	for _, t := range toks {
		m[t] = struct{}{}
	}
	return m
}

// wordCover returns the share of the distinct tokens of toks that are in
// words (1 when toks is empty).
func wordCover(toks []string, words map[string]struct{}) float64 {
	seen := map[string]bool{}
	in := 0
	for _, t := range toks {
		if seen[t] {
			continue
		}
		seen[t] = true
		if _, ok := words[t]; ok {
			in++
		}
	}
	if len(seen) == 0 {
		return 1
	}
	return float64(in) / float64(len(seen))
}

// maxPrimaryRun is the longest run of trafilatura-only blocks, between two
// blocks both extractors found, that keptPrimaryOnly keeps.
const maxPrimaryRun = 3

// keptPrimaryOnly marks the primary blocks readability did not find that
// are kept anyway: runs of at most maxPrimaryRun blocks between two found
// blocks (the first of shingleLen tokens or more, the second not
// link-heavy nor a heading right after a heading of the run), none of
// them link-heavy or images only (a heading, an admonition, a short list
// readability dropped inside the article).
func keptPrimaryOnly(pb []mdBlock, found []bool) []bool {
	keep := make([]bool, len(pb))
	prev := -1
	for j := range pb {
		if !found[j] || len(pb[j].tokens) == 0 {
			continue
		}
		if prev < 0 && len(pb[j].tokens) < shingleLen {
			// Not before the first long found block: a short one
			// (the title heading) may be found by chance.
			continue
		}
		if prev >= 0 && j-prev-1 > maxPrimaryRun && !linkRun(pb[prev+1:j]) {
			// A longer run between two found blocks is a whole
			// section readability dropped (sections.go).
			for k := prev + 1; k < j; k++ {
				keep[k] = true
			}
		}
		if prev >= 0 && j-prev-1 > 0 && j-prev-1 <= maxPrimaryRun {
			// Not kept: a heading over a link list or image row ("Most
			// read"), or over another heading (an empty section).
			isHeading := func(b mdBlock) bool { return strings.HasPrefix(b.text, "#") }
			ok := !pb[j].isLinkHeavy() && !(isHeading(pb[j-1]) && isHeading(pb[j]))
			for k := prev + 1; k < j; k++ {
				if pb[k].isLinkHeavy() || pb[k].isImage() {
					ok = false
				}
			}
			for k := prev + 1; ok && k < j; k++ {
				keep[k] = true
			}
		}
		prev = j
	}
	return keep
}

// trimLinkTail joins the blocks, leaving out a link-heavy tail ("you may
// also like" boxes) and the heading just before it.
func trimLinkTail(bs []mdBlock) string {
	end := len(bs)
	for end > 0 && (bs[end-1].isLinkHeavy() || len(bs[end-1].tokens) == 0 && !bs[end-1].isImage()) {
		end--
	}
	if end < len(bs) && end > 0 && strings.HasPrefix(bs[end-1].text, "#") {
		end--
	}
	if end == 0 {
		end = len(bs)
	}
	out := make([]string, 0, end)
	for _, b := range bs[:end] {
		out = append(out, b.text)
	}
	return strings.Join(out, "\n\n")
}

// runHeadings returns the headings that close a run of secondary-only
// blocks (a section heading, or a chain of them, "### WordPress" then
// "#### Strengths"), when the run precedes a block both extractors found:
// the heading of the section that block opens, which trafilatura dropped
// (it often drops headings whose text is wrapped in <strong>, or of levels
// 5 and 6) and selectRun never adds back. Headings that are mostly links
// (a teaser's title) are not section headings.
//
// The images between and after those headings (a section's lead image)
// come with them; without a heading nothing is returned.
func runHeadings(run []mdBlock) []mdBlock {
	start, heading := len(run), false
	for start > 0 {
		b := run[start-1]
		switch {
		case b.isImage():
		case strings.HasPrefix(b.text, "#") && len(b.tokens) > 0 && !b.isLinkHeavy():
			heading = true
		default:
			if !heading {
				return nil
			}
			return run[start:]
		}
		start--
	}
	if !heading {
		return nil
	}
	return run[start:]
}

// holds reports whether block a holds block b's text: its token sequence,
// or sharedMinOverlap of its shingles.
func holds(a, b mdBlock) bool {
	if len(b.tokens) < shingleLen {
		return containsTokens(a.tokens, b.tokens)
	}
	n := 0
	for _, h := range b.shingles {
		if _, ok := slices.BinarySearch(a.shingles, h); ok {
			n++
		}
	}
	return float64(n) >= sharedMinOverlap*float64(len(b.shingles))
}

// selectRun picks what to keep from a run of secondary-only blocks: its
// prose blocks and images (and, between two shared blocks, lists that are
// not link-heavy), never headings, short lines or link lists.
//   - Between two shared blocks the run is kept when prose makes up
//     proseMinRunShare of its words (or it has no words, only images).
//   - Before the first shared block (site header, standfirst, captions)
//     prose is kept only when the run is all prose; images only after its
//     last wordy block that is not prose (a lead image, not a logo).
//   - After the last shared block, what precedes the first link-heavy
//     block (the article's end, not the "related stories" box).
func selectRun(run []mdBlock, leading, trailing bool) []mdBlock {
	if trailing && !leading {
		for i, b := range run {
			if b.isLinkHeavy() {
				run = run[:i]
				break
			}
		}
	}
	// Between two shared blocks a plain list counts as prose (a README's
	// feature or task list that trafilatura dropped).
	isProse := func(b mdBlock) bool { return b.isProse() || !leading && !trailing && b.isPlainList() }
	proseTok, allTok, lastOther := 0, 0, -1
	for i, b := range run {
		if !leading && !trailing && (len(b.tokens) < shingleLen || strings.HasPrefix(b.text, "#") && !b.isLinkHeavy()) {
			// A label ("Important") between lists and prose does not
			// make the run boilerplate (nor is it kept).
			continue
		}
		allTok += len(b.tokens)
		switch {
		case isProse(b):
			proseTok += len(b.tokens)
		case len(b.tokens) > 0:
			lastOther = i
		}
	}
	keepProse := float64(proseTok) >= proseMinRunShare*float64(allTok)
	if leading {
		keepProse = proseTok == allTok
	}
	kept := make([]bool, len(run))
	for i, b := range run {
		kept[i] = b.isImage() && (!leading || i > lastOther) || isProse(b) && keepProse
	}
	// A section heading over kept prose is that section's heading (see
	// runHeadings).
	for i := len(run) - 2; i >= 0; i-- {
		if b := run[i]; kept[i+1] && !run[i+1].isImage() || kept[i+1] && i+2 < len(run) && kept[i+2] {
			kept[i] = kept[i] || strings.HasPrefix(b.text, "#") && len(b.tokens) > 0 && !b.isLinkHeavy()
		}
	}
	var keep []mdBlock
	for i, b := range run {
		if kept[i] {
			keep = append(keep, b)
		}
	}
	return keep
}

// isPlainList reports whether the block is a list of at least two items
// (every line an item or an item's continuation) that is not link-heavy.
func (b mdBlock) isPlainList() bool {
	if len(b.tokens) == 0 || b.isLinkHeavy() {
		return false
	}
	items := 0
	for _, line := range strings.Split(b.text, "\n") {
		if _, w, _ := markdown.ListMarker(line); w > 0 {
			items++
		} else if !strings.HasPrefix(line, " ") {
			return false
		}
	}
	return items >= 2
}

// isCode reports whether the block is a fenced code block.
func (b mdBlock) isCode() bool {
	return markdown.FenceOpener(strings.TrimLeft(b.text, " ")) != ""
}

// isImage reports whether the block is only images (possibly linked).
func (b mdBlock) isImage() bool {
	return len(b.tokens) == 0 && strings.Contains(b.text, "![")
}

// wordsIn counts the words of the blocks that are not link-heavy and
// have at least sharedMinOverlap of their shingles in set.
func wordsIn(bs []mdBlock, set map[uint64]struct{}) int {
	n := 0
	for _, b := range bs {
		if len(b.tokens) == 0 || b.isLinkHeavy() {
			continue
		}
		in := 0
		for _, h := range b.shingles {
			if _, ok := set[h]; ok {
				in++
			}
		}
		if float64(in) >= sharedMinOverlap*float64(len(b.shingles)) {
			n += len(b.tokens)
		}
	}
	return n
}

// plainWords counts the words of blocks that are not link-heavy.
func plainWords(bs []mdBlock) int {
	n := 0
	for _, b := range bs {
		if !b.isLinkHeavy() {
			n += len(b.tokens)
		}
	}
	return n
}

// maxPostings caps how many primary blocks blockIndex remembers per
// shingle: a phrase repeated in more blocks than this (a boilerplate line
// on every card) says little about where a block belongs, and an uncapped
// list would make bestMatch quadratic on such pages.
const maxPostings = 16

// blockIndex maps shingles to the primary blocks holding them, for
// bestMatch.
type blockIndex struct {
	n        int
	postings map[uint64][]int32 // shingle → blocks holding it (ascending, at most maxPostings)
	short    map[uint64]int     // short probe's hash → first block holding that token run
}

// newBlockIndex indexes pb for bestMatch queries with the given probes
// (only the short ones, under shingleLen tokens, need to be known ahead).
func newBlockIndex(pb []mdBlock, probes []mdBlock) *blockIndex {
	idx := &blockIndex{n: len(pb), postings: map[uint64][]int32{}, short: map[uint64]int{}}
	for j, p := range pb {
		for _, h := range p.shingles {
			if l := idx.postings[h]; len(l) < maxPostings {
				idx.postings[h] = append(l, int32(j))
			}
		}
	}
	needles := shortNeedles(probes)
	if len(needles) > 0 {
		for j, p := range pb {
			forShortRuns(p.tokens, needles, func(h uint64) {
				if _, ok := idx.short[h]; !ok {
					idx.short[h] = j
				}
			})
		}
	}
	return idx
}

// bestMatch returns the index of the primary block that contains b's token
// sequence (the first such block), else the one sharing the most shingles
// with b (the first on ties), else the last block.
func (idx *blockIndex) bestMatch(b mdBlock) int {
	last := idx.n - 1
	if len(b.tokens) == 0 {
		return last
	}
	if len(b.tokens) < shingleLen {
		if j, ok := idx.short[b.shingles[0]]; ok {
			return j
		}
		return last
	}
	// A block containing b holds all its shingles, the most any block
	// can share, so the first one with the highest count is the answer
	// in both cases.
	votes := map[int32]int{}
	for _, h := range b.shingles {
		for _, j := range idx.postings[h] {
			votes[j]++
		}
	}
	best, bestN := last, 0
	for j, n := range votes {
		if n > bestN || n == bestN && int(j) < best {
			best, bestN = int(j), n
		}
	}
	return best
}

// foundIn reports whether the block's text also appears in c: its token
// sequence is contained in c's, or at least sharedMinOverlap of its
// shingles are. A block without tokens (rule, image) counts as found. A
// block of shingleLen tokens or more that is contained has all its
// shingles in c, so for those the shingle test decides alone; a shorter
// one is looked up among c's short runs.
func (b mdBlock) foundIn(c *corpus) bool {
	if len(b.tokens) == 0 {
		return true
	}
	if len(b.tokens) < shingleLen {
		_, ok := c.short[b.shingles[0]]
		return ok
	}
	n := 0
	for _, h := range b.shingles {
		if _, ok := c.shingles[h]; ok {
			n++
		}
	}
	return float64(n) >= sharedMinOverlap*float64(len(b.shingles))
}

// isProse reports whether the block reads like article prose: long enough,
// few links, not a heading.
func (b mdBlock) isProse() bool {
	return len(b.tokens) >= proseMinTokens && !strings.HasPrefix(b.text, "#") && !b.isLinkHeavy()
}

// isLinkHeavy reports whether link text makes up proseMaxLinkDensity or
// more of the block's words (menus, tag lists, "read more" boxes).
func (b mdBlock) isLinkHeavy() bool {
	if len(b.tokens) == 0 {
		return false
	}
	linkTok := 0
	for _, m := range reLinkText.FindAllStringSubmatch(b.text, -1) {
		linkTok += countTokens(m[1])
	}
	return float64(linkTok) >= proseMaxLinkDensity*float64(len(b.tokens))
}

var (
	reMDImage  = lazyregexp.New(`!\[[^\]]*\]\([^)]*\)`)
	reLinkDest = lazyregexp.New(`\]\([^)]*\)`)
	// reOLMarker is an ordered-list item's number at a line start: the
	// two extractors number the same list differently (one keeps <ol
	// start=3>, the other counts from 1), so it is no word to compare.
	reOLMarker = lazyregexp.New(`(?m)^[ \t]*[0-9]{1,9}[.)][ \t]+`)
	reLinkText = lazyregexp.New(`\[([^\]]*)\]\(`)
)

// visibleText drops image syntax and link destinations so URLs do not
// count as words.
func visibleText(md string) string {
	// (A match needs "](": the guard skips the regexp scan, the most
	// expensive step of splitting a page into blocks, on most blocks.)
	if !strings.Contains(md, "](") {
		return md
	}
	if strings.Contains(md, "![") {
		md = dropMDImages(md)
	}
	return dropLinkDests(md)
}

// dropMDImages is reMDImage.ReplaceAllString(s, "") without the regexp
// (visibleText runs on every block of both answers): each "![alt](dest)",
// alt without ']' and dest without ')', leftmost first, is removed. The
// delimiters are ASCII, so scanning bytes finds what the regexp finds.
func dropMDImages(s string) string {
	var b strings.Builder
	last, i := 0, 0
	for {
		p := strings.Index(s[i:], "![")
		if p < 0 {
			break
		}
		p += i
		q := strings.IndexByte(s[p+2:], ']')
		if q < 0 {
			break // (no ']' after p: no later match either)
		}
		q += p + 2
		if q+1 >= len(s) || s[q+1] != '(' {
			// Every start before q stops at the same ']': go on after it.
			i = q + 1
			continue
		}
		r := strings.IndexByte(s[q+2:], ')')
		if r < 0 {
			break
		}
		r += q + 2
		if last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:p])
		last, i = r+1, r+1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// dropLinkDests is reLinkDest.ReplaceAllString(s, "]") without the
// regexp: each "](" up to the next ')' becomes "]".
func dropLinkDests(s string) string {
	var b strings.Builder
	last, i := 0, 0
	for {
		j := strings.Index(s[i:], "](")
		if j < 0 {
			break
		}
		j += i
		k := strings.IndexByte(s[j+2:], ')')
		if k < 0 {
			break // (no ')' after j: no later match either)
		}
		k += j + 2
		if last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:j])
		b.WriteByte(']')
		last, i = k+1, k+1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// mayHaveOLMarker reports whether s holds a digit followed by '.' or ')',
// which every match of reOLMarker does.
func mayHaveOLMarker(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' && (s[i+1] == '.' || s[i+1] == ')') {
			return true
		}
	}
	return false
}

// newBlock is text as a block to compare: its tokens (visibleText, list
// numbers left out: reOLMarker) and their shingles.
func newBlock(text string) mdBlock {
	b := newTextBlock(text)
	toks := b.tokens
	// The distinct shingle hashes, sorted (the set shingles returns,
	// built without a map).
	var hs []uint64
	switch {
	case len(toks) == 0:
	case len(toks) < shingleLen:
		hs = []uint64{hashTokens(toks)}
	default:
		hs = make([]uint64, 0, len(toks)-shingleLen+1)
		for i := 0; i+shingleLen <= len(toks); i++ {
			hs = append(hs, hashTokens(toks[i:i+shingleLen]))
		}
		slices.Sort(hs)
		hs = slices.Compact(hs)
	}
	b.shingles = hs
	return b
}

// newTextBlock is newBlock without the shingles.
func newTextBlock(text string) mdBlock {
	t := text
	if mayHaveOLMarker(t) {
		t = reOLMarker.ReplaceAllString(t, "")
	}
	return mdBlock{text: text, tokens: tokenize(visibleText(t))}
}

// newCorpus indexes all the tokens of bs, in order, for foundIn queries by
// the blocks of probes (the other extraction).
func newCorpus(bs, probes []mdBlock) *corpus {
	n := 0
	for _, b := range bs {
		n += len(b.tokens)
	}
	toks := make([]string, 0, n)
	for _, b := range bs {
		toks = append(toks, b.tokens...)
	}
	c := &corpus{tokens: toks, shingles: shingles(toks), short: map[uint64]struct{}{}}
	if needles := shortNeedles(probes); len(needles) > 0 {
		forShortRuns(toks, needles, func(h uint64) { c.short[h] = struct{}{} })
	}
	return c
}

// shortNeedles returns, by length, the hashes of the blocks of bs that
// have fewer than shingleLen tokens (such a block has exactly one shingle,
// the hash of all its tokens).
func shortNeedles(bs []mdBlock) [shingleLen]map[uint64]struct{} {
	var needles [shingleLen]map[uint64]struct{}
	for _, b := range bs {
		if n := len(b.tokens); n > 0 && n < shingleLen {
			if needles[n] == nil {
				needles[n] = map[uint64]struct{}{}
			}
			needles[n][b.shingles[0]] = struct{}{}
		}
	}
	return needles
}

// forShortRuns calls fn with the hash of every run of 1 to shingleLen-1
// consecutive tokens of toks that is one of needles.
func forShortRuns(toks []string, needles [shingleLen]map[uint64]struct{}, fn func(uint64)) {
	for n := 1; n < shingleLen; n++ {
		if len(needles[n]) == 0 {
			continue
		}
		for i := 0; i+n <= len(toks); i++ {
			if h := hashTokens(toks[i : i+n]); hasKey(needles[n], h) {
				fn(h)
			}
		}
	}
}

func hasKey(m map[uint64]struct{}, k uint64) bool {
	_, ok := m[k]
	return ok
}

// containsTokens reports whether needle occurs as a contiguous run of
// hay's tokens (like strings.Contains on the space-joined tokens).
func containsTokens(hay, needle []string) bool {
	return strings.Contains(" "+strings.Join(hay, " ")+" ", " "+strings.Join(needle, " ")+" ")
}

// splitMemo remembers the blocks of the texts it split (at most
// len(texts)), so that the steps of one extraction comparing the same two
// answers (isFragment, mergeWithin) split each of them once. The blocks
// it returns are shared: callers only read them.
type splitMemo struct {
	texts  [2]string
	blocks [2][]mdBlock
	n      int
}

// split returns splitBlocks(md), from the memo when md was split before;
// a nil memo splits every time.
func (m *splitMemo) split(md string) []mdBlock {
	if m == nil {
		return splitBlocks(md)
	}
	for i := range min(m.n, len(m.texts)) {
		if m.texts[i] == md {
			return m.blocks[i]
		}
	}
	bs := splitBlocks(md)
	i := m.n % len(m.texts)
	m.texts[i], m.blocks[i] = md, bs
	m.n++
	return bs
}

// splitBlocks cuts markdown at blank lines, keeping fenced code blocks
// (which may contain blank lines) whole.
func splitBlocks(md string) []mdBlock { return splitBlocksWith(md, newBlock) }

// splitBlocksWith is splitBlocks with mk making each block from its text
// (newBlock, or newTextBlock where the shingles are not needed). Each
// block's text is a slice of md (its lines are consecutive).
func splitBlocksWith(md string, mk func(string) mdBlock) []mdBlock {
	var blocks []mdBlock
	start, end := -1, 0 // the current block's lines: md[start:end]
	fence := ""
	flush := func() {
		if start >= 0 {
			if t := strings.Trim(md[start:end], "\n"); strings.TrimSpace(t) != "" {
				blocks = append(blocks, mk(t))
			}
			start = -1
		}
	}
	// (The lines of strings.Split(md, "\n"), without the slice.)
	for ls := 0; ls <= len(md); {
		le := strings.IndexByte(md[ls:], '\n')
		if le < 0 {
			le = len(md)
		} else {
			le += ls
		}
		line, lineStart := md[ls:le], ls
		add := func() {
			if start < 0 {
				start = lineStart
			}
			end = le
		}
		ls = le + 1
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			add()
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
				flush()
			}
			continue
		}
		if f := markdown.FenceOpener(trimmed); f != "" {
			flush()
			fence = f
			add()
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		add()
	}
	flush()
	return blocks
}

// tokenize returns the maximal runs of Unicode letters, digits and '_', as
// the bench scorer counts words (an invalid UTF-8 byte separates tokens).
// It makes one allocation, the result (none when s has no token): the
// tokens are counted first.
func tokenize(s string) []string {
	n := countTokens(s)
	if n == 0 {
		return nil
	}
	return appendTokens(make([]string, 0, n), s)
}

// appendTokens appends the tokens of s (see tokenize) to toks.
func appendTokens(toks []string, s string) []string {
	for i := 0; ; {
		start, end := nextToken(s, i)
		if start < 0 {
			return toks
		}
		toks = append(toks, s[start:end])
		i = end
	}
}

// countTokens is len(tokenize(s)) without building the slice.
func countTokens(s string) int {
	n := 0
	for i := 0; ; n++ {
		start, end := nextToken(s, i)
		if start < 0 {
			return n
		}
		i = end
	}
}

// nextToken returns the bounds of the first token of s at or after byte
// i, or start -1 when there is none.
func nextToken(s string, i int) (start, end int) {
	start = -1
	for i < len(s) {
		c := s[i]
		w := 1
		var in bool
		if c < utf8.RuneSelf {
			in = asciiToken[c]
		} else {
			var r rune
			r, w = utf8.DecodeRuneInString(s[i:])
			in = isTokenRune(r) // (utf8.RuneError is no letter)
		}
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			return start, i
		}
		i += w
	}
	if start < 0 {
		return -1, -1
	}
	return start, len(s)
}

// asciiToken marks the ASCII bytes isTokenRune accepts.
var asciiToken = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isTokenRune(rune(c))
	}
	return t
}()

// isTokenRune reports whether r belongs to a token: a letter, a digit or '_'.
func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// shingles hashes every run of shingleLen consecutive tokens; fewer tokens
// make one shingle.
func shingles(toks []string) map[uint64]struct{} {
	set := make(map[uint64]struct{}, len(toks))
	if len(toks) == 0 {
		return set
	}
	if len(toks) < shingleLen {
		set[hashTokens(toks)] = struct{}{}
		return set
	}
	for i := 0; i+shingleLen <= len(toks); i++ {
		set[hashTokens(toks[i:i+shingleLen])] = struct{}{}
	}
	return set
}

// hashTokens is FNV-1a (64 bits) of the tokens, each followed by a NUL byte.
func hashTokens(ts []string) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for _, t := range ts {
		for i := 0; i < len(t); i++ {
			h ^= uint64(t[i])
			h *= prime64
		}
		h *= prime64 // the NUL separator: h ^= 0 changes nothing
	}
	return h
}
