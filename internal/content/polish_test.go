package content

import (
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"golang.org/x/net/html"
)

// polishPara is filler prose, so that the extractors see an article.
const polishPara = `<p>The release brings a new scheduler that spreads work across every core of the machine, and a rewritten storage layer that keeps hot rows in memory while cold ones move to disk in the background.</p>
<p>Operators upgrading from the previous version should read the migration notes first, because two configuration keys were renamed and one default changed from thirty seconds to ten.</p>`

func polishConvert(t *testing.T, body string) string {
	t.Helper()
	page := "<html><head><title>Release notes</title></head><body><header><nav><a href=\"/\">Home</a></nav></header><article><h1>Release notes</h1>" +
		polishPara + body + polishPara + "</article><footer>Copyright</footer></body></html>"
	u, _ := url.Parse("https://example.com/blog/post")
	doc, err := HTMLToMarkdown(page, u)
	if err != nil {
		t.Fatalf("HTMLToMarkdown: %v", err)
	}
	return doc.Markdown
}

func TestPolish(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		want     []string
		dontWant []string
	}{
		{
			name: "task list keeps its state",
			body: `<ul class="contains-task-list"><li class="task-list-item"><input type="checkbox" checked disabled> write the parser</li><li class="task-list-item"><input type="checkbox" disabled> ship the release candidate</li></ul>`,
			want: []string{"- [x] write the parser", "- [ ] ship the release candidate"},
		},
		{
			name: "figure caption kept under the image",
			body: `<figure><img src="/img/chart.png" alt="Throughput chart"><figcaption>Figure 2: throughput after the migration. Postgres handled 12k jobs/s on a single primary.</figcaption></figure>`,
			want: []string{"![Throughput chart](https://example.com/img/chart.png)\n\n*Figure 2: throughput after the migration. Postgres handled 12k jobs/s on a single primary.*"},
		},
		{
			// Short captions and credits stay out of extracted articles:
			// the extraction bench scores them as noise (see
			// markdown.CaptionsToParagraphs).
			name:     "short caption left out of an article",
			body:     `<figure><img src="/img/jane.jpg" alt="Jane at the desk"><figcaption>Photo: Jane Doe</figcaption></figure>`,
			want:     []string{"![Jane at the desk](https://example.com/img/jane.jpg)"},
			dontWant: []string{"Photo: Jane Doe"},
		},
		{
			name:     "checkbox inside item text is no task marker",
			body:     `<ul><li>Enable the <input type="checkbox" checked> option named strict mode in settings</li><li>Then restart the server process</li></ul>`,
			dontWant: []string{"[x]", "[ ]"},
		},
		{
			name: "cite attribution kept",
			body: `<blockquote><p>Premature optimization is the root of all evil in programming.</p><cite>Donald Knuth</cite></blockquote>`,
			want: []string{"> Premature optimization", "> Donald Knuth"},
		},
		{
			name: "inline cite stays inline",
			body: `<blockquote><p>As <cite>The Art of Computer Programming</cite> puts it, premature optimization is the root of all evil.</p></blockquote>`,
			want: []string{"> As The Art of Computer Programming puts it, premature optimization"},
		},
		{
			name: "blockquote attribution kept",
			body: `<blockquote><p>Simplicity is prerequisite for reliability in every system we build.</p><footer>— Edsger Dijkstra</footer></blockquote>`,
			want: []string{"> Simplicity is prerequisite", "Edsger Dijkstra"},
		},
		{
			name:     "reference backlinks dropped",
			body:     `<ol class="references"><li id="cite_note-1"><span class="mw-cite-backlink"><b><a href="#cite_ref-1">^</a></b></span> <span class="reference-text">Friar, Stephen (2003). <i>The Sutton Companion to Castles</i>. Stroud.</span></li></ol>`,
			want:     []string{"Friar, Stephen (2003). *The Sutton Companion to Castles*"},
			dontWant: []string{"[^]", "cite_ref"},
		},
		{
			name: "discourse quote kept",
			body: `<aside class="quote"><div class="title">alice:</div><blockquote><p>Why does the memory grow like that?</p></blockquote></aside><p>Each iteration creates a new timer that is not collected until it fires, so create one timer outside the loop.</p>`,
			want: []string{"> Why does the memory grow like that?"},
		},
		{
			name: "text after inline code in a table cell",
			body: `<table><tr><th>Option</th><th>Description</th></tr><tr><td><code>proxies</code></td><td>Mapping of scheme to proxy URL, e.g. <code>{"https": "http://proxy:3128"}</code>.</td></tr><tr><td><code>verify</code></td><td>Verify TLS certificates, or a path to a CA bundle.</td></tr></table>`,
			want: []string{"`{\"https\": \"http://proxy:3128\"}`. |"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := polishConvert(t, tt.body)
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("markdown lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(md, w) {
					t.Errorf("markdown has %q:\n%s", w, md)
				}
			}
		})
	}
}

