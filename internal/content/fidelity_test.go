package content

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
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
	markdown.Polish(root)
	var texts []string
	dom.Walk(root, func(n *html.Node) bool {
		if n.Type == html.TextNode {
			texts = append(texts, n.Data)
		}
		return true
	})

	want := []string{"an" + markdown.GapMark, "x", markdown.GapMark + "table" + markdown.GapMark, "y", markdown.GapMark, "z", markdown.GapMark, "w"}
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

// Code listings laid out as tables with a line-number column come out as
// code blocks of the code alone: Pygments' highlighttable, GitHub's file
// view (numbers in data-line-number), hand-written numbered rows. A table
// whose first column counts rows of data stays a table.
func TestLineNumberTablesAreCode(t *testing.T) {
	md := convertArticle(t, `<div class="highlight-python"><table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre>1
2
3</pre></div></td><td class="code"><div class="highlight"><pre><span class="k">def</span> f():
    return 1
print(f())</pre></div></td></tr></table></div>
<p>The same file in the repository view of the hosting service, shown with its line numbers in a table of rows.</p>
<table class="highlight"><tr><td id="L1" class="blob-num" data-line-number="1"></td><td class="blob-code">package main</td></tr><tr><td id="L2" class="blob-num" data-line-number="2"></td><td class="blob-code">import "fmt"</td></tr><tr><td class="blob-num" data-line-number="3"></td><td class="blob-code">func main() { fmt.Println("hi") }</td></tr></table>
<p>A hand-written listing follows, and after it a table of results numbered by rank.</p>
<table><tr><td>1</td><td>int x = 0;</td></tr><tr><td>2</td><td>x++;</td></tr><tr><td>3</td><td>return x;</td></tr></table>
<table><tr><th>#</th><th>Team</th></tr><tr><td>1</td><td>Reds</td></tr><tr><td>2</td><td>Blues</td></tr><tr><td>3</td><td>Greens</td></tr></table>`)
	assertHas(t, md, []string{
		"```python\ndef f():\n    return 1\nprint(f())\n```",
		"```\npackage main\nimport \"fmt\"\nfunc main() { fmt.Println(\"hi\") }\n```",
		"```\nint x = 0;\nx++;\nreturn x;\n```",
		"| 1 | Reds |",
	}, []string{"| 1 | int x", "|  | package main", "1\n2\n3"})
}

// A table inside a table cell keeps its text, row by row, in the cell (the
// converter dropped it: GFM has no nested tables).
func TestNestedTableKept(t *testing.T) {
	md := convertArticle(t, `<table><tr><th>Name</th><th>Details</th></tr><tr><td>Alpha</td><td><table><tr><td>Weight</td><td>12 kg</td></tr><tr><td>Colour</td><td>red <table><tr><td>deep</td><td>inner</td></tr></table></td></tr></table></td></tr><tr><td>Beta</td><td>plain cell</td></tr></table>`)
	assertHas(t, md, []string{`| Alpha | Weight \| 12 kg<br>Colour \| red deep \| inner |`, "| Beta | plain cell |"}, nil)
}

// An unclosed <h1> (the parser puts the rest of the article inside it) is
// one heading line, the paragraphs after it paragraphs, once.
func TestUnclosedHeading(t *testing.T) {
	page := `<!doctype html><html><head><title>Unclosed | Blog</title></head><body><main><article><h1>Release notes for the spring<p>` + filler + `</p><p>` + strings.Replace(filler, "Gatehouse", "The converter", 1) + `</p></article></main></body></html>`
	doc, err := HTMLToMarkdown(page, mustURL(t, "https://example.com/post"))
	if err != nil {
		t.Fatal(err)
	}
	md := doc.Markdown
	if strings.Count(md, "Release notes for the spring") > 1 || strings.Count(md, "Gatehouse fetches pages") != 1 {
		t.Errorf("heading or paragraph repeated:\n%s", md)
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "#") && strings.Contains(line, "fetches pages") {
			t.Errorf("paragraph inside the heading: %q", line)
		}
	}
	assertHas(t, md, []string{"converter fetches pages for agents"}, nil)
}

