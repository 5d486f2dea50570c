package content

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
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
// block they followed. Answers that barely overlap are not merged: the one
// with more words outside link lists is returned whole.
//
// Time and memory are linear in the size of the two answers (hash sets and
// a capped inverted index; see corpus and blockIndex).
func mergeExtractions(primary, secondary string) string {
	if strings.TrimSpace(secondary) == "" {
		return primary
	}
	if strings.TrimSpace(primary) == "" {
		return secondary
	}
	pb, sb := splitBlocks(primary), splitBlocks(secondary)
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
		// Different parts of the page: keep the one that reads more like
		// an article.
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
	lastShared := -1
	for i := range sb {
		if sShared[i] {
			lastShared = i
		}
	}
	// Runs of secondary-only blocks, with the shared secondary block they
	// follow (-1: before everything) and what selectRun keeps of them.
	type keptRun struct {
		after int
		keep  []mdBlock
	}
	var kept []keptRun
	prev := -1
	var run []mdBlock
	flush := func() {
		if keep := selectRun(run, prev < 0, prev == lastShared); len(keep) > 0 {
			kept = append(kept, keptRun{prev, keep})
		}
		run = run[:0]
	}
	for i, b := range sb {
		switch {
		case sShared[i]:
			flush()
			prev = i
		case len(b.tokens) > 0 || b.isImage():
			run = append(run, b)
		}
	}
	flush()

	// Where the kept runs go: after the primary block that best matches
	// the shared block they followed.
	extras := map[int][]string{}
	var idx *blockIndex
	for _, r := range kept {
		at := -1
		if r.after >= 0 {
			if idx == nil {
				var probes []mdBlock
				for _, r := range kept {
					if r.after >= 0 {
						probes = append(probes, sb[r.after])
					}
				}
				idx = newBlockIndex(pb, probes)
			}
			at = idx.bestMatch(sb[r.after])
		}
		for _, b := range r.keep {
			extras[at] = append(extras[at], b.text)
		}
	}

	var out []string
	out = append(out, extras[-1]...)
	for j, b := range pb {
		// Code listings are rarely boilerplate: keep them even when
		// readability dropped them.
		if b.foundIn(sAll) || b.isCode() {
			out = append(out, b.text)
		}
		out = append(out, extras[j]...)
	}
	return strings.Join(out, "\n\n")
}

// selectRun picks what to keep from a run of secondary-only blocks: its
// prose blocks and images, never headings, short lines or link lists.
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
	proseTok, allTok, lastOther := 0, 0, -1
	for i, b := range run {
		allTok += len(b.tokens)
		switch {
		case b.isProse():
			proseTok += len(b.tokens)
		case len(b.tokens) > 0:
			lastOther = i
		}
	}
	keepProse := float64(proseTok) >= proseMinRunShare*float64(allTok)
	if leading {
		keepProse = proseTok == allTok
	}
	var keep []mdBlock
	for i, b := range run {
		switch {
		case b.isImage() && (!leading || i > lastOther):
			keep = append(keep, b)
		case b.isProse() && keepProse:
			keep = append(keep, b)
		}
	}
	return keep
}

// isCode reports whether the block is a fenced code block.
func (b mdBlock) isCode() bool {
	return fenceOpener(strings.TrimLeft(b.text, " ")) != ""
}

// isImage reports whether the block is only images (possibly linked).
func (b mdBlock) isImage() bool {
	return len(b.tokens) == 0 && strings.Contains(b.text, "![")
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
		linkTok += len(tokenize(m[1]))
	}
	return float64(linkTok) >= proseMaxLinkDensity*float64(len(b.tokens))
}

var (
	reMDImage  = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	reLinkDest = regexp.MustCompile(`\]\([^)]*\)`)
	reLinkText = regexp.MustCompile(`\[([^\]]*)\]\(`)
)

// visibleText drops image syntax and link destinations so URLs do not
// count as words.
func visibleText(md string) string {
	md = reMDImage.ReplaceAllString(md, "")
	return reLinkDest.ReplaceAllString(md, "]")
}

func newBlock(text string) mdBlock {
	toks := tokenize(visibleText(text))
	set := shingles(toks)
	hs := make([]uint64, 0, len(set))
	for h := range set {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	return mdBlock{text: text, tokens: toks, shingles: hs}
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

// splitBlocks cuts markdown at blank lines, keeping fenced code blocks
// (which may contain blank lines) whole.
func splitBlocks(md string) []mdBlock {
	var blocks []mdBlock
	var cur []string
	fence := ""
	flush := func() {
		if len(cur) > 0 {
			if t := strings.Trim(strings.Join(cur, "\n"), "\n"); strings.TrimSpace(t) != "" {
				blocks = append(blocks, newBlock(t))
			}
			cur = cur[:0]
		}
	}
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			cur = append(cur, line)
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
				flush()
			}
			continue
		}
		if f := fenceOpener(trimmed); f != "" {
			flush()
			fence = f
			cur = append(cur, line)
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return blocks
}

// fenceOpener returns the fence (``` or ~~~, possibly longer) that opens a
// code block on this line, or "".
func fenceOpener(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// tokenize returns the maximal runs of Unicode letters, digits and '_', as
// the bench scorer counts words.
func tokenize(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !isTokenRune(r) })
}

// isTokenRune reports whether r belongs to a token: a letter, a digit or '_'.
func isTokenRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
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
