package content

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestVisibleTextScanners checks the hand-written scanners of visibleText
// against the regexps they replace, on random strings over the characters
// that matter (and a multi-byte rune).
func TestVisibleTextScanners(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"!", "[", "]", "(", ")", "a", " ", "\n", "é", "!["}
	for i := 0; i < 200000; i++ {
		n := rng.Intn(24)
		var s string
		for j := 0; j < n; j++ {
			s += alphabet[rng.Intn(len(alphabet))]
		}
		if got, want := dropMDImages(s), reMDImage.ReplaceAllString(s, ""); got != want {
			t.Fatalf("dropMDImages(%q) = %q, regexp gives %q", s, got, want)
		}
		if got, want := dropLinkDests(s), reLinkDest.ReplaceAllString(s, "]"); got != want {
			t.Fatalf("dropLinkDests(%q) = %q, regexp gives %q", s, got, want)
		}
	}
}

// TestTokenizeMatchesFields checks the hand-written tokenizer against the
// definition it replaces (strings.FieldsFunc over !isTokenRune) on random
// strings over ASCII, multi-byte letters and digits, a symbol, and
// invalid UTF-8; countTokens and appendTokens must agree with it.
func TestTokenizeMatchesFields(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	alphabet := []string{"a", "Z", "9", "_", " ", "-", "\n", "é", "日", "٣", "€", "\xff", "\xe6\x97", "\u00a0"}
	for i := 0; i < 100000; i++ {
		n := rng.Intn(16)
		var s string
		for j := 0; j < n; j++ {
			s += alphabet[rng.Intn(len(alphabet))]
		}
		want := strings.FieldsFunc(s, func(r rune) bool { return !isTokenRune(r) })
		if got := tokenize(s); !slices.Equal(got, want) {
			t.Fatalf("tokenize(%q) = %q, want %q", s, got, want)
		}
		if got := countTokens(s); got != len(want) {
			t.Fatalf("countTokens(%q) = %d, want %d", s, got, len(want))
		}
		if got := appendTokens([]string{"x"}, s); !slices.Equal(got[1:], want) || got[0] != "x" {
			t.Fatalf("appendTokens(x, %q) = %q, want x then %q", s, got, want)
		}
	}
}

// TestTokenizeAllocations: tokenize builds its result in one allocation
// and countTokens in none (they run on every block of both extractions,
// and on the page's text for records and the container).
func TestTokenizeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	text := strings.Repeat("Tokens of a long paragraph, with words — and numbers 42; ", 40)
	if n := testing.AllocsPerRun(20, func() { _ = tokenize(text) }); n > 1 {
		t.Errorf("tokenize: %.0f allocations, want 1", n)
	}
	if n := testing.AllocsPerRun(20, func() { _ = countTokens(text) }); n > 0 {
		t.Errorf("countTokens: %.0f allocations, want 0", n)
	}
}
