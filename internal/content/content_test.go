package content

import (
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Hand-written fixtures only: the bench pages are third-party text and
// never enter the repository.

const filler = "Gatehouse fetches pages for agents and keeps only the article. " +
	"This paragraph exists so that the main-content extractors see a real article body, " +
	"with sentences long enough to outweigh the navigation, the footer and the sidebar around it."

// article wraps inner HTML in a page with chrome (navigation, sidebar,
// footer) and enough prose around it to look like an article.
func article(title, inner string) string {
	return `<!doctype html><html><head><meta charset="utf-8"><title>` + title + ` | Example Blog</title></head><body>
<header><nav><a href="/">Home</a> <a href="/about">About</a> <a href="/contact">Contact</a></nav></header>
<main><article><h1>` + title + `</h1>
<p>` + filler + `</p>
<p>` + strings.Replace(filler, "Gatehouse", "The converter", 1) + `</p>
` + inner + `
<p>` + strings.Replace(filler, "Gatehouse", "Finally, the page", 1) + `</p>
</article></main>
<aside><h3>Related</h3><ul><li><a href="/a">Another story</a></li><li><a href="/b">Yet another story</a></li></ul></aside>
<footer><p>Copyright 2024 Example Blog. All rights reserved.</p></footer>
</body></html>`
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func convertHTML(t *testing.T, page string) Document {
	t.Helper()
	doc, err := Convert([]byte(page), "text/html; charset=utf-8", mustURL(t, "https://example.com/blog/post.html"))
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if doc.Kind != KindHTML || doc.Charset != "utf-8" {
		t.Fatalf("Kind, Charset = %q, %q", doc.Kind, doc.Charset)
	}
	return doc
}

// fencedBlocks returns the info string and exact content of every fenced
// code block in md.
func fencedBlocks(md string) (infos, bodies []string) {
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		f := markdown.FenceOpener(lines[i])
		if f == "" {
			continue
		}
		info := strings.TrimSpace(lines[i][len(f):])
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			if strings.TrimRight(lines[j], " ") == f {
				break
			}
			body = append(body, lines[j])
		}
		infos = append(infos, info)
		bodies = append(bodies, strings.Join(body, "\n"))
		i = j
	}
	return infos, bodies
}

func TestCodeBlockLanguageAndBytes(t *testing.T) {
	// The code has everything markdown would like to escape or reformat:
	// '#' at line starts, emphasis markers, HTML-looking text, backtick
	// fences, tabs, trailing spaces and blank lines.
	code := "package main\n\n# not a heading\n## nor this\nimport \"fmt\"\n\n\n" +
		"func main() {\n\tfmt.Println(\"a  *b*  _c_ <b>x</b> [l](u)\")   \n\t// ```inner fence```\n}"
	page := article("Code sample", `<pre><code class="language-go">`+escapeHTML(code)+"\n</code></pre>")
	doc := convertHTML(t, page)
	infos, bodies := fencedBlocks(doc.Markdown)
	if len(bodies) != 1 {
		t.Fatalf("want 1 fenced block, got %d in:\n%s", len(bodies), doc.Markdown)
	}
	if infos[0] != "go" {
		t.Errorf("info string = %q, want go", infos[0])
	}
	if bodies[0] != code {
		t.Errorf("code changed:\n got %q\nwant %q", bodies[0], code)
	}
	if !strings.Contains(doc.Markdown, "````go\n") {
		t.Errorf("a fence longer than the ``` inside the code is needed:\n%s", doc.Markdown)
	}
}

// TestPreHashLines is the case: a <pre> whose lines start with '#'
// must stay inside a fence, unescaped, not become headings.
func TestPreHashLines(t *testing.T) {
	code := "# Configuration\n#!/bin/sh\n## Section\n#   indented comment\necho done"
	doc := convertHTML(t, article("Shell notes", "<pre>"+escapeHTML(code)+"</pre>"))
	_, bodies := fencedBlocks(doc.Markdown)
	if len(bodies) != 1 || bodies[0] != code {
		t.Fatalf("fenced blocks = %q, want [%q] in:\n%s", bodies, code, doc.Markdown)
	}
	for _, line := range strings.Split(doc.Markdown, "\n") {
		if strings.HasPrefix(line, "\\#") {
			t.Errorf("escaped hash line outside the fence: %q", line)
		}
	}
}

