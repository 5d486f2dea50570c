package content

import (
	"fmt"
	"strings"
	"testing"
)

// multiPagePDF is a PDF of len(pages) pages, page i showing pages[i] ("" =
// a page without text).
func multiPagePDF(pages ...string) []byte {
	n := len(pages)
	kids := make([]string, n)
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	font := 3 + 2*n
	for i, text := range pages {
		page, content := 3+2*i, 4+2*i
		kids[i] = fmt.Sprintf("%d 0 R", page)
		stream := "BT /F1 18 Tf 72 720 Td ET\n"
		if text != "" {
			stream = fmt.Sprintf("BT /F1 18 Tf 72 720 Td (%s) Tj ET\n", text)
		}
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>", content, font),
			fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(stream), stream))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	objs = append(objs, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	return assemblePDF("%PDF-1.4\n", objs, "")
}

func TestPDFPageMarkersAndCount(t *testing.T) {
	doc, err := Convert(multiPagePDF("First page text", "", "Third page text"), "application/pdf", nil)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages != 3 {
		t.Errorf("Pages = %d, want 3", doc.Pages)
	}
	want := "--- page 1 ---\n\nFirst page text\n\n--- page 3 ---\n\nThird page text\n"
	if doc.Markdown != want {
		t.Errorf("Markdown = %q, want %q", doc.Markdown, want)
	}
	one, err := Convert(minimalPDF("T", "Only page"), "application/pdf", nil)
	if err != nil {
		t.Fatal(err)
	}
	if one.Pages != 1 || strings.Contains(one.Markdown, "--- page") {
		t.Errorf("single page: Pages=%d Markdown=%q (no marker wanted)", one.Pages, one.Markdown)
	}
}

const metaBody = `<article><h1>Harbour lights</h1>
<p>The harbour master kept the lights burning through the long winter nights, and every ship that passed the rocks owed him its safe passage home.</p>
<p>Read the <a href="/history">history of the harbour</a> and the <a href="https://other.example/tides#today">tide tables</a>.</p></article>`

func TestMetadataFromMetaTags(t *testing.T) {
	page := `<!doctype html><html lang="en-GB"><head><title>Harbour lights | Coast News</title>
<meta name="description" content="  How the   harbour stayed lit. ">
<meta name="author" content="Ann Keeper">
<meta property="article:published_time" content="2024-03-05T09:30:00+01:00">
<meta property="og:site_name" content="Coast News">
<meta property="og:description" content="OG description, not used">
<link rel="canonical" href="/news/harbour-lights">
</head><body>` + metaBody + `</body></html>`
	doc, err := Convert([]byte(page), "text/html", mustURL(t, "https://coast.example/news/harbour-lights?utm=x"))
	if err != nil {
		t.Fatal(err)
	}
	want := Metadata{Description: "How the harbour stayed lit.", Author: "Ann Keeper", Published: "2024-03-05T09:30:00+01:00",
		Language: "en-GB", CanonicalURL: "https://coast.example/news/harbour-lights", SiteName: "Coast News"}
	if doc.Meta != want {
		t.Errorf("Meta = %+v\nwant   %+v", doc.Meta, want)
	}
}

func TestMetadataFromJSONLDOnly(t *testing.T) {
	page := `<html><head><title>Harbour lights</title>
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
 {"@type":"WebSite","name":"Coast News Site"},
 {"@type":["NewsArticle"],"headline":"Harbour lights","description":"From JSON-LD.","datePublished":"2023-11-02",
  "author":[{"@type":"Person","name":"Ann Keeper"},{"@type":"Person","name":"Bo Tide"}],
  "publisher":{"@type":"Organization","name":"Coast News"},"inLanguage":"fr","url":"https://coast.example/a"}]}</script>
<script type="application/ld+json">{ not json </script>
</head><body>` + metaBody + `</body></html>`
	doc, err := Convert([]byte(page), "text/html", mustURL(t, "https://coast.example/a"))
	if err != nil {
		t.Fatal(err)
	}
	want := Metadata{Description: "From JSON-LD.", Author: "Ann Keeper, Bo Tide", Published: "2023-11-02",
		Language: "fr", CanonicalURL: "https://coast.example/a", SiteName: "Coast News"}
	if doc.Meta != want {
		t.Errorf("Meta = %+v\nwant   %+v", doc.Meta, want)
	}
}

