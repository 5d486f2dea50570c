package content

import (
	"strings"
	"testing"
)

// TestShortPagesFaithful checks the exact markdown of short and simple
// pages, where the extractors' heuristics have too little to work with (see
// direct.go). The title heading is never repeated in the body: it travels
// in Document.Title, as on every other page.
func TestShortPagesFaithful(t *testing.T) {
	cases := []struct {
		name, page, title, want string
	}{
		{
			// trafilatura's baseline appended the whole document's text,
			// <title> included, to the paragraph.
			name:  "one paragraph in an article, no duplicate, no glued title",
			page:  `<html><head><title>Cafe</title></head><body><article><p>Cafe creme brulee - naive resume text in a paragraph of content.</p></article></body></html>`,
			title: "Cafe",
			want:  "Cafe creme brulee - naive resume text in a paragraph of content.\n",
		},
		{
			name:  "one paragraph without a container",
			page:  `<html><head><title>Cafe</title></head><body><p>Cafe creme brulee - naive resume text in a paragraph of content.</p></body></html>`,
			title: "Cafe",
			want:  "Cafe creme brulee - naive resume text in a paragraph of content.\n",
		},
		{
			// The baseline returned the <article> as one paragraph.
			name:  "paragraphs separated by blank lines",
			page:  `<html><head><title>T</title></head><body><article><p>First paragraph with several words in it for the test.</p><p>Second paragraph with more words, to make this a more normal article body.</p><p>Third paragraph here with words too.</p></article></body></html>`,
			title: "T",
			want: "First paragraph with several words in it for the test.\n\n" +
				"Second paragraph with more words, to make this a more normal article body.\n\n" +
				"Third paragraph here with words too.\n",
		},
		{
			name:  "heading and nested list in main, footer dropped",
			page:  `<html><head><title>T</title></head><body><main><h2>Heading</h2><p>First paragraph with several words in it for the test.</p><ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul><p>Second paragraph with more words, to make this a more normal article body.</p></main><footer>copyright</footer></body></html>`,
			title: "T",
			want: "## Heading\n\n" +
				"First paragraph with several words in it for the test.\n\n" +
				"- one\n- two\n  - nested\n\n" +
				"Second paragraph with more words, to make this a more normal article body.\n",
		},
		{
			// The baseline flattened the page into "API Install … timeout 30".
			name:  "code fence with language, heading and table",
			page:  `<html><head><title>API</title></head><body><main><h1>API</h1><p>Install the package with the command below and then call it.</p><pre><code class="language-sh">npm install foo</code></pre><h2>Options</h2><table><tr><th>name</th><th>default</th></tr><tr><td>timeout</td><td>30</td></tr></table></main></body></html>`,
			title: "API",
			want: "Install the package with the command below and then call it.\n\n" +
				"```sh\nnpm install foo\n```\n\n" +
				"## Options\n\n" +
				"| name | default |\n|---|---|\n| timeout | 30 |\n",
		},
		{
			// example.com: the baseline kept the paragraphs' text only.
			name: "example.com keeps its link",
			page: `<!doctype html>
<html>
<head>
    <title>Example Domain</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <style type="text/css">
    body { background-color: #f0f0f2; }
    </style>
</head>
<body>
<div>
    <h1>Example Domain</h1>
    <p>This domain is for use in illustrative examples in documents. You may use this
    domain in literature without prior coordination or asking for permission.</p>
    <p><a href="https://www.iana.org/domains/example">More information...</a></p>
</div>
</body>
</html>`,
			title: "Example Domain",
			want: "This domain is for use in illustrative examples in documents. You may use this domain in literature without prior coordination or asking for permission.\n\n" +
				"[More information...](https://www.iana.org/domains/example)\n",
		},
		{
			name:  "definition list",
			page:  `<html><head><title>Glossary</title></head><body><main><h1>Glossary</h1><dl><dt>Cache</dt><dd>A store of recent answers.</dd><dt><b>Gate</b></dt><dd>A check every request passes.</dd></dl></main></body></html>`,
			title: "Glossary",
			want:  "**Cache**\n\nA store of recent answers.\n\n**Gate**\n\nA check every request passes.\n",
		},
		{
			// readability alone turned the quote into plain paragraphs.
			name:  "blockquote",
			page:  `<html><head><title>Quote</title></head><body><article><p>The author wrote this before the quotation.</p><blockquote><p>Quoted text with <em>emphasis</em> here.</p><p>A second quoted paragraph.</p></blockquote><p>And this after it.</p></article></body></html>`,
			title: "Quote",
			want: "The author wrote this before the quotation.\n\n" +
				"> Quoted text with *emphasis* here.\n> \n> A second quoted paragraph.\n\n" +
				"And this after it.\n",
		},
		{
			name:  "image with alt text, absolute source, caption left out",
			page:  `<html><head><title>Cat</title></head><body><article><p>Here is a picture of the cat.</p><figure><img src="/img/cat.png" alt="A sleeping cat"><figcaption>Photo: someone</figcaption></figure><p>It sleeps most of the day.</p></article></body></html>`,
			title: "Cat",
			want: "Here is a picture of the cat.\n\n" +
				"![A sleeping cat](https://example.com/img/cat.png)\n\n" +
				"It sleeps most of the day.\n",
		},
		{
			name:  "a page that is just a pre",
			page:  "<html><body><pre>$ make build\n  *not emphasis* and # not a heading\n</pre></body></html>",
			title: "",
			want:  "```\n$ make build\n  *not emphasis* and # not a heading\n```\n",
		},
		{
			name: "header, nav, aside and footer around a short article",
			page: `<!doctype html><html><head><title>Release 2.1 | Project Blog</title></head><body>
<header><a href="/">Project</a><nav><ul><li><a href="/docs">Docs</a></li><li><a href="/blog">Blog</a></li><li><a href="/download">Download</a></li></ul></nav></header>
<main><article><h1>Release 2.1</h1><p>Version 2.1 fixes the cache and adds a <a href="/docs/gates">new gate</a>.</p><p>Upgrade with <code>go install</code>.</p></article></main>
<aside><h3>Related</h3><ul><li><a href="/a">Release 2.0</a></li></ul></aside>
<footer><p>Copyright 2024 Project. All rights reserved.</p><a href="/privacy">Privacy</a></footer>
</body></html>`,
			title: "Release 2.1",
			want: "Version 2.1 fixes the cache and adds a [new gate](https://example.com/docs/gates).\n\n" +
				"Upgrade with `go install`.\n",
		},
		{
			// readability alone kept the first teaser only.
			name:  "listing page keeps every teaser",
			page:  `<html><head><title>News</title></head><body><main><article><h2><a href="/a">First story</a></h2><p>Summary of the first story.</p></article><article><h2><a href="/b">Second story</a></h2><p>Summary of the second story.</p></article></main></body></html>`,
			title: "News",
			want: "## [First story](https://example.com/a)\n\nSummary of the first story.\n\n" +
				"## [Second story](https://example.com/b)\n\nSummary of the second story.\n",
		},
		{
			// A nested ordered list starting past 1 cannot follow the
			// item's text directly (it would read as text), so it keeps
			// its blank line.
			name:  "nested ordered lists",
			page:  `<html><head><title>Steps</title></head><body><article><p>Do the following steps in order.</p><ol><li>Prepare<ol><li>wash</li><li>cut</li></ol></li><li>Cook<ol start="3"><li>boil</li></ol></li></ol></article></body></html>`,
			title: "Steps",
			want: "Do the following steps in order.\n\n" +
				"1. Prepare\n   1. wash\n   2. cut\n2. Cook\n\n   3. boil\n",
		},
		{
			name:  "hidden elements and a search form are dropped",
			page:  `<html><head><title>Status</title></head><body><form role="search"><input name="q"><button>Go</button></form><main><p>All systems are operational today.</p><div hidden>Debug panel</div><p style="display: none">Invisible note</p></main></body></html>`,
			title: "Status",
			want:  "All systems are operational today.\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := convertPage(t, tc.page)
			if doc.Title != tc.title {
				t.Errorf("Title = %q, want %q", doc.Title, tc.title)
			}
			if doc.Markdown != tc.want {
				t.Errorf("Markdown:\n%s\nwant:\n%s\n(got %q)", doc.Markdown, tc.want, doc.Markdown)
			}
		})
	}
}

