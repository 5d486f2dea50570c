package safetext

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON returns the JSON text raw with every string in it made well-formed
// Unicode: a \u escape of a lone UTF-16 surrogate (a high surrogate
// \uD800–\uDBFF not followed by an escaped low one, or a low surrogate
// \uDC00–\uDFFF not preceded by a high one) becomes \ufffd, and each run
// of invalid UTF-8 bytes becomes one U+FFFD (as strings.ToValidUTF8, and
// Clean). Other
// escapes (a pair that makes one code point, "\\ud83d", which is a
// backslash and the letters "ud83d") and the rest of the text are kept byte
// for byte; raw itself is returned when nothing changes.
//
// JavaScript strings are UTF-16 and may hold a lone surrogate ("\ud83d"
// alone, half of an emoji cut in two); Chromium writes one into CDP JSON as
// that \u escape, and JSON.stringify does too. Decoded into a Go string,
// encoding/json and chromedp's decoder already give U+FFFD; a raw JSON value
// handed on as it came (an evaluation result) would carry the escape to the
// agent, where a strict decoder refuses it or a lenient one makes invalid
// UTF-8. The result decodes, with any decoder, to what encoding/json
// decodes raw to (when raw is valid UTF-8).
func JSON(raw []byte) []byte {
	if !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	var out []byte // nil until the first change
	last := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // an escaped character ("\\", "\""): never the start of another escape
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			i++
			continue
		}
		if !utf16.IsSurrogate(r) {
			i += 5
			continue
		}
		if r < 0xDC00 { // a high surrogate: fine when an escaped low one follows
			if r2, ok := escapedUnit(raw, i+6); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
				i += 11
				continue
			}
		}
		out = append(out, raw[last:i]...)
		out = append(out, `\ufffd`...)
		last = i + 6
		i += 5
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// escapedUnit returns the code unit of a \uXXXX escape at b[i:].
func escapedUnit(b []byte, i int) (rune, bool) {
	if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	return hex4(b, i+2)
}

// hex4 parses the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
