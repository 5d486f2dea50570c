package markdown

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestSigStatsKeepsOnlyNamed: the bottom-up pass of the nesting index
// sums every element into its ancestors but keeps the stats of the
// elements asked for only (a map entry per element of the page cost
// more than the rest of collectNested), and the text signature of a kept
// element is its non-space runes, whatever the elements between.
func TestSigStatsKeepsOnlyNamed(t *testing.T) {
	var b strings.Builder
	b.WriteString("<body><blockquote id=q>")
	for range 500 {
		b.WriteString("<div><span>a b</span>\u00a0<em>c\td</em></div>")
	}
	b.WriteString("</blockquote><ul><li>x</li></ul></body>")
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	stats := sigStats(doc, nestContainers)
	if len(stats) != 3 { // the blockquote, the ul, the li
		t.Errorf("%d stats kept, want 3 (blockquote, ul, li)", len(stats))
	}
	for n, s := range stats {
		if !nestContainers[n.Data] {
			t.Errorf("stats kept for <%s>", n.Data)
		}
		if n.Data == "blockquote" {
			want := strings.Repeat("abcd", 500)
			var h uint64
			for _, r := range want {
				h = h*sigBase + uint64(r)
			}
			if s.sig.n != len(want) || s.sig.hash != h {
				t.Errorf("blockquote signature %+v, want %d runes, hash %x", s.sig, len(want), h)
			}
		}
	}
	if a := testing.AllocsPerRun(5, func() { _ = collectNested(doc) }); a > 20 {
		t.Errorf("collectNested: %.0f allocations on a 2,000-element quote, want at most 20", a)
	}
}
