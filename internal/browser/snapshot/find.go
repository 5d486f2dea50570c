package snapshot

import (
	"fmt"
	"strings"
)

// Find limits (browser tools' find input).
const (
	// MaxFindMatches is the most matches Find shows; the rest are counted.
	MaxFindMatches = 20
	// findBefore and findAfter are the lines of context Find keeps around a
	// match, within the match's parent: the label before a field, the
	// fields and buttons after it in the same form or row.
	findBefore = 2
	findAfter  = 6
)

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// Find returns the part of snapshot text that matters for query: each line
// whose text (without its [ref=…] marks) contains query, case-insensitively,
// under the lines of its ancestors (its path from the root, so landmarks and
// headings around it show), with up to 2 lines before and 6 after it inside
// its parent; "  ..." stands for lines left out. Lines keep their refs, so a
// found element is clicked or typed into by the same ref as in the whole
// snapshot. The first line is Gatehouse's header: `[find "query": N of M
// lines match]` (N > MaxFindMatches: the first 20 are shown), or no match.
// matches is N.
func Find(text, query string) (out string, matches int) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	q := strings.ToLower(strings.TrimSpace(query))
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if q == "" || !strings.Contains(strings.ToLower(refRe.ReplaceAllString(l, "")), q) {
			continue
		}
		matches++
		if matches > MaxFindMatches {
			continue
		}
		keep[i] = true
		ind := indentOf(l)
		// Ancestors: each earlier line less indented than the last kept one.
		parent := -1
		for j, cur := i-1, ind; j >= 0 && cur > 0; j-- {
			if li := indentOf(lines[j]); li < cur && strings.TrimSpace(lines[j]) != "" {
				keep[j] = true
				if parent < 0 {
					parent = li
				}
				cur = li
			}
		}
		// Context inside the parent: lines indented deeper than it.
		for j := i - 1; j >= max(0, i-findBefore) && indentOf(lines[j]) > parent; j-- {
			keep[j] = true
		}
		for j := i + 1; j < len(lines) && j <= i+findAfter && indentOf(lines[j]) > parent; j++ {
			keep[j] = true
		}
	}
	var b strings.Builder
	switch {
	case matches == 0:
		fmt.Fprintf(&b, "[find %q: no line of the page's %d matches; browser_snapshot without find shows the whole page]", query, len(lines))
		return b.String(), 0
	case matches > MaxFindMatches:
		fmt.Fprintf(&b, "[find %q: %d of %d lines match; the first %d are shown; a longer query narrows it]", query, matches, len(lines), MaxFindMatches)
	default:
		fmt.Fprintf(&b, "[find %q: %d of %d lines match]", query, matches, len(lines))
	}
	gap := false
	for i, l := range lines {
		if !keep[i] {
			gap = true
			continue
		}
		if gap && i > 0 {
			b.WriteString("\n" + strings.Repeat(" ", indentOf(l)) + "...")
		}
		gap = false
		b.WriteString("\n" + l)
	}
	if gap {
		b.WriteString("\n...")
	}
	return b.String(), matches
}

// minRepeat is the fewest lines a top-level block must have for Collapse
// to fold it: a folded block still costs its header and the fold line.
const minRepeat = 4

// Collapse folds the page chrome a navigation repeats: each top-level block
// of cur (a line at indentation 0 and the deeper lines under it: a banner,
// a navigation, a footer) of at least 4 lines that prev, the snapshot of the
// page before, holds verbatim — the same elements under the same refs — is
// shown as its first line and one line naming how many lines and which refs
// it holds, e.g. `  - [same 7 lines as on the previous page: refs e1–e6]`.
// The refs stay valid on the new page (they are the same elements'), so an
// agent that read them on the page before still clicks them; every other
// block is kept whole. prev "" returns cur unchanged.
func Collapse(prev, cur string) string {
	if prev == "" || cur == "" {
		return cur
	}
	blocks := func(s string) [][]string {
		var out [][]string
		for _, l := range strings.Split(s, "\n") {
			if l == "" {
				continue
			}
			if indentOf(l) == 0 || len(out) == 0 {
				out = append(out, []string{l})
				continue
			}
			out[len(out)-1] = append(out[len(out)-1], l)
		}
		return out
	}
	seen := map[string]bool{}
	for _, b := range blocks(prev) {
		seen[strings.Join(b, "\n")] = true
	}
	var out []string
	for _, b := range blocks(cur) {
		if len(b) < minRepeat || !seen[strings.Join(b, "\n")] {
			out = append(out, b...)
			continue
		}
		refs := refRe.FindAllStringSubmatch(strings.Join(b[1:], "\n"), -1)
		what := fmt.Sprintf("  - [same %d lines as on the previous page", len(b)-1)
		switch len(refs) {
		case 0:
		case 1:
			what += ": ref " + refs[0][1]
		default:
			what += ": refs " + refs[0][1] + "–" + refs[len(refs)-1][1]
		}
		out = append(out, b[0], what+"]")
	}
	return strings.Join(out, "\n")
}

// FindDelta is Find for a delta (Delta's flat +/-/~ lines): the changed
// lines whose text contains query, case-insensitively, under a header
// `[find "query": N of M changed lines match]`; "" when delta is "" (no
// change). The agent asked for what it needs; the header says how much
// else changed.
func FindDelta(delta, query string) string {
	if delta == "" {
		return ""
	}
	q := strings.ToLower(strings.TrimSpace(query))
	lines := strings.Split(delta, "\n")
	var keep []string
	for _, l := range lines {
		if q != "" && strings.Contains(strings.ToLower(refRe.ReplaceAllString(l, "")), q) {
			keep = append(keep, l)
		}
	}
	head := fmt.Sprintf("[find %q: %d of %d changed lines match]", query, len(keep), len(lines))
	return strings.Join(append([]string{head}, keep...), "\n")
}
