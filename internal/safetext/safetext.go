// Package safetext makes page-derived text safe to print and to hand to a
// model: no terminal control sequences, no invalid UTF-8, bounded length.
//
// A page's title or text can carry C0/C1 control characters (ESC, BEL,
// CSI): printed raw by a CLI they retitle the terminal (OSC 0), clear the
// screen (CSI 2J) or rewrite earlier lines (CR); in a model's context they
// are noise at best. Gatehouse passes every page-derived string through
// Clean before it returns it.
package safetext

import (
	"strings"
	"unicode/utf8"
)

// Clean returns s without control characters: C0 controls (U+0000–U+001F)
// other than tab and line feed, DEL (U+007F) and C1 controls
// (U+0080–U+009F, which include the 8-bit CSI U+009B) are removed; CR LF
// becomes LF and a lone CR is removed; invalid UTF-8 becomes U+FFFD (one
// per invalid sequence, as strings.ToValidUTF8). Text without any of those
// is returned unchanged without allocating.
func Clean(s string) string {
	if isClean(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if !drop(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || r >= 0x80 && r <= 0x9f {
				return false
			}
			i += n - 1
		}
	}
	return true
}

func drop(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f
}

// Line is Clean for one-line fields (a title, a link text, a meta value):
// tabs and line feeds become spaces too, runs of white space collapse to
// one and the ends are trimmed.
func Line(s string) string {
	s = Clean(s)
	if !strings.ContainsAny(s, "\t\n") && !strings.Contains(s, "  ") && strings.TrimSpace(s) == s {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// Cap returns s cut to at most max characters (code points, not bytes), on
// a code-point boundary, with "…" as the last character when it was cut
// (the result is then max characters including the ellipsis). max ≤ 0
// returns s unchanged.
func Cap(s string, max int) string {
	if max <= 0 || len(s) <= max { // len in bytes ≥ count of code points
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			if utf8.RuneCountInString(s[i:]) <= 1 {
				return s
			}
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// Escape returns s with every control character Clean would remove
// written as a visible escape instead ("\x1b" becomes "\\x1b", U+009B
// "\\u009b"): for echoing what a user typed (a URL given to `gatehouse
// check`) where dropping the character would hide that it was there.
func Escape(s string) string {
	if isClean(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 && r != '\t' && r != '\n' || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		case r >= 0x80 && r <= 0x9f:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
