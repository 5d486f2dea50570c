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