func TestMetadataNone(t *testing.T) {
	doc, err := Convert([]byte(`<html><head><title>x</title></head><body>`+metaBody+`</body></html>`), "text/html", mustURL(t, "https://coast.example/a"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Meta != (Metadata{}) {
		t.Errorf("Meta = %+v, want none", doc.Meta)
	}
}

func TestLinksMainFirstDistinctCapped(t *testing.T) {
	var nav strings.Builder
	nav.WriteString(`<nav>`)
	nav.WriteString(`<a href="/history">History again</a><a href="mailto:a@b.c">mail</a><a href="javascript:x()">js</a><a href="#top">top</a>`)
	nav.WriteString(`<a href="https://coast.example/a#frag">self</a><a href="/img"><img alt="Picture"></a>`)
	for i := 0; i < MaxLinks+20; i++ {
		fmt.Fprintf(&nav, `<a href="/n/%d">Nav %d</a>`, i, i)
	}
	nav.WriteString(`</nav>`)
	page := `<html><head><title>x</title></head><body>` + nav.String() + metaBody + `</body></html>`
	doc, err := Convert([]byte(page), "text/html", mustURL(t, "https://coast.example/a"))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Links) != MaxLinks || doc.LinksTotal != MaxLinks+23 {
		t.Fatalf("links %d (total %d), want %d of %d", len(doc.Links), doc.LinksTotal, MaxLinks, MaxLinks+23)
	}
	// Main-content links first, in document order, with their first text.
	if l := doc.Links[0]; l.URL != "https://coast.example/history" || !l.Main || l.Text != "History again" {
		t.Errorf("first link %+v", l)
	}
	if l := doc.Links[1]; l.URL != "https://other.example/tides" || !l.Main || l.Text != "tide tables" {
		t.Errorf("second link %+v", l)
	}
	if l := doc.Links[2]; l.URL != "https://coast.example/img" || l.Main || l.Text != "Picture" {
		t.Errorf("third link %+v", l)
	}
	if l := doc.Links[3]; l.URL != "https://coast.example/n/0" || l.Text != "Nav 0" {
		t.Errorf("fourth link %+v", l)
	}
	seen := map[string]bool{}
	for _, l := range doc.Links {
		if seen[l.URL] || !strings.HasPrefix(l.URL, "https://") || strings.Contains(l.URL, "#") || l.URL == "https://coast.example/a" {
			t.Errorf("bad or repeated link %+v", l)
		}
		seen[l.URL] = true
	}
}

// TestHeadlineKeptWhenTitleOverlaps: the page's <h1> stays in the markdown
// unless it equals the title after normalisation, also when the title is
// part of it or its words occur in the prose (newcomer review W6, issue 6
// item 11); a title that is the <h1> plus a " | Site" suffix still drops
// it.
func TestHeadlineKeptWhenTitleOverlaps(t *testing.T) {
	body := strings.Repeat("<p>For two centuries the lighthouse keepers of the northern coast tended their lamps through storms, trimming wicks and logging every vessel.</p>", 3)
	cases := []struct {
		title, h1, wantTitle string
		kept                 bool
	}{
		{"App", "Rendered App", "App", true},
		{"Lighthouses", "Lighthouses of the North", "Lighthouses", true},
		{"Coast News", "Keepers", "Coast News", true},
		{"Lighthouses of the North | Coast News", "Lighthouses of the North", "Lighthouses of the North", false},
		{"Rendered App", "rendered  APP", "Rendered App", false},
	}
	for _, c := range cases {
		page := "<html><head><title>" + c.title + "</title></head><body><main><article><h1>" + c.h1 + "</h1>" + body + "</article></main></body></html>"
		d, err := HTMLToMarkdown(page, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.Title != c.wantTitle {
			t.Errorf("title %q, h1 %q: Title %q, want %q", c.title, c.h1, d.Title, c.wantTitle)
		}
		if got := strings.HasPrefix(d.Markdown, "# "+c.h1+"\n\nFor two"); got != c.kept {
			t.Errorf("title %q, h1 %q: h1 kept = %v, want %v:\n%.120s", c.title, c.h1, got, c.kept, d.Markdown)
		}
	}
}

// TestLinksEscapedURLsStayMain: a main-content link whose URL holds ( ) [ ]
// keeps main:true and its place with the other main links, and links[].url
// is the URL the markdown shows (the writer percent-encodes those
// characters; breaker6 D8, page as in its repro).
func TestLinksEscapedURLsStayMain(t *testing.T) {
	page := `<html><head><title>LK</title></head><body><nav><a href="http://127.0.0.1:8701/nav">Nav link</a></nav><article><h1>Links</h1>
<p>Body paragraph long enough to be the main content of this article page for extraction purposes, with <a href="http://127.0.0.1:8701/wiki/Foo_(bar)">paren link</a>, <a href="http://127.0.0.1:8701/a%20b">encoded space</a>, <a href="http://127.0.0.1:8701/q?x=[1]">brackets</a>, <a href="http://127.0.0.1:8701/plain">plain</a>, <a href="http://127.0.0.1:8701/é">unicode path</a> and <a href="HTTP://127.0.0.1:8701/UPPER">upper scheme</a>.</p>
<p>More body text here so that the article is clearly the main content of the page and not boilerplate at all.</p></article>
<footer><a href="http://127.0.0.1:8701/foot">Footer</a></footer></body></html>`
	doc, err := Convert([]byte(page), "text/html", mustURL(t, "http://127.0.0.1:8701/lk.html"))
	if err != nil {
		t.Fatal(err)
	}
	main := 0
	for i, l := range doc.Links {
		if l.Main {
			if i != main {
				t.Errorf("main link %s listed at %d after a non-main link", l.URL, i)
			}
			main++
			if !strings.Contains(doc.Markdown, "("+l.URL+")") {
				t.Errorf("links[].url %s is not the markdown's URL:\n%s", l.URL, doc.Markdown)
			}
		}
	}
	if main != 6 {
		t.Fatalf("%d main links, want 6: %+v", main, doc.Links)
	}
}
