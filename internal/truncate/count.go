package truncate

import (
	"math/bits"
	"unicode/utf8"
)

// CountChars returns the number of chars in s: Unicode code points, as
// Python's len counts them, with each invalid byte counting as one char
// (utf8.RuneCountInString semantics). It is a faster equivalent of
// utf8.RuneCountInString for the large pages this package handles.
func CountChars(s string) int {
	if !utf8.ValidString(s) {
		return utf8.RuneCountInString(s)
	}
	return countValid(s)
}

// countValid counts the runes of valid UTF-8: every byte that is not a
// continuation byte (10xxxxxx) starts a rune. Eight bytes are examined per
// step.
func countValid(s string) int {
	const hi = 0x8080808080808080
	cont := 0
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&hi == 0 {
			continue // all ASCII
		}
		// bit 7 set and bit 6 clear, per byte.
		cont += bits.OnesCount64(w & ^(w << 1) & hi)
	}
	for ; i < len(s); i++ {
		if s[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return len(s) - cont
}