func TestCodeLanguageSources(t *testing.T) {
	cases := []struct {
		name, html, want string
	}{
		{name: "language- on code", html: `<pre><code class="language-python">x = 1</code></pre>`, want: "python"},
		{name: "lang- on pre", html: `<pre class="lang-rust">let x = 1;</pre>`, want: "rust"},
		{name: "GitHub highlight wrapper", html: `<div class="highlight highlight-source-ruby"><pre>puts 1</pre></div>`, want: "ruby"},
		{name: "data-lang", html: `<pre data-lang="js"><code>let x = 1</code></pre>`, want: "js"},
		{name: "SyntaxHighlighter brush", html: `<pre class="brush: sql;">select 1</pre>`, want: "sql"},
		{name: "pandoc sourceCode", html: `<pre class="sourceCode haskell"><code>main = pure ()</code></pre>`, want: "haskell"},
		{name: "lang attribute is a human language", html: `<pre lang="en">plain</pre>`, want: ""},
		{name: "no language", html: `<pre>plain text</pre>`, want: ""},
		{name: "hostile class cannot break the fence line", html: "<pre><code class=\"language-a`b\">x</code></pre>", want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			md := fragmentToMarkdown(t, tc.html, nil)
			infos, _ := fencedBlocks(md)
			if len(infos) != 1 || infos[0] != tc.want {
				t.Errorf("info strings = %q, want [%q] in:\n%s", infos, tc.want, md)
			}
		})
	}
}

