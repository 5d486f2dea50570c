package visibility

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestParseSheetKeys checks that parseSheet given the page's keys (which
// skips compiling selectors no element can match) indexes the same rules
// for the page's elements (the caps cut the same rules) and returns nil exactly
// when it does without them.
func TestParseSheetKeys(t *testing.T) {
	page := `<html><body><div id=main class="post wide"><p class=note>x</p><span>y</span></div></body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	keys := &pageKeys{tags: map[string]bool{}, ids: map[string]bool{}, classes: map[string]bool{}}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			keys.add(n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	many := func(rule string, n int) string { return strings.Repeat(rule+"\n", n) }
	sheets := map[string]string{
		"present hiding rule":         `.note{display:none} .absent{color:red}`,
		"only an absent hiding rule":  `.absent{display:none} p{color:red}`,
		"absent rule sets display":    `#nothere{display:block}`,
		"invalid absent hiding rule":  `.absent::before{display:none} p{color:red}`,
		"mixed list":                  `.absent, .note, #main > span, nav li{visibility:hidden}`,
		"media and repeats":           `@media screen{.note{display:none}.absent{display:none}} .note{display:none}`,
		"cap of hiding rules":         many(`.absent{display:none}`, maxStyleRules) + `.note{display:none}`,
		"cap, absent invalid":         many(`.absent::before{display:none}`, maxStyleRules) + `.note{display:none}`,
		"cap of other rules":          many(`.absent{display:block}`, maxStyleRules) + `span{display:inline}`,
		"no rule Gatehouse reads":     `.absent{color:red} p{margin:0}`,
		"universal and tag selectors": `*{display:block} SPAN{display:none} svg{display:none}`,
	}
	for name, css := range sheets {
		for _, keep := range []bool{false, true} {
			want, got := parseSheet(css, keep, nil), parseSheet(css, keep, keys)
			if (want == nil) != (got == nil) {
				t.Fatalf("%s (keep %v): nil %v with keys, %v without", name, keep, got == nil, want == nil)
			}
			if want == nil {
				continue
			}
			// (sh.n and sh.nHides only serve the caps while parsing:
			// pending selectors are not counted when no cap is near.)
			same := func(what string, a, b []*cssRule) {
				if len(a) != len(b) {
					t.Fatalf("%s: %s: %d rules with keys, %d without", name, what, len(b), len(a))
				}
				for i := range a {
					if a[i].hides != b[i].hides || a[i].spec != b[i].spec || len(a[i].decls) != len(b[i].decls) || (a[i].order < a[len(a)-1].order) != (b[i].order < b[len(b)-1].order) {
						t.Fatalf("%s: %s: rule %d differs", name, what, i)
					}
				}
			}
			same("universal", want.universal, got.universal)
			for k := range keys.tags {
				same("tag "+k, want.byTag[k], got.byTag[k])
			}
			for k := range keys.ids {
				same("id "+k, want.byID[k], got.byID[k])
			}
			for k := range keys.classes {
				same("class "+k, want.byClass[k], got.byClass[k])
			}
		}
	}
}
