package dom

import (
	"math/rand"
	"strings"
	"testing"
)

// TestCollapseSpace checks CollapseSpace against its definition
// (strings.Fields joined by single spaces) on random strings over ASCII
// and Unicode white space, letters and invalid UTF-8.
func TestCollapseSpace(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	alphabet := []string{" ", "  ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u2003", "\u0085", "a", "é", "\xff", "\x1f"}
	for i := 0; i < 100000; i++ {
		var b strings.Builder
		for range rng.Intn(10) {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		s := b.String()
		if got, want := CollapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("CollapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestCollapseSpaceAllocations: a string with nothing to collapse comes
// back without an allocation (most text nodes and attribute values), and
// one that needs collapsing costs one.
func TestCollapseSpaceAllocations(t *testing.T) {
	plain := strings.Repeat("A sentence of an article with words in it. ", 20)
	plain = plain[:len(plain)-1]
	if n := testing.AllocsPerRun(20, func() { _ = CollapseSpace(plain) }); n != 0 {
		t.Errorf("collapsed text: %.0f allocations, want 0", n)
	}
	messy := "  A  sentence\n\tof an   article  "
	if n := testing.AllocsPerRun(20, func() { _ = CollapseSpace(messy) }); n > 1 {
		t.Errorf("text to collapse: %.0f allocations, want 1", n)
	}
}