// convertPage converts page as text/html from https://example.com/page.
func convertPage(t *testing.T, page string) Document {
	t.Helper()
	doc, err := Convert([]byte(page), "text/html; charset=utf-8", mustURL(t, "https://example.com/page"))
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	return doc
}

func TestTrafilaturaRescuedNotOnArticles(t *testing.T) {
	// A regular page must keep the merged extraction (no direct rendering).
	doc := convertHTML(t, article("Regular page", "<p>"+filler+"</p>"))
	if strings.Contains(doc.Markdown, "Copyright") || strings.Contains(doc.Markdown, "Another story") {
		t.Errorf("boilerplate kept:\n%s", doc.Markdown)
	}
}

func TestPreferDirect(t *testing.T) {
	cases := []struct {
		name, extracted, direct string
		want                    bool
	}{
		{"same text, more structure", "Heading one two three four", "## Heading\n\none two three four", true},
		{"extraction empty", "", "Some words", true},
		{"direct empty", "Some words", "", false},
		{"direct much bigger", "one two three four five", strings.Repeat("menu link ", 40) + "one two three four five", false},
		{"extraction from elsewhere", "alpha beta gamma delta epsilon zeta", "one two three four five six", false},
		{"short extraction contained", "two three", "one two three four", true},
		{"short extraction not contained", "three two", "one two three four", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := preferDirect(tc.extracted, tc.direct); got != tc.want {
				t.Errorf("preferDirect(%q, %q) = %v, want %v", tc.extracted, tc.direct, got, tc.want)
			}
		})
	}
}
