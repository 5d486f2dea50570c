package visibility

import (
	"maps"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
)

// TestInlineStyleMemoFollowsAttribute: pageStyles.of parses an element's
// inline style once per value of its style attribute, and a rewritten
// attribute (removeStyleProp, dropOverridden) is read again.
func TestInlineStyleMemoFollowsAttribute(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<p id=a style="visibility:hidden;font-size:1px">x</p>`))
	if err != nil {
		t.Fatal(err)
	}
	p := findElement(doc, "p")
	sty := &pageStyles{}
	if got := sty.of(p)["visibility"]; got != "hidden" {
		t.Fatalf("visibility = %q, want hidden", got)
	}
	removeStyleProp(p, "visibility")
	if got := sty.of(p)["visibility"]; got != "" {
		t.Fatalf("after removeStyleProp: visibility = %q, want none", got)
	}
	if got := sty.of(p)["font-size"]; got != "1px" {
		t.Fatalf("font-size = %q, want 1px", got)
	}
	dom.RemoveAttr(p, "style")
	if got := sty.of(p); got != nil {
		t.Fatalf("without a style attribute: %v, want nil", got)
	}
	// The memo gives what parsing gives.
	p.Attr = append(p.Attr, html.Attribute{Key: "style", Val: "color:red;color:blue !important;display:block"})
	if got, want := sty.of(p), parseInlineStyle(p); !maps.Equal(got, want) {
		t.Fatalf("memoised %v, parsed %v", got, want)
	}
}

// findElement returns the first element named tag under n, or nil.
func findElement(n *html.Node, tag string) *html.Node {
	if n.Type == html.ElementNode && n.Data == tag {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findElement(c, tag); f != nil {
			return f
		}
	}
	return nil
}

// TestTextLenWithoutLens: TextLen with a nil lens measures without
// recording (and without allocating), as the callers that need one
// length only (the noscript view, content forms) use it.
func TestTextLenWithoutLens(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<body><div> ab <p>cd</p><script>x()</script></div><form><p> ef </p></form></body>`))
	if err != nil {
		t.Fatal(err)
	}
	lens := map[*html.Node]int{}
	if got, want := TextLen(doc, nil), TextLen(doc, lens); got != want || got != 6 {
		t.Errorf("TextLen(doc, nil) = %d, with lens %d, want 6", got, want)
	}
	if n := testing.AllocsPerRun(10, func() { _ = TextLen(doc, nil) }); n != 0 {
		t.Errorf("TextLen(doc, nil): %.0f allocations, want 0", n)
	}
}
