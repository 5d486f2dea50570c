package markdown

import (
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
)

func TestRenderLargestCandidate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a.png", "a.png"},
		{"a.png 1x, b.png 2x", "b.png"},
		{"b.png 800w, a.png 480w", "b.png"},
		{"data:image/gif;base64,xx 1x, c.png 1x", "c.png"},
		{"", ""},
		{" , ", ""},
	} {
		if got := largestCandidate(tc.in); got != tc.want {
			t.Errorf("largestCandidate(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestRenderLargestCandidateCommas(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://cdn.ex/w_480,h_300/a.jpg 480w, https://cdn.ex/w_960,h_600/a.jpg 960w", "https://cdn.ex/w_960,h_600/a.jpg"},
		{"a.png, b.png 2x", "b.png"},
	} {
		if got := largestCandidate(tc.in); got != tc.want {
			t.Errorf("largestCandidate(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestRenderRepairHref(t *testing.T) {
	// link is <a href=…>: the attribute as the parser leaves it.
	link := func(href string) *html.Node {
		return &html.Node{Type: html.ElementNode, Data: "a", DataAtom: atom.A, Attr: []html.Attribute{{Key: "href", Val: href}}}
	}
	for _, tc := range []struct{ in, want string }{
		{"https://ex.com/a/b.html/mailto:sales@ex.com", "mailto:sales@ex.com"},
		{"https://cdn.ex.org/assets/mailto:a@b.c", "mailto:a@b.c"},
		{"https://ex.com/a/mailto%3Aa%40b.c", "mailto:a@b.c"},
		{"https://ex.com/a/tel:+15551234", "tel:+15551234"},
		{"mailto:a@b.c", "mailto:a@b.c"},
		{"https://en.wikipedia.org/wiki/Tel:Aviv", "https://en.wikipedia.org/wiki/Tel:Aviv"},
		{"https://ex.com/wiki/Mailto:list", "https://ex.com/wiki/Mailto:list"},
		{"https://commons.wikimedia.org/wiki/Data:Foo.map", "https://commons.wikimedia.org/wiki/Data:Foo.map"},
		{"other.html", "other.html"},
	} {
		a := link(tc.in)
		repairHref(a)
		if got, _ := dom.Attr(a, "href"); got != tc.want || scriptTarget(a) {
			t.Errorf("repairHref(%q) = %q (script %v); want %q", tc.in, got, scriptTarget(a), tc.want)
		}
	}
	for _, in := range []string{"javascript:void(0)", "https://ex.com/a/javascript:alert(1)", " vbscript:x", "data:text/html,hi"} {
		a := link(in)
		if !scriptTarget(a) {
			t.Errorf("scriptTarget(%q) = false", in)
		}
	}
	if a := link("data:image/png;base64,AA"); scriptTarget(a) {
		t.Error("data:image link counted as script")
	}
}