// fragmentToMarkdown runs the conversion step alone (no extraction).
func fragmentToMarkdown(t *testing.T, fragment string, base *url.URL) string {
	t.Helper()
	node := parseFragment(t, fragment)
	markdown.Prepare(node)
	md, err := markdown.Convert(node, base)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func TestLinksAndImagesAbsolute(t *testing.T) {
	inner := `<p>Read <a href="/docs/guide">the guide</a>, <a href="../other.html">a sibling</a>, ` +
		`<a href="//cdn.example.net/file">the CDN</a> and <a href="#notes">the notes</a>. ` + filler + `</p>
<figure><img src="img/chart.png" alt="A chart"><figcaption>Figure 1: a chart</figcaption></figure>
<p>` + strings.Replace(filler, "Gatehouse", "After the figure", 1) + `</p>`
	t.Run("against the final URL", func(t *testing.T) {
		doc := convertHTML(t, article("Links", inner))
		for _, want := range []string{
			"[the guide](https://example.com/docs/guide)",
			"[a sibling](https://example.com/other.html)",
			"[the CDN](https://cdn.example.net/file)",
			"[the notes](https://example.com/blog/post.html#notes)",
			"![A chart](https://example.com/blog/img/chart.png)",
		} {
			if !strings.Contains(doc.Markdown, want) {
				t.Errorf("missing %q in:\n%s", want, doc.Markdown)
			}
		}
		if strings.Contains(doc.Markdown, "Figure 1") {
			t.Errorf("caption kept:\n%s", doc.Markdown)
		}
	})
	t.Run("honouring <base href>", func(t *testing.T) {
		page := strings.Replace(article("Links", inner), "<head>", `<head><base href="/v2/">`, 1)
		doc := convertHTML(t, page)
		for _, want := range []string{
			"[the guide](https://example.com/docs/guide)",
			"[a sibling](https://example.com/other.html)",
			"![A chart](https://example.com/v2/img/chart.png)",
		} {
			if !strings.Contains(doc.Markdown, want) {
				t.Errorf("missing %q in:\n%s", want, doc.Markdown)
			}
		}
	})
	t.Run("javascript: base is ignored", func(t *testing.T) {
		page := strings.Replace(article("Links", inner), "<head>", `<head><base href="javascript:alert(1)//">`, 1)
		doc := convertHTML(t, page)
		if !strings.Contains(doc.Markdown, "(https://example.com/docs/guide)") {
			t.Errorf("links not resolved against the page URL:\n%s", doc.Markdown)
		}
	})
	t.Run("inline image in a fragment", func(t *testing.T) {
		md := fragmentToMarkdown(t, `<p>Logo: <img src="/static/logo.svg" alt="Logo"></p>`, mustURL(t, "https://example.com/a/b"))
		if !strings.Contains(md, "![Logo](https://example.com/static/logo.svg)") {
			t.Errorf("got %q", md)
		}
	})
}

var reTableLine = regexp.MustCompile(`^\|.*\|$`)

func TestTableGFM(t *testing.T) {
	table := `<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>
<tr><td>a|b</td><td>line one<br>line two</td></tr>
<tr><td><code>x | y</code></td><td>plain</td></tr></tbody></table>`
	doc := convertHTML(t, article("Tables", table))
	var rows []string
	for _, line := range strings.Split(doc.Markdown, "\n") {
		if strings.HasPrefix(line, "|") {
			rows = append(rows, line)
		}
	}
	if len(rows) != 4 {
		t.Fatalf("want 4 table lines (header, rule, 2 rows), got %d in:\n%s", len(rows), doc.Markdown)
	}
	for _, r := range rows {
		if !reTableLine.MatchString(r) {
			t.Errorf("broken row %q", r)
		}
	}
	if !strings.HasPrefix(rows[1], "|---") && !strings.HasPrefix(rows[1], "| ---") {
		t.Errorf("second line is not the delimiter row: %q", rows[1])
	}
	if !strings.Contains(rows[2], `a\|b`) {
		t.Errorf("pipe not escaped: %q", rows[2])
	}
	if !strings.Contains(rows[2], "line one<br>line two") {
		t.Errorf("<br> did not stay inside the cell: %q", rows[2])
	}
	if !strings.Contains(rows[3], `x \| y`) {
		t.Errorf("pipe in code not escaped: %q", rows[3])
	}
}

func TestNestedLists(t *testing.T) {
	list := `<ul><li>Fruit<ul><li>Apple</li><li>Pear<ol><li>Conference</li><li>Williams</li></ol></li></ul></li><li>Vegetables</li></ul>`
	doc := convertHTML(t, article("Lists", list))
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^- Fruit$`),
		regexp.MustCompile(`(?m)^  - Apple$`),
		regexp.MustCompile(`(?m)^  - Pear$`),
		regexp.MustCompile(`(?m)^    1\. Conference$`),
		regexp.MustCompile(`(?m)^    2\. Williams$`),
		regexp.MustCompile(`(?m)^- Vegetables$`),
	}
	for _, re := range want {
		if !re.MatchString(doc.Markdown) {
			t.Errorf("no line matching %s in:\n%s", re, doc.Markdown)
		}
	}
}

func TestTitle(t *testing.T) {
	t.Run("title is the result's title and not repeated", func(t *testing.T) {
		doc := convertHTML(t, article("A   Headline\n", ""))
		if doc.Title != "A Headline" {
			t.Errorf("Title = %q", doc.Title)
		}
		if strings.Contains(doc.Markdown, "# A Headline") {
			t.Errorf("title heading repeated in the body:\n%s", doc.Markdown)
		}
		if strings.Contains(doc.Markdown, "Copyright") || strings.Contains(doc.Markdown, "Contact") || strings.Contains(doc.Markdown, "Another story") {
			t.Errorf("boilerplate kept:\n%s", doc.Markdown)
		}
	})
	t.Run("first h1 when there is no <title>", func(t *testing.T) {
		doc, err := HTMLToMarkdown("<body><h1>Only heading</h1><p>"+filler+"</p></body>", nil)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != "Only heading" {
			t.Errorf("Title = %q", doc.Title)
		}
	})
}

func TestTinyPages(t *testing.T) {
	cases := []struct{ name, page, want string }{
		{name: "bare code listing", page: "<html><body><pre># install\nmake install\n</pre></body></html>", want: "```\n# install\nmake install\n```"},
		{name: "one sentence", page: "<p>Just one short sentence.</p>", want: "Just one short sentence."},
		{name: "bare table", page: "<table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>", want: "| 1 | 2 |"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Convert([]byte(tc.page), "text/html", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(doc.Markdown, tc.want) {
				t.Errorf("Markdown %q lacks %q", doc.Markdown, tc.want)
			}
		})
	}
}

func TestPassThrough(t *testing.T) {
	cases := []struct {
		name, contentType, body, kind, title string
	}{
		{name: "text/plain", contentType: "text/plain; charset=utf-8", body: "line 1\n  <b>not html</b>\n# not a title\n", kind: KindText},
		{name: "markdown", contentType: "text/markdown", body: "Intro\n\n```\n# inside fence\n```\n\n# Real title #\n\nBody *text*.\n", kind: KindMarkdown, title: "Real title"},
		{name: "markdown title keeps C#", contentType: "text/x-markdown", body: "# Learning C#\n", kind: KindMarkdown, title: "Learning C#"},
		{name: "json", contentType: "application/json", body: `{"a": [1, 2, {"b": "<p>x</p>"}]}`, kind: KindJSON},
		{name: "problem+json", contentType: "application/problem+json", body: `{"title": "Not found"}`, kind: KindJSON},
		{name: "csv is text", contentType: "text/csv", body: "a,b\n1,2\n", kind: KindText},
		{name: "octet-stream that sniffs as text", contentType: "application/octet-stream", body: "plain words, nothing binary\n", kind: KindText},
		{name: "no type, sniffs as text", contentType: "", body: "plain words\n", kind: KindText},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Convert([]byte(tc.body), tc.contentType, nil)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Markdown != tc.body || doc.Kind != tc.kind || doc.Title != tc.title || doc.Charset != "utf-8" {
				t.Errorf("got %+v", doc)
			}
		})
	}
}

