package content

import (
	"maps"
	"slices"
	"testing"
	"unicode"
)

// TestNewBlockShinglesAreTheSet: a block's shingles are the distinct
// hashes shingles returns, sorted, whatever the guards in front of the
// regexps skip (numbered lines, images, links, non-ASCII words).
func TestNewBlockShinglesAreTheSet(t *testing.T) {
	for _, text := range []string{
		"",
		"one",
		"one two",
		"1. first item of a list\n2) second item",
		"a [link text](http://x/y) and ![alt](i.png) after a b c a b c a b c",
		"Ünïcödé wörds, ångström — 日本語のテキスト and ascii_words 42",
		"version 3.14 is not a list item, 7) is",
	} {
		b := newBlock(text)
		set := shingles(tokenize(visibleText(reOLMarker.ReplaceAllString(text, ""))))
		want := slices.Sorted(maps.Keys(set))
		if !slices.Equal(b.shingles, want) {
			t.Errorf("%q: shingles %v, want %v", text, b.shingles, want)
		}
		if got, want := b.tokens, tokenize(reLinkDest.ReplaceAllString(reMDImage.ReplaceAllString(reOLMarker.ReplaceAllString(text, ""), ""), "]")); !slices.Equal(got, want) {
			t.Errorf("%q: tokens %q, want %q", text, got, want)
		}
	}
	for r := rune(0); r < 0x80; r++ {
		if got, want := isTokenRune(r), r == '_' || unicodeLetterOrNumber(r); got != want {
			t.Errorf("isTokenRune(%q) = %v, want %v", r, got, want)
		}
	}
}

// TestSplitMemo: the memo returns the blocks splitBlocks returns, for
// either of the last two texts and for a third one.
func TestSplitMemo(t *testing.T) {
	var m splitMemo
	texts := []string{"a b c\n\nd e f", "x y\n\n```\ncode\n\nmore\n```", "a b c\n\nd e f", "third text\n\nhere"}
	for _, s := range texts {
		got, want := m.split(s), splitBlocks(s)
		if len(got) != len(want) {
			t.Fatalf("%q: %d blocks, want %d", s, len(got), len(want))
		}
		for i := range got {
			if got[i].text != want[i].text || !slices.Equal(got[i].shingles, want[i].shingles) {
				t.Fatalf("%q: block %d differs", s, i)
			}
		}
	}
	var nilMemo *splitMemo
	if got := nilMemo.split("p q"); len(got) != 1 {
		t.Fatalf("nil memo: %d blocks", len(got))
	}
}

func unicodeLetterOrNumber(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// TestRecordsCoverMemo: cover answers from its memo what coverOf computes,
// for each text asked about, however often and in whatever order.
func TestRecordsCoverMemo(t *testing.T) {
	r := &records{
		sets:   []map[uint64]struct{}{shingles(tokenize("alpha beta gamma delta")), shingles(tokenize("one two three four"))},
		tokens: []int{4, 4},
		total:  8,
	}
	texts := []string{"alpha beta gamma delta", "one two three four and more", "nothing shared here", "alpha beta gamma delta"}
	for range 2 {
		for _, md := range texts {
			if got, want := r.cover(md), r.coverOf(md); got != want {
				t.Fatalf("cover(%q) = %v, want %v", md, got, want)
			}
		}
	}
	if len(r.covered) != 3 {
		t.Fatalf("memo holds %d texts, want 3", len(r.covered))
	}
}
