package markdown

import (
	"strings"
	"unicode/utf8"
)

// Tidy trims blank space around the result, ends it with one
// newline and makes nested lists tight (see tightenNestedLists). Other inner
// blank lines are left alone (code blocks keep theirs).
func Tidy(md string) string {
	md = strings.TrimSpace(md)
	if md == "" {
		return ""
	}
	return dropRepeatedBlocks(tightenNestedLists(md)) + "\n"
}

// minRepeatChars is the length (bytes) from which a paragraph that repeats
// an earlier one word for word is a copy of the same text, not a refrain:
// a page that holds its article twice (a mobile and a desktop copy, a
// hidden print view, a reveal wrapper) must not give the agent every
// sentence two or three times.
const minRepeatChars = 80

// dropRepeatedBlocks removes every paragraph of md (a block between blank
// lines, outside fenced code) of at least minRepeatChars that repeats an
// earlier paragraph exactly; headings, list items, quotes, table rows and
// code are never dropped (a repeated table row or code line can be data),
// and neither is a paragraph that is not sentences (isSentences).
// It returns md itself when nothing repeats.
func dropRepeatedBlocks(md string) string {
	if len(md) < 2*minRepeatChars {
		return md
	}
	var blocks []string
	var cur strings.Builder
	fence := ""
	flush := func() {
		blocks = append(blocks, cur.String())
		cur.Reset()
	}
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
			}
		case FenceOpener(trimmed) != "":
			fence = FenceOpener(trimmed)
		case strings.TrimSpace(line) == "":
			flush()
			continue
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(line)
	}
	flush()
	seen := map[string]bool{}
	kept := blocks[:0]
	dropped := false
	for _, b := range blocks {
		if len(b) >= minRepeatChars && isProseBlock(b) && isSentences(b) {
			if seen[b] {
				dropped = true
				continue
			}
			seen[b] = true
		}
		kept = append(kept, b)
	}
	if !dropped {
		return md
	}
	var out []string
	for _, b := range kept {
		if b != "" {
			out = append(out, b)
		}
	}
	return strings.Join(out, "\n\n")
}

// isSentences reports whether a paragraph reads as sentences: at least 12
// words, ending in sentence-final punctuation (optionally inside a closing
// quote). A meal plan's "Asian Chicken Zoodles [1 cup …]" or a price line
// that recurs on a page is data and may repeat; a paragraph of sentences
// given word for word twice is a copy of the same text.
func isSentences(b string) bool {
	t := strings.TrimRight(b, " \t\n\"'”’*_")
	if t == "" || !atLeastFields(t, 12) {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(t)
	return strings.ContainsRune(".!?…。！？", r)
}

// isProseBlock reports whether a markdown block is a plain paragraph: not
// a heading, list, quote, table, code block or image line.
func isProseBlock(b string) bool {
	t := strings.TrimLeft(b, " ")
	if t == "" || strings.ContainsAny(t[:1], "#>|-*+`~![") || strings.HasPrefix(t, "    ") {
		return false
	}
	if i := strings.IndexAny(t, ".)"); i > 0 && i < 10 && strings.Trim(t[:i], "0123456789") == "" {
		return false // an ordered list item
	}
	return true
}

// tightenNestedLists removes the blank line the converter writes between a
// list item's first line and a list nested in it ("- two\n  \n  - nested"
// becomes "- two\n  - nested"), which would otherwise make the outer list
// loose. Only a nested bullet list or an ordered one starting at 1 may
// follow an item's text directly (CommonMark §5.2), so others keep the
// blank line. Lines of spaces only become empty. Fenced code is left
// alone.
func tightenNestedLists(md string) string {
	var b strings.Builder
	changed := false
	fence := ""
	itemCol := -1 // content column of the list item whose first line was the last line written
	rest := md
	for rest != "" {
		line, after, found := strings.Cut(rest, "\n")
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
			}
			itemCol = -1
		case FenceOpener(trimmed) != "":
			fence = FenceOpener(trimmed)
			itemCol = -1
		case trimmed == "":
			next, _, _ := strings.Cut(after, "\n")
			indent, _, first := ListMarker(next)
			drop := itemCol >= 0 && found && indent >= itemCol && first
			itemCol = -1
			if drop || line != "" {
				// Drop the line, or write it empty: the spaces the
				// converter indents blank lines with are noise.
				if !changed {
					b.Grow(len(md))
					b.WriteString(md[:len(md)-len(rest)])
					changed = true
				}
				if drop {
					rest = after
					continue
				}
				line = ""
			}
		default:
			itemCol = -1
			if indent, width, _ := ListMarker(line); width > 0 && strings.TrimSpace(line[indent+width:]) != "" {
				itemCol = indent + width
			}
		}
		if changed {
			b.WriteString(line)
			if found {
				b.WriteByte('\n')
			}
		}
		rest = after
	}
	if !changed {
		return md
	}
	return b.String()
}

// atLeastFields reports whether len(strings.Fields(s)) >= n, without
// building the fields.
func atLeastFields(s string, n int) bool {
	k := 0
	for range strings.FieldsSeq(s) {
		if k++; k >= n {
			return true
		}
	}
	return k >= n
}