func TestSniffedHTML(t *testing.T) {
	for _, ct := range []string{"", "application/octet-stream", "text/html;;;=bad"} {
		doc, err := Convert([]byte(article("Sniffed", "")), ct, nil)
		if err != nil || doc.Kind != KindHTML || doc.Title != "Sniffed" {
			t.Errorf("content type %q: %+v, %v", ct, doc, err)
		}
	}
}

func TestConvertRefusals(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	cases := []struct {
		name, contentType string
		body              []byte
		want              reason.Code
	}{
		{name: "PNG declared as html", contentType: "text/html", body: png, want: reason.BinaryPayload},
		{name: "gzip undeclared", contentType: "", body: []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00"), want: reason.BinaryPayload},
		{name: "SQLite as text/plain", contentType: "text/plain", body: []byte("SQLite format 3\x00\x10\x00"), want: reason.BinaryPayload},
		{name: "ZIP as json", contentType: "application/json", body: []byte("PK\x03\x04\x14\x00"), want: reason.BinaryPayload},
		{name: "ELF with NULs first", contentType: "text/plain", body: []byte("\x00\x00\x7fELF\x02\x01\x01"), want: reason.BinaryPayload},
		{name: "bzip2", contentType: "text/plain", body: []byte("BZh91AY&SY\x00"), want: reason.BinaryPayload},
		{name: "PNG declared as image", contentType: "image/png", body: png, want: reason.UnsupportedContentType},
		{name: "image without magic", contentType: "image/webp", body: []byte("RIFF....WEBPVP8 "), want: reason.UnsupportedContentType},
		{name: "video", contentType: "video/mp4", body: []byte("\x00\x00\x00\x18ftypmp42"), want: reason.UnsupportedContentType},
		{name: "zip declared", contentType: "application/zip", body: []byte("PK\x03\x04"), want: reason.UnsupportedContentType},
		{name: "octet-stream with zip magic", contentType: "application/octet-stream", body: []byte("PK\x03\x04"), want: reason.UnsupportedContentType},
		{name: "octet-stream binary", contentType: "application/octet-stream", body: []byte{0, 1, 2, 3, 0xff, 0xfe, 0, 9}, want: reason.UnsupportedContentType},
		{name: "font", contentType: "font/woff2", body: []byte("wOF2"), want: reason.UnsupportedContentType},
		{name: "empty body", contentType: "text/html", body: nil, want: reason.EmptyContent},
		{name: "white space only", contentType: "text/plain", body: []byte(" \n\t "), want: reason.EmptyContent},
		{name: "html without text", contentType: "text/html", body: []byte("<html><head><title>t</title><script>var x = 1</script></head><body><img src=x></body></html>"), want: reason.EmptyContent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Convert(tc.body, tc.contentType, nil)
			if got := reason.Of(err); got != tc.want {
				t.Errorf("reason = %q (err %v), want %q", got, err, tc.want)
			}
		})
	}
}

// Text that merely starts like a magic number is not refused.
func TestBinaryMagicNotFooledByText(t *testing.T) {
	for _, body := range []string{"BZh is a prefix of bzip2", "GIF89 is a year-like word", "PK is a name", "OggSomething"} {
		if _, ok := binaryMagic([]byte(body)); ok && body != "OggSomething" {
			t.Errorf("%q refused as binary", body)
		}
	}
}

func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// TestConvertConcurrent runs conversions in parallel; with -race it checks
// that the shared converter and extractors keep no unsynchronised state.
func TestConvertConcurrent(t *testing.T) {
	page := []byte(article("Concurrent", `<pre><code class="language-go">x := 1</code></pre><table><tr><th>a</th></tr><tr><td>b<br>c</td></tr></table>`))
	base := mustURL(t, "https://example.com/blog/post.html")
	want, err := Convert(page, "text/html", base)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Document)
	for i := 0; i < 8; i++ {
		go func() {
			doc, _ := Convert(page, "text/html", base)
			done <- doc
		}()
	}
	for i := 0; i < 8; i++ {
		if got := <-done; !reflect.DeepEqual(got, want) {
			t.Errorf("concurrent result differs:\n%+v\n%+v", got, want)
		}
	}
}
