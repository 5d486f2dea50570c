package content

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Markdown fidelity (issue 6 items 8–10): each case is a small handwritten
// article run through the whole HTML→markdown path (both extractors and
// the merge), with what the markdown must and must not hold.

func convertArticle(t *testing.T, inner string) string {
	t.Helper()
	doc, err := HTMLToMarkdown(article("Fidelity", inner), mustURL(t, "https://example.com/post"))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Markdown
}

func assertHas(t *testing.T, md string, want, notWant []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("missing %q in:\n%s", w, md)
		}
	}
	for _, w := range notWant {
		if strings.Contains(md, w) {
			t.Errorf("unexpected %q in:\n%s", w, md)
		}
	}
}

// Item 8: the white space around inline elements inside list items and
// definitions survives extraction.
func TestInlineSpacesInListItems(t *testing.T) {
	md := convertArticle(t, `<ul><li>Write to an <em>outbox</em> table first, then publish.</li>
<li>Run <code>make check</code> before you <a href="/push">push</a> a branch.</li>
<li>This is <strong>required</strong> for every <b>release</b> build.</li></ul>
<dl><dt>Relay</dt><dd>Described by <a href="/relay">the relay page</a> as the sender.</dd></dl>`)
	assertHas(t, md, []string{
		"an *outbox* table",
		"Run `make check` before you [push](https://example.com/push) a branch",
		"This is **required** for every **release** build",
		"Described by [the relay page](https://example.com/relay) as the sender",
	}, []string{"*outbox*table", "`make check`before", ")a branch", "**required**for"})
}

func TestKeepInlineGaps(t *testing.T) {
	root := parseFragment(t, "<li>an <em>x</em> table <code>y</code>\n<a>z</a> <b>w</b></li>")
	polishTree(root)
	var texts []string
	walk(root, func(n *html.Node) bool {
		if n.Type == html.TextNode {
			texts = append(texts, n.Data)
		}
		return true
	})
	want := []string{"an" + gapMark, "x", gapMark + "table" + gapMark, "y", gapMark, "z", gapMark, "w"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("texts %q, want %q", texts, want)
	}
}

// Item 9: escapes only where GFM needs them; entities decoded once.
func TestEscapingOnlyWhereNeeded(t *testing.T) {
	md := convertArticle(t, `<p>Set MAX_RETRY_COUNT in https://example.com/path_with_underscores and keep notes in ~/notes; match [a-z]+ when 10 &gt; 5 &amp;&amp; 2 &lt; 3.</p>
<table><tr><th>Rule</th><th>Key</th></tr><tr><td>10 &gt; 5</td><td><kbd>Ctrl &amp; C</kbd> and <code>a &lt; b</code></td></tr><tr><td>x &amp; y</td><td>z</td></tr></table>
<p>Keep a*b*c and _lead_ literal, the tag &lt;div&gt; as text and the entity text &amp;gt; as shown.</p>
<p>&gt; not a quote, and [x](y) is not a link.</p>`)
	assertHas(t, md, []string{
		"MAX_RETRY_COUNT", "https://example.com/path_with_underscores", "~/notes", "[a-z]+",
		"10 > 5 && 2 < 3",
		"| 10 > 5 |", "`Ctrl & C`", "`a < b`", "x & y",
		`a\*b\*c`, `\_lead_`, `\<div>`, `\&gt; as shown`,
		`\> not a quote`, `\[x](y)`,
	}, []string{`MAX\_`, `path\_with`, `\~/notes`, `\[a-z]`, "&gt; 5", "&lt;", "&amp;"})
}

func TestFixEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`MAX\_RETRY`:            `MAX_RETRY`,
		`a \_b\_ c`:             `a \_b\_ c`,
		`x\\\_y`:                `x\\\_y`, // a literal backslash, then an escaped '_' after a non-letter
		"`MAX\\_X` and A\\_B":   "`MAX\\_X` and A_B",
		`go \~/notes`:           `go ~/notes`,
		`\~a\~ b`:               `\~a\~ b`,
		`\[a-z]+`:               `\[a-z]+`, // line start: could be a definition or task box
		`use \[a-z]+`:           `use [a-z]+`,
		`see \[a\](b)`:          `see [a\](b)`, // the escaped "]" already stops the link
		`see \[a](b)`:           `see \[a](b)`,
		"```\nMAX\\_X\n```":     "```\nMAX\\_X\n```",
		gtMark + " q":           `\> q`,
		"- " + gtMark + " q":    `- \> q`,
		"a " + gtMark + " b":    "a > b",
		ltMark + "div" + gtMark: `\<div>`,
		"1 " + ltMark + " 2":    "1 < 2",
		ampMark + "gt;":         `\&gt;`,
	} {
		if got := fixEscapes(in); got != want {
			t.Errorf("fixEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}

// Item 10: nested blocks keep their nesting, to any depth.
func TestNestedBlocksSurvive(t *testing.T) {
	md := convertArticle(t, `<blockquote><p>The quoted report says:</p><table><tr><th>Region</th><th>Sales</th></tr><tr><td>North</td><td>12</td></tr></table></blockquote>
<ol><li><p>Install the tool.</p><ul><li>On Linux<ul><li>Debian: use apt</li><li>Fedora: use dnf</li></ul></li><li>On macOS</li></ul></li>
<li>Build it:<pre><code class="language-sh">make build
make test</code></pre></li>
<li>Compare the results<table><tr><th>Flag</th><th>Effect</th></tr><tr><td>-v</td><td>verbose</td></tr></table></li></ol>
<blockquote><blockquote><p>An inner quote of the thread.</p></blockquote><p>The outer reply to it.</p><ul><li>point one</li><li>point two</li></ul></blockquote>`)
	assertHas(t, md, []string{
		"> The quoted report says:\n> \n> | Region | Sales |\n> |---|---|\n> | North | 12 |",
		"1. Install the tool.\n   - On Linux\n     - Debian: use apt\n     - Fedora: use dnf\n   - On macOS",
		"   ```sh\n   make build\n   make test\n   ```",
		"3. Compare the results\n\n   | Flag | Effect |",
		"> > An inner quote of the thread.",
		"> - point one\n> - point two",
	}, []string{"RegionSales", "FlagEffect"})
}

// A link inside a quote keeps its target and its place in the sentence
// (go-trafilatura dropped the target and split the paragraph there; found
// by FuzzHTMLToMarkdown, testdata/fuzz).
func TestLinkInQuoteKept(t *testing.T) {
	md := convertArticle(t, `<blockquote><p>The report quoted here says that you should see <a href="https://t0.example.org/p_1~x">the original study</a> for the numbers behind every claim it makes about the market.</p></blockquote>`)
	assertHas(t, md, []string{"> The report quoted here says that you should see [the original study](https://t0.example.org/p_1~x) for the numbers"},
		[]string{"(https://example.com/post)"})
}

// A quote holding one paragraph with inline code stays a quote with its
// code span and link: go-trafilatura turned it into one code element
// without the link target (its highlight.js rule looks for <code> among
// all descendants), and readability renames such a quote into a <div>.
// Found by FuzzHTMLToMarkdown (testdata/fuzz/FuzzHTMLToMarkdown/86b978f54e24c6f8).
func TestQuoteWithCodeKept(t *testing.T) {
	inner := `<blockquote><p>The maintainers wrote that you should set <code>MAX_RETRY_COUNT</code> and then see <a href="https://t0.example.org/p_1~x">the retry guide</a> before you change anything else in production.</p></blockquote>
<blockquote><p>A second quote only names <code>the_flag</code> in its sentence and has no link at all, but it is long enough to be kept.</p></blockquote>`
	want := []string{
		"> The maintainers wrote that you should set `MAX_RETRY_COUNT` and then see [the retry guide](https://t0.example.org/p_1~x) before",
		"> A second quote only names `the_flag` in its sentence",
	}
	assertHas(t, convertArticle(t, inner), want, []string{"`The maintainers", "`A second"})
	// readability alone (the path of big pages).
	d, err := htmlToMarkdown(article("Fidelity", inner), mustURL(t, "https://example.com/post"), extractOptions{focus: defaultExtract.focus, trafOff: true})
	if err != nil {
		t.Fatal(err)
	}
	assertHas(t, d.Markdown, want, nil)
}

// A quote whose paragraph the HTML parser closes early (a hidden <div>
// inside a <p>) keeps its text in order and its link target:
// go-trafilatura put the text after the <div> before the link and dropped
// its target. Found
// by FuzzHTMLToMarkdown (testdata/fuzz/FuzzHTMLToMarkdown/367e4a55b5d605d8).
func TestQuoteTextOrderKept(t *testing.T) {
	md := convertArticle(t, `<blockquote><p>The report quoted here says that you should see <a href="https://t0.example.org/p_1~x">the original study</a> for the numbers <div style="display:none">(a hidden note)</div> and then compare them with the figures of the previous year in the market.</p></blockquote>`)
	assertHas(t, md, []string{"see [the original study](https://t0.example.org/p_1~x) for the numbers"}, []string{"(https://example.com/post)"})
	if i, j := strings.Index(md, "for the numbers"), strings.Index(md, "and then compare"); i < 0 || j < i {
		t.Errorf("text out of order:\n%s", md)
	}
}