// polishForum is a Discourse-like topic page: post metadata in adjacent
// spans, a quoted reply in <aside class="quote">.
const polishForum = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>goroutine leak when using time.After in select loop - Go Forum</title></head><body>
<header class="d-header"><a href="/">Go Forum</a><nav><a href="/latest">Latest</a><a href="/categories">Categories</a><a href="/login">Log In</a></nav></header>
<div id="main-outlet"><div class="topic-title"><h1><a href="/t/goroutine-leak/1234">goroutine leak when using time.After in select loop</a></h1><span class="category"><a href="/c/help">Getting Help</a></span></div>
<div class="topic-post" id="post_1"><div class="topic-avatar"><img src="/u/alice.png" alt=""></div><div class="topic-body"><div class="names"><span class="username"><a href="/u/alice">alice</a></span><span class="post-date">Jan 3</span></div>
<div class="cooked"><p>I have a loop like this and memory grows forever:</p>
<pre><code class="lang-go">for {
    select {
    case m := &lt;-ch:
        handle(m)
    case &lt;-time.After(time.Minute):
        return
    }
}
</code></pre><p>Why does memory grow? pprof shows <code>time.NewTimer</code> allocations.</p></div>
<div class="post-controls"><button>Like</button><button>Reply</button></div></div></div>
<div class="topic-post" id="post_2"><div class="topic-body"><div class="names"><span class="username"><a href="/u/bob">bob</a></span><span class="post-date">Jan 3</span></div>
<div class="cooked"><aside class="quote"><div class="title">alice:</div><blockquote><p>Why does memory grow?</p></blockquote></aside><p>Each iteration creates a new timer that is not garbage collected until it fires (before Go 1.23). Create one timer outside the loop and <code>Reset</code> it:</p>
<pre><code class="lang-go">t := time.NewTimer(time.Minute)
defer t.Stop()
</code></pre></div><div class="post-controls"><button>Like 12</button></div></div></div>
<div class="topic-post" id="post_3"><div class="topic-body"><div class="names"><span class="username"><a href="/u/alice">alice</a></span><span class="post-date">Jan 4</span></div>
<div class="cooked"><p>That fixed it, thanks! Marking as solution.</p></div></div></div>
<div class="suggested-topics"><h3>Suggested Topics</h3><table><tr><td><a href="/t/1">Channel closed twice panic</a></td><td>3</td></tr><tr><td><a href="/t/2">Context cancellation patterns</a></td><td>8</td></tr></table></div>
</div><footer>Powered by Discourse</footer></body></html>`

func TestPolishForum(t *testing.T) {
	u, _ := url.Parse("https://forum.example.com/t/leak/1")
	doc, err := HTMLToMarkdown(polishForum, u)
	if err != nil {
		t.Fatal(err)
	}
	md := doc.Markdown
	for _, w := range []string{"[alice](https://forum.example.com/u/alice) Jan 3", "[bob](https://forum.example.com/u/bob) Jan 3", "> Why does memory grow?", "[alice](https://forum.example.com/u/alice) Jan 4"} {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "\uE002") || strings.Contains(doc.Title, "\uE002") {
		t.Errorf("gap mark leaked: %q / %q", doc.Title, md)
	}
}

func TestMoveLeadingBadges(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"badges before heading", "[![CI](b.svg)](a) [![Go](c.svg)](d)\n\n# fastjson\n\nText.", "# fastjson\n\n[![CI](b.svg)](a) [![Go](c.svg)](d)\n\nText."},
		{"words in first block", "Some words ![x](y)\n\n# T\n\nText.", "Some words ![x](y)\n\n# T\n\nText."},
		{"no heading next", "![x](y)\n\nText.", "![x](y)\n\nText."},
		{"heading first", "# T\n\n![x](y)", "# T\n\n![x](y)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := moveLeadingBadges(tt.in); got != tt.want {
				t.Errorf("moveLeadingBadges(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A README whose badges precede the title heading: the heading is handled
// as when no badges precede it (dropped as the title), the badges stay.
func TestPolishBadgesTitle(t *testing.T) {
	page := `<html><head><title>fastjson</title></head><body><article class="markdown-body">
