package content

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
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

// TestSplitBlocksMatchesLines checks splitBlocks, which slices the
// markdown, against the line-joining definition it replaces, on random
// markdown over blank lines, fences (``` and ~~~, indented, unclosed),
// spaces and text.
func TestSplitBlocksMatchesLines(t *testing.T) {
	ref := func(md string) []string {
		var blocks []string
		var cur []string
		fence := ""
		flush := func() {
			if len(cur) > 0 {
				if t := strings.Trim(strings.Join(cur, "\n"), "\n"); strings.TrimSpace(t) != "" {
					blocks = append(blocks, t)
				}
				cur = cur[:0]
			}
		}
		for _, line := range strings.Split(md, "\n") {
			trimmed := strings.TrimLeft(line, " ")
			if fence != "" {
				cur = append(cur, line)
				if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
					fence = ""
					flush()
				}
				continue
			}
			if f := markdown.FenceOpener(trimmed); f != "" {
				flush()
				fence = f
				cur = append(cur, line)
				continue
			}
			if strings.TrimSpace(line) == "" {
				flush()
				continue
			}
			cur = append(cur, line)
		}
		flush()
		return blocks
	}
	rng := rand.New(rand.NewSource(3))
	parts := []string{"\n", "\n\n", " ", "```", "~~~", "  ```go", "text", "- item", "1. one", "\t"}
	for i := 0; i < 50000; i++ {
		var b strings.Builder
		for range rng.Intn(12) {
			b.WriteString(parts[rng.Intn(len(parts))])
		}
		md := b.String()
		var got []string
		for _, bl := range splitBlocks(md) {
			got = append(got, bl.text)
		}
		if want := ref(md); !slices.Equal(got, want) {
			t.Fatalf("splitBlocks(%q) = %q, want %q", md, got, want)
		}
		for j, bl := range splitBlocksWith(md, newTextBlock) {
			if full := newBlock(bl.text); !slices.Equal(bl.tokens, full.tokens) || bl.shingles != nil {
				t.Fatalf("newTextBlock block %d of %q: tokens %q, want %q (and no shingles)", j, md, bl.tokens, full.tokens)
			}
		}
	}
}

// TestSplitBlocksSlicesMarkdown: a block's text is a slice of the
// markdown, not a copy joined from its lines (splitBlocks runs on both
// answers and the merge of every page).
func TestSplitBlocksSlicesMarkdown(t *testing.T) {
	md := "# Title\n\nFirst line\nsecond line\n\n```go\nx := 1\n\ny := 2\n```\n\n- a\n- b\n"
	lo := uintptr(unsafe.Pointer(unsafe.StringData(md)))
	bs := splitBlocks(md)
	if len(bs) != 4 {
		t.Fatalf("%d blocks, want 4: %+v", len(bs), bs)
	}
	for _, b := range bs {
		p := uintptr(unsafe.Pointer(unsafe.StringData(b.text)))
		if p < lo || p+uintptr(len(b.text)) > lo+uintptr(len(md)) {
			t.Errorf("block %q is a copy, not a slice of the markdown", b.text)
		}
	}
}
