package content

import (
	"math/rand"
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