<p><a href="https://ci.example.com/x"><img src="https://ci.example.com/badge.svg" alt="CI"></a> <a href="https://goreportcard.com/x"><img src="https://goreportcard.com/badge.svg" alt="Go Report Card"></a></p>
<h1>fastjson</h1><p>fastjson parses JSON up to ten times faster than encoding/json, without any code generation step at build time.</p>
<h2>Install</h2><p>Run go get for the module and import the package; there are no other dependencies to install or configure.</p></article></body></html>`
	u, _ := url.Parse("https://example.com/octo/fastjson")
	doc, err := HTMLToMarkdown(page, u)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(doc.Markdown, "# fastjson") {
		t.Errorf("title heading kept:\n%s", doc.Markdown)
	}
	if !strings.HasPrefix(doc.Markdown, "[![CI]") && !strings.Contains(doc.Markdown, "fastjson parses") {
		t.Errorf("unexpected markdown:\n%s", doc.Markdown)
	}
}

func TestPolishTreeGaps(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"classed spans", `<div><span class="user">alice</span><span class="date">Jan 3</span></div>`, "alice Jan 3"},
		{"code spans untouched", `<pre><span class="k">func</span><span class="n">main</span></pre>`, "funcmain"},
		{"plain spans untouched", `<p><span>Hel</span><span>lo</span></p>`, "Hello"},
		{"already spaced", `<div><span class="a">alice</span> <span class="b">Jan</span></div>`, "alice Jan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := html.Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			markdown.Polish(doc)
			got := strings.ReplaceAll(dom.TextContent(doc), markdown.GapMark, " ")
			if got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDetailsSummaryApartFromBody: a <details>'s <summary> and a text or
// inline answer after it come back as separate blocks, closed or open, in
// an article or in a list item (newcomer review W9).
func TestDetailsSummaryApartFromBody(t *testing.T) {
	p := `<p>For two centuries the lighthouse keepers of the northern coast tended their lamps through storms, trimming wicks and logging every vessel.</p>`
	for _, h := range []string{
		`<details><summary>How often?</summary>Every night, <em>without</em> fail.</details>`,
		`<details open><summary>How often?</summary>Every night, <em>without</em> fail.</details>`,
		// (Inline elements in a paragraph in a list item are split
		// apart by another, older defect; plain text here.)
		`<ul><li><details><summary>How often?</summary>Every night, without fail.</details></li></ul>`,
	} {
		d, err := HTMLToMarkdown("<html><body><article>"+p+p+h+p+"</article></body></html>", nil)
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(d.Markdown, "How often?")
		j := max(strings.Index(d.Markdown, "Every night, *without* fail."), strings.Index(d.Markdown, "Every night, without fail."))
		if i < 0 || j < 0 || !strings.Contains(d.Markdown[i:j], "\n") {
			t.Errorf("%s: summary and body not apart:\n%s", h, d.Markdown)
		}
	}
}
