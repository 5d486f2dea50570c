package content

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// parseFragment parses an HTML fragment into a detached <div>.
func parseFragment(t *testing.T, fragment string) *html.Node {
	t.Helper()
	ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(fragment), ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		ctx.AppendChild(n)
	}
	return ctx
}
