package content

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
)

// TestTrafilaturaDumpOfAPageWithoutParagraphs: on a page whose text is not
// in <p> elements (a chart, a listing of cards), go-trafilatura's baseline
// rescue returns one paragraph holding every word of the body; that is
// spotted as the rescue (so the merge does not take it for an extraction),
// while one real paragraph of a page is not.
func TestTrafilaturaDumpOfAPageWithoutParagraphs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><body><nav>Menu Sign in Watchlist</nav><main><h1>Most popular movies</h1><ul>`)
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, `<li><div><h3>Title number %d</h3><span>2026 1h 54m R</span><span>Rated %d.5 by viewers</span></div></li>`, i, i%9)
	}
	b.WriteString(`</ul></main><footer>Back to top</footer></body></html>`)
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	result := func(text string) *trafilatura.ExtractResult {
		body := &html.Node{Type: html.ElementNode, Data: "body"}
		p := &html.Node{Type: html.ElementNode, Data: "p"}
		p.AppendChild(&html.Node{Type: html.TextNode, Data: text})
		body.AppendChild(p)
		return &trafilatura.ExtractResult{ContentNode: body, ContentText: text}
	}
	dump := dom.CollapseSpace(dom.TextContent(doc))
	if !trafilaturaRescued(result(dump), doc) {
		t.Error("the dump of the whole body was taken for an extraction")
	}
	one := strings.Repeat("The keeper climbed the hundred steps every evening and trimmed the wick. ", 40)
	page, _ := html.Parse(strings.NewReader(`<html><body><nav>Home About Contact</nav><main><div>` + one + `</div><section>` + strings.Repeat("Another section of text, on a different subject, about ships and weather. ", 40) + `</section></main></body></html>`))
	if trafilaturaRescued(result(dom.CollapseSpace(one)), page) {
		t.Error("one block of a longer page was taken for the dump")
	}
}
