package content

import (
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"golang.org/x/net/html"
)

// A blog post whose body is text directly in a <div>, paragraphs apart by
// "<br><br>" (Blogger's post body): each sentence comes back once, as its
// own paragraph. go-trafilatura alone emits such a body two or three times
// (the whole <div> as one paragraph, then each <br>'s tail).
func TestBreaksArticleOnce(t *testing.T) {
	sentences := []string{
		"The council approved the new cycle lanes on the high street this morning after a long debate between the traders and the residents",
		"Work on the first section starts next month and should take about six weeks if the weather holds",
		"Traders asked for loading bays to be kept near the market square, and the plan now keeps two of them open before ten in the morning.",
		"The second section, along the river, waits for a survey of the old bridge that the county expects to finish in the spring.",
	}
	page := `<html><head><title>Cycle lanes approved</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<div class="main"><div class="post"><h1 class="post-title">Cycle lanes approved</h1>
<div class="post-meta"><span class="post-author"><a href="/profile/1">Editor</a></span> <span class="post-date">August 08, 2018</span></div>
<div class="post-body post-content">
` + sentences[0] + `<br>
<div class="separator" style="clear: both;"><a href="/img/lanes.jpg"><img src="/img/lanes-small.jpg" width="320"></a></div>
<br>
` + sentences[1] + `<br>
<br>
` + sentences[2] + `<br>
<br>
` + sentences[3] + `
</div>
<div class="post-footer"><span>Tags:</span> <a href="/label/news">News</a></div>
</div></div>
<footer>Copyright 2018</footer></body></html>`
	u, _ := url.Parse("https://blog.example.com/2018/08/lanes.html")
	doc, err := HTMLToMarkdown(page, u)
	if err != nil {
		t.Fatalf("HTMLToMarkdown: %v", err)
	}
	md := doc.Markdown
	for _, s := range sentences {
		if n := strings.Count(md, s); n != 1 {
			t.Errorf("sentence %q appears %d times, want once; markdown:\n%s", s[:40], n, md)
		}
	}
	for _, b := range splitBlocks(md) {
		n := 0
		for _, s := range sentences {
			if strings.Contains(b.text, s) {
				n++
			}
		}
		if n > 1 {
			t.Errorf("block holds %d paragraphs, want one each:\n%s", n, b.text)
		}
	}
}

func TestBreaksToParagraphs(t *testing.T) {
	tests := []struct{ in, want string }{
		// "<br><br>" ends a paragraph; a single <br> stays a line break.
		{`<div>one<br>two<br><br>three<br> <br>four</div>`, `<div><p>one<br/>two</p><p>three</p> <p>four</p></div>`},
		// Block children stay; the runs around them become paragraphs.
		{`<div>intro <b>bold</b> text<br><div>block</div><br>after</div>`, `<div><p>intro <b>bold</b> text</p><div>block</div><p>after</p></div>`},
		// Without a line break or without text of its own: unchanged.
		{`<div>one two <i>three</i></div>`, `<div>one two <i>three</i></div>`},
		{`<div><span>one</span><br><span>two</span></div>`, `<div><span>one</span><br/><span>two</span></div>`},
		// Only block containers: a cell or a paragraph is left alone.
		{`<table><tbody><tr><td>a<br><br>b</td></tr></tbody></table>`, `<table><tbody><tr><td>a<br/><br/>b</td></tr></tbody></table>`},
		{`<p>a<br><br>b</p>`, `<p>a<br/><br/>b</p>`},
		// Code keeps its breaks.
		{`<pre><div>x<br><br>y</div></pre>`, `<pre><div>x<br/><br/>y</div></pre>`},
	}
	for _, tt := range tests {
		doc, err := html.Parse(strings.NewReader("<html><body>" + tt.in + "</body></html>"))
		if err != nil {
			t.Fatal(err)
		}
		markdown.BreaksToParagraphs(doc)
		var sb strings.Builder
		for c := findBody(doc).FirstChild; c != nil; c = c.NextSibling {
			if err := html.Render(&sb, c); err != nil {
				t.Fatal(err)
			}
		}
		if got := sb.String(); got != tt.want {
			t.Errorf("markdown.BreaksToParagraphs(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func findBody(n *html.Node) *html.Node {
	var body *html.Node
	dom.Walk(n, func(c *html.Node) bool {
		if body == nil && dom.IsElem(c, "body") {
			body = c
		}
		return body == nil
	})

	return body
}

// FuzzBreaksToParagraphs: on any tree, markdown.BreaksToParagraphs keeps every
// text node in document order (it only moves nodes into new <p> elements
// and removes <br>), and the result renders and parses again.
func FuzzBreaksToParagraphs(f *testing.F) {
	for _, s := range []string{
		`<div>one<br>two<br><br>three<br> <br>four</div>`,
		`<div>intro <b>bold</b><br><div>block</div><br>after<!-- c --><br><br></div>`,
		`<section>a<br><img src=x><br><br><span>b</span><br><pre>c<br><br>d</pre></section>`,
		`<div><br><br>x<br></div><center>y<br><br><br>z</center>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return
		}
		texts := func() string {
			var sb strings.Builder
			dom.Walk(doc, func(n *html.Node) bool {
				if n.Type == html.TextNode {
					sb.WriteString(n.Data)
				}
				return true
			})

			return sb.String()
		}
		before := texts()
		markdown.BreaksToParagraphs(doc)
		if after := texts(); after != before {
			t.Fatalf("text changed:\n before %q\n after  %q", before, after)
		}
		var sb strings.Builder
		if err := html.Render(&sb, doc); err != nil {
			t.Fatalf("render: %v", err)
		}
	})
}
