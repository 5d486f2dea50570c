package content

import (
	"fmt"
	"golang.org/x/net/html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/content/visibility"
)

// FuzzHTMLToMarkdown builds an article page from the fuzzer's bytes (text
// with markup characters and entities, inline elements, links, hidden
// elements, nesting in lists, quotes and tables, all inside long prose
// paragraphs so that the main-content extractors keep them) and checks the
// whole HTML→markdown path (both extractors, the merge, the conversion):
//   - the markdown is valid UTF-8;
//   - no character reference ("&gt;", "&#62;") is left in the text outside
//     code: every entity is decoded once ("\&" marks page text that reads
//     like one);
//   - no text of a hidden element (fuzzHiddenKinds) is in the output;
//   - every link target of the visible main content is in the output.
func FuzzHTMLToMarkdown(f *testing.F) {
	for _, s := range []string{"", "\x01\x02\x03", "hello\x10world\x11\x12", "\x04\x05\x00\x07\x08\x06", "\x0b\x0c\x0d\x0e\x0f\x09", "ab\x01\x01\x03\x0a\x02"} {
		f.Add([]byte(s))
	}
	base, _ := url.Parse("https://example.com/post")
	f.Fuzz(func(t *testing.T, data []byte) {
		page, links, hidden := fuzzArticle(data)
		doc, err := HTMLToMarkdown(page, base)
		if err != nil {
			t.Fatalf("no markdown for an article: %v\n%s", err, page)
		}
		md := doc.Markdown
		if !utf8.ValidString(md) {
			t.Fatal("markdown is not valid UTF-8")
		}
		if m := rawEntity(md); m != "" {
			t.Fatalf("raw entity %q left in:\n%s\npage:\n%s", m, md, page)
		}
		loading := false
		if tree, err := html.Parse(strings.NewReader(page)); err == nil {
			loading = visibility.LoadingState(tree)
		}
		for _, h := range hidden {
			if loading && strings.HasPrefix(h, fuzzScriptedMark) {
				continue // a page that hides a quarter of its text so: kept (loadingState)
			}
			if strings.Contains(md, h) {
				t.Fatalf("hidden text %q in:\n%s\npage:\n%s", h, md, page)
			}
		}
		for _, l := range links {
			if !strings.Contains(md, "("+l) {
				t.Fatalf("link %q missing in:\n%s\npage:\n%s", l, md, page)
			}
		}
	})
}

// fuzzHiddenKinds are the hidden elements the fuzz page may contain: the
// ones the pipeline must drop (hidden.go, issue 6 item 4).
var fuzzHiddenKinds = []string{
	`<span style="display:none">%s</span>`,
	`<span style="visibility:hidden">%s</span>`,
	`<noscript>%s</noscript>`,
	`<span hidden>%s</span>`,
	`<template><p>%s</p></template>`,
	`<dialog><p>%s</p></dialog>`,
	`<div aria-hidden="true" style="position:absolute;left:-9999px">%s</div>`,
	`<span hidden="until-found">%s</span>`,
	`<span style="DISPLAY: NONE !important">%s</span>`,
	`<span style="visibility:collapse">%s</span>`,
	`<span style="content-visibility:hidden">%s</span>`,
	`<span style="visibility:hidden">%s<span style="visibility:visible"> shown </span></span>`,
	`<span aria-hidden="true" style="position:absolute;clip:rect(0 0 0 0)">%s</span>`,
	// Inline styles that hide without display or visibility, and the
	// page's own stylesheet (newcomer review S5).
	`<span style="opacity:0">%s</span>`,
	`<span style="font-size:0">%s</span>`,
	`<span style="position:absolute;left:-9999px">%s</span>`,
	`<span style="text-indent:-9999px;display:inline-block">%s</span>`,
	`<span style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)">%s</span>`,
	`<span style="clip-path:inset(50%%);width:1px;height:1px;overflow:hidden">%s</span>`,
	`<style>.fzx{display:none}</style><span class="fzx">%s</span>`,
	`<style>#fzv{visibility:hidden}</style><span id="fzv">%s</span>`,
	`<style>.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);border:0}</style><span class="sr-only">%s</span>`,
	`<style>@media screen{.fzo{opacity:0}}</style><span class="fzo">%s</span>`,
	`<style>.fzf{font-size:0}</style><span class="fzf">%s</span>`,
}

// fuzzScriptedKinds are the fuzzHiddenKinds a page's scripts undo to show
// content (hideAnimated): kept when they hide a quarter of the page
// (loadingState), so their texts carry fuzzScriptedMark.
var fuzzScriptedKinds = map[int]bool{1: true, 9: true, 11: true, 13: true, 20: true, 22: true}

