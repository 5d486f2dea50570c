package content

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
)

// threadWords make each post's text its own.
var threadWords = []string{
	"a sump with a refugium keeps nitrate low over many months",
	"the return pump should turn the volume over ten times an hour",
	"live rock seeds bacteria faster than dry rock ever could",
	"dosing alkalinity by hand gets old after the first few weeks",
	"an auto top off saved my corals during a long holiday",
	"quarantine every fish for a month before it joins the display",
	"skimmers rated for twice the volume perform better in practice",
}

// threadPage is a forum thread of n posts (div.post siblings), each with
// its own sentence, and a short site header.
func threadPage(n int, wrap func(string) string) (string, []string) {
	var posts []string
	var b strings.Builder
	for i := range n {
		w := threadWords[i%len(threadWords)]
		text := fmt.Sprintf("Reply number %d says: %s %s %s, then %s %s.", i+1, w, threadWords[(i+1)%len(threadWords)], w, threadWords[(i+2)%len(threadWords)], w)
		posts = append(posts, text)
		fmt.Fprintf(&b, `<div class="post message"><div class="author">user%d</div><div class="body"><p>%s</p></div></div>`, i, text)
	}
	return `<html><head><title>New tank thoughts</title></head><body><header><a href="/">Forum</a></header>` +
		`<h1>New tank thoughts</h1>` + wrap(`<div class="thread">`+b.String()+`</div>`) + `</body></html>`, posts
}

func parsePage(t *testing.T, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestRecordsFragment: one post of a thread is a fragment of its records;
// all posts, or an answer drawn from outside the records, are not.
func TestRecordsFragment(t *testing.T) {
	page, posts := threadPage(6, func(s string) string { return s })
	r := findRecords(parsePage(t, page))
	if r == nil || len(r.sets) != 6 {
		t.Fatalf("records = %+v, want the 6 posts", r)
	}
	if !r.fragmentOf(posts[0]) {
		t.Errorf("the first post alone is not taken for a fragment (cover %.2f)", r.cover(posts[0]))
	}
	if all := strings.Join(posts, "\n\n"); r.fragmentOf(all) || r.cover(all) != 1 {
		t.Errorf("all posts: fragment=%v cover=%.2f, want false and 1", r.fragmentOf(all), r.cover(all))
	}
	if other := "An article about something else entirely, with its own sentences and words."; r.fragmentOf(other) {
		t.Error("an answer from outside the records is taken for a fragment")
	}
	// An article: its paragraphs are the group, and the answer covers them.
	article := `<html><body><article>` + strings.Repeat(`<p>This paragraph of the article has enough words in it to read as prose for a reader.</p>`, 5) + `</article></body></html>`
	ra := findRecords(parsePage(t, article))
	if ra.fragmentOf(strings.Repeat("This paragraph of the article has enough words in it to read as prose for a reader.\n\n", 5)) {
		t.Error("a whole article is taken for a fragment of its paragraphs")
	}
}

// TestContentFormUnwrapped: a form wrapping a thread's posts (Invision
// Community's moderation form) becomes a <div>; a search form stays.
func TestContentFormUnwrapped(t *testing.T) {
	page, _ := threadPage(4, func(s string) string {
		return `<form action="/search" method="get"><input name="q"><button>Search</button></form><form action="?do=multimod" method="post">` + s + `</form>`
	})
	doc := parsePage(t, page)
	unwrapContentForms(doc)
	forms, divs := 0, 0
	dom.Walk(doc, func(n *html.Node) bool {
		if dom.IsElem(n, "form") {
			forms++
		}
		if dom.IsElem(n, "div") {
			if _, ok := dom.Attr(n, "action"); !ok && n.FirstChild != nil && dom.IsElem(n.FirstChild, "div") && dom.HasAnyClass(n.FirstChild, []string{"thread"}) {
				divs++
			}
		}
		return true
	})

	if forms != 1 || divs != 1 {
		t.Fatalf("forms=%d unwrapped=%d, want the search form kept and the post form a div", forms, divs)
	}
	d, err := HTMLToMarkdown(page, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "Reply number 4 says") {
		t.Errorf("posts inside the form are missing:\n%s", d.Markdown)
	}
}

// TestCommentsThatAreTheContent: a thread marked up as a comment section
// (class "comments") is kept when the page has nothing else; after an
// article it is still removed.
func TestCommentsThatAreTheContent(t *testing.T) {
	page, _ := threadPage(4, func(s string) string { return `<main><div id="comments">` + s + `</div></main>` })
	d, err := HTMLToMarkdown(page, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "Reply number 1 says") {
		t.Errorf("the thread was removed as comments:\n%s", d.Markdown)
	}
	article := `<html><head><title>A</title></head><body><main><article>` +
		strings.Repeat(`<p>The article explains the new tank in detail, with enough words to read as prose for a reader.</p>`, 6) +
		`</article><div id="comments"><p>Comment: nice tank, what pump model do you use for this size of reef tank here?</p></div></main></body></html>`
	d, err = HTMLToMarkdown(article, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Markdown, "Comment: nice tank") {
		t.Errorf("the comment section of an article was kept:\n%s", d.Markdown)
	}
}

// TestNoscriptView: a <noscript> holding the page (Discourse's crawler
// view) is converted as markup, never as escaped HTML source; a small
// <noscript> (a tracking pixel, "enable JavaScript") stays out.
func TestNoscriptView(t *testing.T) {
	posts := strings.Repeat(`<div class="crawler-post"><span class="creator">alice</span><div class="post"><p>Bumping the minimum supported version has never been broadly considered a breaking change by most crates.</p></div></div>`, 4)
	page := `<html><head><title>MSRV</title></head><body><section id="d-splash">Loading</section>` +
		`<noscript><img src="https://t.example/pixel.gif">Please enable JavaScript to use every feature of this forum.</noscript>` +
		`<noscript data-path="/t/msrv/1"><div id="main-outlet" role="main"><h1>MSRV</h1>` + posts + `</div></noscript></body></html>`
	d, err := HTMLToMarkdown(page, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<div", `\<`, "enable JavaScript", "pixel.gif"} {
		if strings.Contains(d.Markdown, bad) {
			t.Errorf("markdown holds %q:\n%s", bad, d.Markdown)
		}
	}
	if !strings.Contains(d.Markdown, "Bumping the minimum supported version") {
		t.Errorf("the crawler view's posts are missing:\n%s", d.Markdown)
	}
}
