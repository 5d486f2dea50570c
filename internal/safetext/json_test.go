package safetext

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// escapeUnits writes code units as a JSON string the way Chromium's CDP
// writer does: ASCII as is (quote and backslash escaped), every other unit
// as a \uXXXX escape, lone surrogates included.
func escapeUnits(units []uint16, upper bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, u := range units {
		switch {
		case u == '"' || u == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(u))
		case u >= 0x20 && u < 0x7f:
			b.WriteByte(byte(u))
		case upper:
			fmt.Fprintf(&b, `\u%04X`, u)
		default:
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// loneEscape reports whether s (JSON text) holds a \u escape of a surrogate
// that is not half of an escaped pair: the strict reading of RFC 8259 §8.2
// that encoding/json/v2 and many other decoders apply.
func loneEscape(s string) bool {
	units := []rune{}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			continue
		}
		var u rune
		if s[i+1] != 'u' || i+6 > len(s) || !isHex4(s[i+2:i+6]) {
			i++
			continue
		}
		fmt.Sscanf(s[i+2:i+6], "%04x", &u)
		units = append(units, u)
		i += 5
		if !utf16.IsSurrogate(u) {
			units = units[:0]
			continue
		}
		if u >= 0xDC00 {
			if len(units) < 2 || units[len(units)-2] < 0xD800 || units[len(units)-2] >= 0xDC00 {
				return true
			}
			units = units[:0]
			continue
		}
		if i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
			return true
		}
	}
	return false
}

func isHex4(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// Strings of random UTF-16 code units (lone surrogates, pairs, quotes,
// backslashes, the letters of an escape) come out of JSON as encoding/json
// and utf16.Decode read them — U+FFFD for each lone surrogate — with no
// lone-surrogate escape left and valid UTF-8 throughout.
func TestJSONLoneSurrogates(t *testing.T) {
	pool := []uint16{'a', 'u', 'd', '8', '3', '\\', '"', 0xD83D, 0xDE00, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE9, 0xFFFD, 0x2028}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 5000 {
		units := make([]uint16, rng.IntN(12))
		for i := range units {
			units[i] = pool[rng.IntN(len(pool))]
		}
		in := `{"k` + escapeUnits(units, n%2 == 0)[1:] + `:[` + escapeUnits(units, n%3 == 0) + `,1.50]}`
		out := string(JSON([]byte(in)))
		want := string(utf16.Decode(units)) // lone surrogates → U+FFFD
		var got map[string][]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s → %s: %v", in, out, err)
		}
		if v, ok := got["k"+want]; !ok || v[0] != want || v[1] != 1.5 {
			t.Fatalf("%s → %s: decodes to %q, want key and value %q", in, out, got, want)
		}
		if loneEscape(out) || !utf8.ValidString(out) {
			t.Fatalf("%s → %s: a lone surrogate is left", in, out)
		}
		if !strings.Contains(out, `1.50`) {
			t.Fatalf("%s → %s: the number was rewritten", in, out)
		}
	}
}

func TestJSONKeepsWellFormedTextAndMendsBytes(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"pair kept", `"\ud83d\ude00"`, `"\ud83d\ude00"`},
		{"escaped backslash is no escape", `"\\ud83d"`, `"\\ud83d"`},
		{"lone high", `"a\ud83d b"`, `"a\ufffd b"`},
		{"lone high at end", `"a\ud83d"`, `"a\ufffd"`},
		{"lone low", `"\ude00"`, `"\ufffd"`},
		{"two highs", `"\ud83d\ud83d\ude00"`, `"\ufffd\ud83d\ude00"`},
		{"invalid UTF-8 byte", "\"a\xffb\"", "\"a\uFFFDb\""},
		{"plain", `{"a":[1,true,null,"é"]}`, `{"a":[1,true,null,"é"]}`},
		{"not JSON", `\u12`, `\u12`},
	} {
		if got := string(JSON([]byte(tc.in))); got != tc.want {
			t.Errorf("%s: JSON(%s) = %s, want %s", tc.name, tc.in, got, tc.want)
		}
	}
}

func FuzzJSON(f *testing.F) {
	f.Add(`"a\ud83d b"`)
	f.Add(`{"k\udc00":"\\ud83d\ud83d\ude00"}`)
	f.Fuzz(func(t *testing.T, in string) {
		out := JSON([]byte(in))
		if !utf8.Valid(out) || loneEscape(string(out)) {
			t.Fatalf("JSON(%q) = %q", in, out)
		}
		var a, b any
		if utf8.ValidString(in) && json.Unmarshal([]byte(in), &a) == nil {
			if err := json.Unmarshal(out, &b); err != nil || fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("JSON(%q) = %q decodes to %v (%v), want %v", in, out, b, err, a)
			}
		}
	})
}
