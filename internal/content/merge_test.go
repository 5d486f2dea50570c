package content

import (
	"strings"
	"testing"
)

// Four prose paragraphs with no 4-word sequence in common.
var (
	paraA = "Alpha explains in plain words how the parser reads a page, which parts it keeps for the reader and why menus are dropped before anything else happens to the text."
	paraB = "Bravo tells the story of a small bakery that opened near the harbour last spring, where fishermen now queue at dawn for warm rye bread and strong coffee."
	paraC = "Charlie covers the weather: a cold front moves east over the mountains tonight, bringing snow to high passes and freezing rain to several valleys below them."
	paraD = "Delta lists results from the regional chess tournament, won by a teenager who had never played outside her village club until this remarkable autumn season."
)

func TestMergeExtractions(t *testing.T) {
	a, b, c, d := paraA, paraB, paraC, paraD
	related := "- [Other story one](https://x.example/1)\n- [Other story two](https://x.example/2)"
	cases := []struct {
		name               string
		primary, secondary string
		want               string
	}{
		{
			name:      "agreement is kept in the primary's order",
			primary:   a + "\n\n" + b,
			secondary: a + "\n\n" + b,
			want:      a + "\n\n" + b,
		},
		{
			name:      "primary-only boilerplate is dropped",
			primary:   a + "\n\n" + b + "\n\n### Sign up for our newsletter\n\n" + related,
			secondary: a + "\n\n" + b,
			want:      a + "\n\n" + b,
		},
		{
			name:      "a paragraph only the secondary found goes back in place",
			primary:   a + "\n\n" + c,
			secondary: a + "\n\n" + b + "\n\n" + c,
			want:      a + "\n\n" + b + "\n\n" + c,
		},
		{
			name:      "secondary-only link lists and short lines are not added",
			primary:   a + "\n\n" + b,
			secondary: "Photo: Someone\n\n" + a + "\n\n" + related + "\n\n" + b + "\n\nRead more",
			want:      a + "\n\n" + b,
		},
		{
			name:      "the article's end found only by the secondary is added up to the related box",
			primary:   a,
			secondary: a + "\n\n" + b + "\n\n" + c + "\n\n" + related + "\n\n" + d,
			want:      a + "\n\n" + b + "\n\n" + c,
		},
		{
			name:      "images between shared blocks come along",
			primary:   a + "\n\n" + b,
			secondary: a + "\n\n![Chart](https://x.example/c.png)\n\n" + b,
			want:      a + "\n\n![Chart](https://x.example/c.png)\n\n" + b,
		},
		{
			name:      "primary code blocks are kept even if the secondary lost them",
			primary:   a + "\n\n```go\nx := 1\n\n\ny := 2\n```\n\n" + b,
			secondary: a + "\n\n" + b,
			want:      a + "\n\n```go\nx := 1\n\n\ny := 2\n```\n\n" + b,
		},
		{
			name:      "disjoint answers: the one that reads like an article wins",
			primary:   related + "\n- [Three](https://x.example/3)\n- [Four](https://x.example/4)",
			secondary: c,
			want:      c,
		},
		{
			// Section headings trafilatura dropped go back above the
			// section they open (with a lead image between them), in
			// place even when a primary-only block precedes it.
			name:      "section headings only the secondary found go back above their section",
			primary:   a + "\n\n" + b + "\n\nA short note the primary alone kept.\n\n" + c,
			secondary: a + "\n\n### Bakery\n\n" + b + "\n\n### Weather\n\n#### Tonight\n\n![Map](https://x.example/m.png)\n\n" + c,
			want:      a + "\n\n### Bakery\n\n" + b + "\n\nA short note the primary alone kept.\n\n### Weather\n\n#### Tonight\n\n![Map](https://x.example/m.png)\n\n" + c,
		},
		{
			name:      "a heading over prose only the secondary found comes with it",
			primary:   a + "\n\n" + c,
			secondary: a + "\n\n### Bakery\n\n" + b + "\n\n" + c,
			want:      a + "\n\n### Bakery\n\n" + b + "\n\n" + c,
		},
		{
			// Headings do not count against a run's prose: the section
			// is added back with them.
			name:      "section headings do not make a run boilerplate",
			primary:   a + "\n\n" + c,
			secondary: a + "\n\n### The small bakery down by the old harbour\n\n" + b + "\n\n### The weather over the mountains tonight\n\n" + c,
			want:      a + "\n\n### The small bakery down by the old harbour\n\n" + b + "\n\n### The weather over the mountains tonight\n\n" + c,
		},
		{
			// A heading closing the answer, or a linked one (a teaser),
			// opens no section of the article.
			name:      "headings before nothing or made of links are not added",
			primary:   a + "\n\n" + b,
			secondary: a + "\n\n### [Other story](https://x.example/o)\n\n" + b + "\n\n### Read next",
			want:      a + "\n\n" + b,
		},
		{
			name:      "empty secondary",
			primary:   a,
			secondary: "",
			want:      a,
		},
		{
			name:      "empty primary",
			primary:   " \n",
			secondary: b,
			want:      b,
		},
		{
			name:      "short texts are compared by containment",
			primary:   "make install",
			secondary: "```\nmake install\n```",
			want:      "make install",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.TrimSpace(mergeExtractions(tc.primary, tc.secondary))
			if got != tc.want {
				t.Errorf("got:\n%s\n\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestSplitBlocksKeepsFences(t *testing.T) {
	md := "Intro\n\n```\na\n\n\nb\n```\n\n~~~~sh\n# x\n\n~~~\n~~~~\n\n- item\n  - nested"
	var got []string
	for _, b := range splitBlocks(md) {
		got = append(got, b.text)
	}
	want := []string{"Intro", "```\na\n\n\nb\n```", "~~~~sh\n# x\n\n~~~\n~~~~", "- item\n  - nested"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestTokenizeMatchesScorer(t *testing.T) {
	got := strings.Join(tokenize("Hello, wörld! 3.14 snake_case 한국어 ab—cd ²x"), " ")
	if want := "Hello wörld 3 14 snake_case 한국어 ab cd ²x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestMergeOrderedListOnce (hostile review session 5, D15): an ordered list
// the two extractors number differently (one keeps <ol start="3">, the
// other counts from 1) is one shared block, not two.
func TestMergeOrderedListOnce(t *testing.T) {
	page := `<html><head><title>MD</title></head><body><article>
<h1>Main Title</h1>
<p>Para with <strong>bold</strong>, <em>italic</em>, <code>code</code>, a <a href="/rel?x=1&amp;y=2">relative link</a> and an entity &amp; &lt;tag&gt;.</p>
<p>Text with *stars* and _underscores_ and # not heading and 1. not list and [brackets](not link).</p>
<ul><li>One<ul><li>Nested A</li><li>Nested B</li></ul></li><li>Two</li></ul>
<ol start="3"><li>Third</li><li>Fourth</li></ol>
<p>Final paragraph.</p>
</article></body></html>`
	doc, err := Convert([]byte(page), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(doc.Markdown, "Third"); n != 1 {
		t.Fatalf("the ordered list appears %d times:\n%s", n, doc.Markdown)
	}
}