const fuzzScriptedMark = "SCRIPTHIDDEN"

// fuzzWords are texts with markup characters and entities.
var fuzzWords = []string{
	"MAX_RETRY_COUNT", "a*b*c", "~/notes", "[a-z]+", "10 &gt; 5", "x &amp; y", "&lt;div&gt;",
	"&#62; quote", "&quot;q&quot;", "caf&eacute;", "a&nbsp;b", "&amp;gt;", "snake_case", "#hash", "1. not",
	"back\\slash", "`tick`", "| pipe", "<", ">", "&", "_lead_", "**star**",
}

// fuzzArticle turns data into an article page; it returns the page, the
// link targets of its main content and the texts of its hidden elements.
func fuzzArticle(data []byte) (page string, links, hidden []string) {
	var b strings.Builder
	sentence := "This sentence belongs to the article body and is long enough to read as prose for the extractors"
	block := func(inner string) string { return sentence + " " + inner + " and " + sentence + "." }
	var cur strings.Builder
	var blocks []string
	flush := func(kind byte) {
		inner := cur.String()
		cur.Reset()
		switch kind % 5 {
		case 0:
			blocks = append(blocks, "<p>"+block(inner)+"</p>")
		case 1:
			blocks = append(blocks, "<ul><li>"+block(inner)+"</li><li>"+block("second item")+"</li></ul>")
		case 2:
			blocks = append(blocks, "<blockquote><p>"+block(inner)+"</p></blockquote>")
		case 3:
			blocks = append(blocks, "<ol><li>"+block("outer")+"<ul><li>"+block(inner)+"</li></ul></li></ol>")
		case 4:
			blocks = append(blocks, "<p>"+block(inner)+"</p><p>"+block("more")+"</p>")
		}
	}
	n := 0
	for i := 0; i < len(data) && n < 64; i++ {
		c := data[i]
		n++
		switch {
		case c < 0x08:
			fmt.Fprintf(&cur, " %s ", fuzzWords[int(c)*3%len(fuzzWords)])
		case c < 0x0c:
			// One link per run of prose keeps the link density low.
			u := fmt.Sprintf("https://t%d.example.org/p_%d~x", len(links), i)
			links = append(links, u)
			fmt.Fprintf(&cur, ` see <a href="%s">the page %d</a> for it `, u, len(links))
		case c < 0x0f:
			tag := []string{"em", "strong", "code"}[c-0x0c]
			fmt.Fprintf(&cur, " an <%s>%s</%s> word ", tag, fuzzWords[i%len(fuzzWords)], tag)
		case c == 0x0f:
			k := i % len(fuzzHiddenKinds)
			h := fmt.Sprintf("HIDDENTEXT%d", len(hidden))
			if fuzzScriptedKinds[k] {
				h = fmt.Sprintf("%s%d", fuzzScriptedMark, len(hidden))
			}
			hidden = append(hidden, h)
			fmt.Fprintf(&cur, fuzzHiddenKinds[k], h)
		case c == 0x10 || c == 0x11:
			flush(byte(i))
		default:
			r, w := utf8.DecodeRune(data[i:])
			if r != utf8.RuneError && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f && r < 0xd800) {
				cur.WriteRune(r)
			}
			i += w - 1
		}
	}
	flush(0)
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Fuzz article | Site</title></head><body><nav><a href="/">Home</a></nav><main><article><h1>Fuzz article</h1>`)
	for _, bl := range blocks {
		b.WriteString(bl)
	}
	b.WriteString(`</article></main><footer>Footer text</footer></body></html>`)
	return b.String(), links, hidden
}

var reEntity = regexp.MustCompile(`&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]*);`)

// rawEntity returns the first character reference in md outside code
// spans and fenced code that is not backslash-escaped, or "".
func rawEntity(md string) string {
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " >")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if f := markdown.FenceOpener(trimmed); f != "" {
			fence = f
			continue
		}
		// Code spans out.
		var text strings.Builder
		for i := 0; i < len(line); {
			if line[i] == '`' {
				k := 1
				for i+k < len(line) && line[i+k] == '`' {
					k++
				}
				if end := markdown.ClosingTicks(line, i+k, k); end >= 0 {
					i = end + k
					continue
				}
				i += k
				continue
			}
			text.WriteByte(line[i])
			i++
		}
		s := text.String()
		for _, loc := range reEntity.FindAllStringIndex(s, -1) {
			if loc[0] > 0 && s[loc[0]-1] == '\\' {
				continue
			}
			return s[loc[0]:loc[1]]
		}
	}
	return ""
}