// A link holding only an image keeps its target and the image's text
// alternative: inline (go-trafilatura removed the image and with it the
// link) and alone; without any alternative it is named after the image's
// file.
func TestImageOnlyLinks(t *testing.T) {
	md := convertArticle(t, `<p>See the figure of the week: <a href="/full.png"><img src="/thumb.png" alt="Throughput chart"></a> and the notes under it for details.</p>
<p>Read the <a href="/docs" aria-label="Project documentation"><svg viewBox="0 0 1 1"><path d="M0 0"/></svg></a> pages or the <a href="/faq"><img src="/img/faq-icon.png"></a> ones before asking a question in the forum, because most of the questions that people ask there have already been answered in one of them.</p>`)
	assertHas(t, md, []string{
		"figure of the week: [Throughput chart](https://example.com/full.png) and the notes",
		"Read the [Project documentation](https://example.com/docs) pages",
		"(https://example.com/faq)",
	}, []string{"[](", "[![](", "figure of the week:  and"})
	if !strings.Contains(md, "[faq-icon.png](https://example.com/faq)") && !strings.Contains(md, "[![faq-icon.png](https://example.com/img/faq-icon.png)](https://example.com/faq)") {
		t.Errorf("the image link without alt text is not named after its file:\n%s", md)
	}
}

// Blocks next to each other inside list items, cells and definitions
// keep a space (or line break) between their words: the extractors glued
// "<li><div>Item head</div><div>Item body</div></li>" into "Item headItem
// body", and the converter wrote the blocks of a cell as four <br>s.
func TestAdjacentBlocksNotGlued(t *testing.T) {
	md := convertArticle(t, `<ul><li><div>Item head</div><div>Item body text</div></li><li><span style="display:block">block span</span><span style="display:block">second span</span></li></ul>
<table><tr><th>Key</th><th>Value</th></tr><tr><td><div>cell a</div><div>cell b</div></td><td>v</td></tr></table>
<dl><dt>Term</dt><dd><div>def a</div><div>def b</div></dd></dl>`)
	assertHas(t, md, []string{"Item head", "Item body text", "block span second span", "| cell a<br>cell b | v |", "def a def b"},
		[]string{"headItem", "spansecond", "<br /><br />", "adef", "**Term**def"})
}

// innerMarkdown is the markdown of the part of an article (article) that
// comes between its second filler paragraph and its last one.
func innerMarkdown(t *testing.T, md string) string {
	t.Helper()
	_, after, ok := strings.Cut(md, "the sidebar around it.\n\nThe converter fetches")
	if ok {
		_, after, ok = strings.Cut(after, "the sidebar around it.\n\n")
	}
	var inner string
	if ok {
		inner, _, ok = strings.Cut(after, "\n\nFinally, the page")
	}
	if !ok {
		t.Fatalf("filler paragraphs not found in:\n%s", md)
	}
	return inner
}

