package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
)

// Escaping: only where GFM would otherwise change the meaning.
//
// html-to-markdown's "smart" escaping backslash-escapes every '_', '~' and
// '[' that could in theory start markup, and its base plugin writes every
// '<' and '>' of the text as "&lt;" / "&gt;". An agent copies identifiers
// and URLs out of the markdown, so Convert undoes what GFM does not
// need (CommonMark 0.31 §6.2 emphasis, GFM §6.5 strikethrough, §6.3
// links, §4.6 HTML blocks):
//   - "\_" between two letters or digits: an intraword '_' can neither
//     open nor close emphasis (MAX_RETRY_COUNT, path_with_underscores);
//   - "\~" when it is the only '~' of its line and not a fence: a single
//     tilde needs a partner to strike through (~/notes);
//   - "\[" not at the start of a line when the next ']' of the line is
//     not followed by '(', '[' or ':' (no link, reference or definition
//     can form; a line-start '[' could be a task box or a definition);
//   - text '>' is written as is, as "\>" only where it would open a block
//     quote (first on its line, after indentation, list markers and quote
//     markers); text '<' as is, as "\<" when a letter, '/', '!' or '?'
//     follows (it could open raw HTML or an autolink);
//   - a '&' of the text that would read as a character reference
//     ("&amp;", "&#62;") is written "\&": every entity of the page is
//     decoded exactly once, and what the page shows as "&gt;" stays
//     "&gt;" when rendered.
//
// Code spans and fenced code blocks are never touched.

// Placeholders for text '<', '>' and a reference-like '&', set by
// markTextSpecials before the base plugin turns '<' and '>' into entities
// and resolved by fixEscapes. Private-use code points keep them clear of
// real text.
const (
	ltMark  = "\uE003"
	gtMark  = "\uE004"
	ampMark = "\uE005"
)

// escapePlugin registers markTextSpecials with the converter.
type escapePlugin struct{}

func (escapePlugin) Name() string { return "gatehouse-escape" }

func (escapePlugin) Init(conv *converter.Converter) error {
	conv.Register.TextTransformer(func(_ converter.Context, content string) string {
		return markTextSpecials(content)
	}, converter.PriorityEarly)
	return nil
}

// markTextSpecials replaces the '<', '>' and reference-like '&' of a text
// node by their placeholders.
func markTextSpecials(s string) string {
	if !strings.ContainsAny(s, "<>&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '<':
			b.WriteString(ltMark)
		case c == '>':
			b.WriteString(gtMark)
		case c == '&' && isReferenceAt(s, i):
			b.WriteString(ampMark)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isReferenceAt reports whether s[i] ('&') starts something a CommonMark
// parser would read as a character reference: "&name;", "&#digits;" or
// "&#xhex;" (§6.2), at most 32 characters long.
func isReferenceAt(s string, i int) bool {
	j := i + 1
	if j < len(s) && s[j] == '#' {
		j++
		if j < len(s) && (s[j] == 'x' || s[j] == 'X') {
			j++
		}
	}
	start := j
	for j < len(s) && j-i <= 32 && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
		j++
	}
	return j > start && j < len(s) && s[j] == ';'
}

// fixEscapes rewrites the converter's output as described at the top of
// this file. Fenced code blocks and code spans are copied unchanged.
func fixEscapes(md string) string {
	if !strings.ContainsAny(md, `\`+ltMark+gtMark+ampMark) {
		return md
	}
	var b strings.Builder
	b.Grow(len(md))
	fence := ""
	rest := md
	for rest != "" {
		line, after, found := strings.Cut(rest, "\n")
		trimmed := strings.TrimLeft(line, " >")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
			}
			b.WriteString(line)
		case FenceOpener(trimmed) != "" && !strings.Contains(line, gtMark):
			fence = FenceOpener(trimmed)
			b.WriteString(line)
		default:
			b.WriteString(fixLine(line))
		}
		if found {
			b.WriteByte('\n')
		}
		rest = after
	}
	return b.String()
}

// fixLine applies fixEscapes to one line outside fenced code.
func fixLine(line string) string {
	var b strings.Builder
	b.Grow(len(line))
	lead := blockPrefixLen(line)
	tildes := strings.Count(line, "~")
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == '`':
			// A code span: copied to its closing run of as many
			// backticks, or the run alone when none closes it.
			n := 1
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			end := ClosingTicks(line, i+n, n)
			if end < 0 {
				b.WriteString(line[i : i+n])
				i += n
				continue
			}
			b.WriteString(line[i : end+n])
			i = end + n
			continue
		case c == '\\' && i+1 < len(line):
			next := line[i+1]
			drop := false
			switch next {
			case '_':
				drop = WordByteBefore(line, i) && WordByteAfter(line, i+2)
			case '~':
				drop = tildes == 1 && i > lead
			case '[':
				drop = i > lead && !linkCanForm(line, i+2)
			}
			if drop {
				b.WriteByte(next)
			} else {
				b.WriteString(line[i : i+2])
			}
			i += 2
			continue
		case strings.HasPrefix(line[i:], gtMark):
			if i <= lead {
				b.WriteString(`\>`)
			} else {
				b.WriteByte('>')
			}
			i += len(gtMark)
			continue
		case strings.HasPrefix(line[i:], ltMark):
			j := i + len(ltMark)
			if j < len(line) && (isASCIILetter(line[j]) || strings.IndexByte("/!?", line[j]) >= 0) {
				b.WriteString(`\<`)
			} else {
				b.WriteByte('<')
			}
			i = j
			continue
		case strings.HasPrefix(line[i:], ampMark):
			b.WriteString(`\&`)
			i += len(ampMark)
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// blockPrefixLen returns the length of the line's block syntax prefix:
// indentation, block quote markers and list item markers. A '>' of the
// text within it would open a block quote.
func blockPrefixLen(line string) int {
	i := 0
	for {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i < len(line) && line[i] == '>' {
			i++
			continue
		}
		if _, w, _ := ListMarker(line[i:]); w > 0 {
			i += w
			continue
		}
		return i
	}
}

// ClosingTicks returns the index of the first run of exactly n backticks
// in line from i, or -1.
func ClosingTicks(line string, i, n int) int {
	for i < len(line) {
		j := strings.IndexByte(line[i:], '`')
		if j < 0 {
			return -1
		}
		j += i
		k := j
		for k < len(line) && line[k] == '`' {
			k++
		}
		if k-j == n {
			return j
		}
		i = k
	}
	return -1
}

// linkCanForm reports whether, after an opening '[' at line[i-1], a link,
// reference or definition could form: the next unescaped ']' is followed
// by '(', '[' or ':'. (A ']' on a later line is not looked for: the
// converter writes a link on one line.)
func linkCanForm(line string, i int) bool {
	for ; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '[':
			return true // nested brackets: leave the escape
		case ']':
			return i+1 < len(line) && strings.IndexByte("([:", line[i+1]) >= 0
		}
	}
	return false
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// WordByteBefore reports whether the rune ending at line[i] is a letter
// or digit.
func WordByteBefore(line string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(line[:i])
	return i > 0 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// WordByteAfter reports whether the rune starting at line[i] is a letter
// or digit.
func WordByteAfter(line string, i int) bool {
	r, _ := utf8.DecodeRuneInString(line[i:])
	return i < len(line) && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
