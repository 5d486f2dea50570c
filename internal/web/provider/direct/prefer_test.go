package direct

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

func TestPreferFetched(t *testing.T) {
	article := strings.Repeat("The keeper climbed the hundred steps every evening at dusk. ", 20)
	doc := func(md string) content.Document { return content.Document{Kind: content.KindHTML, Markdown: md} }
	empty := reason.New(reason.EmptyContent, "", "no readable main content")
	for _, c := range []struct {
		name        string
		fetched     content.Document
		fetchedErr  error
		rendered    content.Document
		renderedErr error
		want        string
	}{
		{"interstitial replaced the article", doc(article), nil, doc("# One moment\n\nThis page is not available right now."), nil, DiscardedLessText},
		{"rendered has no content", doc(article), nil, content.Document{}, empty, DiscardedNoContent},
		{"script added comments", doc(article), nil, doc(article + "\n\n## Comments\n\nGreat read!"), nil, ""},
		{"a little less (a teaser line dropped)", doc(article), nil, doc(article[:len(article)*2/3]), nil, ""},
		{"application shell: nothing fetched", content.Document{}, empty, doc("# Harbour lights\n\nThe app's text."), nil, ""},
		{"both empty", content.Document{}, empty, content.Document{}, empty, ""},
		{"fetched only a heading, rendered empty", doc("# Title"), nil, doc(""), nil, DiscardedLessText},
	} {
		code, note := PreferFetched(c.fetched, c.fetchedErr, c.rendered, c.renderedErr)
		if code != c.want || (code == "") != (note == "") {
			t.Errorf("%s: code %q note %q, want %q", c.name, code, note, c.want)
		}
	}
}

func TestTextSizeSkipsLinkTargets(t *testing.T) {
	for md, want := range map[string]int{
		"":                0,
		"Hello, world 42": 12,
		"[a link](https://example.com/long/path) text": 9,
		"![photo](https://example.com/p.png)":          5,
		"日本語のテキスト":                                     8,
		"unclosed ](target":                            14,
	} {
		if got := textSize(md); got != want {
			t.Errorf("textSize(%q) = %d, want %d", md, got, want)
		}
	}
}
