package content

import (
	"net/url"
	"strings"
	"testing"
)

// TestRepeatedArticleCopiesDropped: a page holding its article more than
// once (here a visible copy and two more in sibling containers, as a blog
// template's mobile and desktop views) gives each paragraph once, while a
// repeated short line, a repeated table row and repeated code are kept.
func TestRepeatedArticleCopiesDropped(t *testing.T) {
	para := []string{
		"Kepa Arrizabalaga will undergo a medical at the training ground today ahead of making his move to the club official.",
		"The 23-year-old flew to London yesterday evening and will spend the day completing the formalities of the transfer.",
		"This has freed the move of the goalkeeper to the Spanish capital after weeks of talks between the two clubs involved.",
	}
	copyOf := "<div><p>" + strings.Join(para, "</p><p>") + "</p></div>"
	page := "<html><head><title>Transfer news</title></head><body><article><h1>Transfer news</h1>" + copyOf + copyOf + copyOf +
		"<p>Short refrain.</p><p>Short refrain.</p><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr><tr><td>1</td><td>2</td></tr></table>" +
		"<pre><code>x := 1\nx := 1</code></pre></article></body></html>"
	base, _ := url.Parse("https://news.example.com/a")
	d, err := HTMLToMarkdown(page, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range para {
		if n := strings.Count(d.Markdown, p); n != 1 {
			t.Errorf("%d copies of %.40q:\n%s", n, p, d.Markdown)
		}
	}
	if strings.Count(d.Markdown, "| 1 | 2 |") != 2 || strings.Count(d.Markdown, "x := 1") != 2 {
		t.Errorf("table rows or code deduplicated:\n%s", d.Markdown)
	}
}
