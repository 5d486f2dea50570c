package content

import (
	"hash/fnv"
	"regexp"
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
	shingles map[uint64]struct{}
	joined   string // " tok1 tok2 … "
}

// mergeExtractions merges trafilatura's markdown (primary) with
// readability's (secondary); either may be "". The result holds the
// primary's blocks that the secondary also has (and its code blocks), in
// the primary's order, with the secondary-only prose and images that
// selectRun accepts inserted after the primary block matching the shared
// block they followed. Answers that barely overlap are not merged: the one
// with more words outside link lists is returned whole.
func mergeExtractions(primary, secondary string) string {
	if strings.TrimSpace(secondary) == "" {
		return primary
	}
	if strings.TrimSpace(primary) == "" {
		return secondary
	}
	pb, sb := splitBlocks(primary), splitBlocks(secondary)
	pAll, sAll := blocksSummary(pb), blocksSummary(sb)
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
		!strings.Contains(pAll.joined, sAll.joined) && !strings.Contains(sAll.joined, pAll.joined) {
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
	// Runs of secondary-only blocks, keyed by the primary block they
	// follow (-1: before everything).
	extras := map[int][]string{}
	prev := -1
	var run []mdBlock
	flush := func() {
		defer func() { run = run[:0] }()
		at := -1
		if prev >= 0 {
			at = bestMatch(sb[prev], pb)
		}
		for _, b := range selectRun(run, prev < 0, prev == lastShared) {
			extras[at] = append(extras[at], b.text)
		}
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

// bestMatch returns the index of the primary block that shares the most
// shingles with b, or len(pb)-1 when none does.
func bestMatch(b mdBlock, pb []mdBlock) int {
	best, bestN := len(pb)-1, 0
	for j, p := range pb {
		if strings.Contains(p.joined, b.joined) {
			return j
		}
		n := 0
		for h := range b.shingles {
			if _, ok := p.shingles[h]; ok {
				n++
			}
		}
		if n > bestN {
			best, bestN = j, n
		}
	}
	return best
}

// foundIn reports whether the block's text also appears in other: its token
// sequence is contained in other's, or enough of its shingles are. A block
// without tokens (rule, image) counts as found.
func (b mdBlock) foundIn(other mdBlock) bool {
	if len(b.tokens) == 0 {
		return true
	}
	if strings.Contains(other.joined, b.joined) {
		return true
	}
	n := 0
	for h := range b.shingles {
		if _, ok := other.shingles[h]; ok {
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
	return mdBlock{text: text, tokens: toks, shingles: shingles(toks), joined: " " + strings.Join(toks, " ") + " "}
}

// blocksSummary is one block holding all the tokens of bs.
func blocksSummary(bs []mdBlock) mdBlock {
	var toks []string
	for _, b := range bs {
		toks = append(toks, b.tokens...)
	}
	return mdBlock{tokens: toks, shingles: shingles(toks), joined: " " + strings.Join(toks, " ") + " "}
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
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r))
	})
}

// shingles hashes every run of shingleLen consecutive tokens; fewer tokens
// make one shingle.
func shingles(toks []string) map[uint64]struct{} {
	set := make(map[uint64]struct{}, len(toks))
	if len(toks) == 0 {
		return set
	}
	add := func(ts []string) {
		h := fnv.New64a()
		for _, t := range ts {
			h.Write([]byte(t))
			h.Write([]byte{0})
		}
		set[h.Sum64()] = struct{}{}
	}
	if len(toks) < shingleLen {
		add(toks)
		return set
	}
	for i := 0; i+shingleLen <= len(toks); i++ {
		add(toks[i : i+shingleLen])
	}
	return set
}