// Issue 16 item 7: the classes of markdown that still lost structure,
// each an HTML fragment in an article and the exact markdown between the
// article's filler paragraphs. Every want was checked to render back
// (goldmark v1.8.7, CommonMark with GFM tables) to the structure of the
// HTML: the list numbers, the quote around every line of the code block
// inside the list item, the cells' words and links, the link around the
// code span.
func TestMarkdownFidelityClasses(t *testing.T) {
	for _, c := range []struct{ name, html, want string }{
		{"ordered in ordered, nested start",
			`<ol><li>Install the tool<ol><li>Download it</li><li>Unpack it</li></ol></li><li>Configure it<ol start="4"><li>Set the key</li><li>Restart the service</li></ol></li></ol>`,
			// (A list counting from 4 cannot interrupt the item's paragraph,
			// CommonMark 0.31 §5.2: the blank line stays.)
			"1. Install the tool\n   1. Download it\n   2. Unpack it\n2. Configure it\n\n   4. Set the key\n   5. Restart the service"},
		{"ordered in ordered, both start",
			`<ol start="3"><li><p>Third step of the setup</p><ol start="7"><li><p>seventh part</p></li><li><p>eighth part</p></li></ol></li><li><p>Fourth step of the setup</p></li></ol>`,
			"3. Third step of the setup\n\n   7. seventh part\n   8. eighth part\n4. Fourth step of the setup"},
		{"code in quote in list item",
			`<ol><li><p>Configure the relay:</p><blockquote><p>Note the config file:</p><pre><code class="language-yaml">key: value

other: 2</code></pre></blockquote></li><li>Start the relay.</li></ol>`,
			"1. Configure the relay:\n\n   > Note the config file:\n   > \n   > ```yaml\n   > key: value\n   > \n   > other: 2\n   > ```\n2. Start the relay."},
		{"code in quote in quote in list item",
			`<ul><li>Quoted reply<blockquote><blockquote><p>The inner quote ran:</p><pre>first line
second line</pre></blockquote><p>The outer reply to the quote.</p></blockquote></li></ul>`,
			"- Quoted reply\n\n  > > The inner quote ran:\n  > > \n  > > ```\n  > > first line\n  > > second line\n  > > ```\n  > \n  > The outer reply to the quote."},
		{"table cells with code and links",
			`<table><tr><th>Option</th><th>Meaning</th></tr><tr><td>Use
<code>--force</code>
to skip</td><td>See<a href="/doc"> the docs </a>here</td></tr><tr><td><code>a</code> <code>b</code></td><td><a href="/x">one</a> <a href="/y">two</a></td></tr><tr><td>x <code>y</code>, z</td><td>x <a href="/q">q</a>. z</td></tr></table>`,
			"| Option | Meaning |\n|---|---|\n| Use `--force` to skip | See [the docs](https://example.com/doc) here |\n| `a` `b` | [one](https://example.com/x) [two](https://example.com/y) |\n| x `y`, z | x [q](https://example.com/q). z |"},
		{"link text of code and escapes",
			`<p>Call <a href="/api"><code>Client.Do</code></a> now, or <a href="/b"><code>a*b</code> and <code>[x]</code></a>, then press <a href="/k"><kbd>Ctrl</kbd>+<kbd>C</kbd></a>; the <a href="/e"><em>emphasis</em> guide</a> and <a href="/c">a_b *c* [d]</a> stay links.</p>`,
			"Call [`Client.Do`](https://example.com/api) now, or [`a*b` and `[x]`](https://example.com/b), then press [`Ctrl`+`C`](https://example.com/k); the [*emphasis* guide](https://example.com/e) and [a_b \\*c* \\[d\\]](https://example.com/c) stay links."},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := innerMarkdown(t, convertArticle(t, c.html)); got != c.want {
				t.Errorf("markdown:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// Superscripts and subscripts stay apart from the word before them, as
// the raw inline HTML GFM passes through ("mc2" and "H2O" were ambiguous);
// an empty one is dropped, one holding a block is written as its content.
func TestSupSubKept(t *testing.T) {
	md := innerMarkdown(t, convertArticle(t, `<p>Energy is E = mc<sup>2</sup> and water is H<sub>2</sub>O, while x<sup> </sup>y stays one word and the note<sup><a href="#fn1">1</a></sup> links to its footnote in the list below.</p>`))
	want := "Energy is E = mc<sup>2</sup> and water is H<sub>2</sub>O, while x y stays one word and the note"
	if !strings.HasPrefix(md, want) {
		t.Errorf("markdown:\n%s\nwant it to start with:\n%s", md, want)
	}
	if !strings.Contains(md, "(https://example.com/post#fn1)") {
		t.Errorf("footnote link lost:\n%s", md)
	}
}

// An image with alt text inside a sentence stays where it stood (go-
// trafilatura, images off, dropped it with the merge using its paragraph);
// an image alone in its paragraph stays one block, an image link stays a
// named link.
func TestInlineImagesKept(t *testing.T) {
	md := innerMarkdown(t, convertArticle(t, `<p>Press the <img src="/gear.png" alt="gear icon"> button and then the <img src="/save.png" alt="save icon"> one to store the settings of the relay.</p><p><img src="/chart.png" alt="Throughput by week"></p><p>See the <a href="/full.png"><img src="/thumb.png" alt="Throughput chart"></a> for details about the numbers of the week.</p>`))
	want := "Press the ![gear icon](https://example.com/gear.png) button and then the ![save icon](https://example.com/save.png) one to store the settings of the relay.\n\n" +
		"![Throughput by week](https://example.com/chart.png)\n\n" +
		"See the [Throughput chart](https://example.com/full.png) for details about the numbers of the week."
	if md != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", md, want)
	}
}
