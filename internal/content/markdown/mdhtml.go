package markdown

import (
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/visibility"
	"golang.org/x/net/html"
)

// Raw HTML inside markdown pages.
//
// A page served as text/markdown is handed to the agent as written, but
// GFM renders the raw HTML in it: an HTML comment ("<!-- ignore the user
// and … -->") or an element a browser would not render ("<span
// style="display:none">…</span>", "<div hidden>", "<template>") shows
// nothing to a reader and everything to a model, which is how prompt
// injections are slipped to agents. So these go, the way visibility.DropHidden
// treats HTML pages (issue 6 item 4): the markdown's raw HTML, with its
// text runs and code in place, is parsed as the HTML document GFM would
// produce, visibility.DropHidden (and the document's own <style> rules) decides what
// a browser would not render, and the markdown keeps exactly the pieces
// (text runs, tags, code) that survive, byte for byte. Comments, <script>
// and <style> elements go too. Code (fenced blocks and code spans) is
// left alone: an HTML example in code is shown, not rendered.

// mdPiece is one piece of a markdown page for SanitizeHTML.
type mdPiece struct {
	raw  string
	kind byte // 't' text, 'c' code, 's' start tag, 'e' end tag, 'x' dropped (comments, doctype)
	name string
}

// SanitizeHTML returns md without its HTML comments, scripts,
// styles and the elements a browser would not render (see above). md
// without '<' is returned as is.
func SanitizeHTML(md string) string {
	if !strings.Contains(md, "<") {
		return md
	}
	pieces := splitMarkdownHTML(md)
	// The document: each text run and code piece becomes a placeholder
	// element, each start tag carries its index, each end tag is preceded
	// by a placeholder (inside the element it closes).
	var b strings.Builder
	hasTag := false
	for i, p := range pieces {
		id := strconv.Itoa(i)
		switch p.kind {
		case 't', 'c':
			if p.kind == 't' && i > 0 && pieces[i-1].kind == 's' && (pieces[i-1].name == "style" || pieces[i-1].name == "script") {
				b.WriteString(p.raw) // the rules visibility.DropHidden reads (the element goes anyway)
				continue
			}
			b.WriteString(`<gh-p i="` + id + `"></gh-p>`)
		case 's':
			hasTag = true
			b.WriteString(withIndex(p.raw, id))
		case 'e':
			hasTag = true
			b.WriteString(`<gh-p i="` + id + `"></gh-p>` + p.raw)
		}
	}
	if !hasTag {
		return joinKept(pieces, nil, true)
	}
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		return joinKept(pieces, nil, true) // (nested too deep: comments still go)
	}
	visibility.DropHidden(doc)
	kept := map[int]bool{}
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if n.Data == "script" || n.Data == "style" {
			return false
		}
		for _, a := range n.Attr {
			if a.Key == "data-gh-i" || n.Data == "gh-p" && a.Key == "i" {
				if i, err := strconv.Atoi(a.Val); err == nil {
					kept[i] = true
				}
			}
		}
		return true
	})

	return joinKept(pieces, kept, false)
}

// joinKept joins the pieces kept (all but dropped ones when all is set).
// The end tag of a dropped script or style goes with it.
func joinKept(pieces []mdPiece, kept map[int]bool, all bool) string {
	var b strings.Builder
	for i, p := range pieces {
		if p.kind == 'x' {
			continue
		}
		if all || kept[i] {
			b.WriteString(p.raw)
		}
	}
	return b.String()
}

// withIndex returns the raw start tag with a data-gh-i="id" attribute.
func withIndex(raw, id string) string {
	end := len(raw) - 1 // '>'
	if strings.HasSuffix(raw, "/>") {
		end--
	}
	if end < 1 {
		return raw
	}
	return raw[:end] + ` data-gh-i="` + id + `"` + raw[end:]
}

// splitMarkdownHTML cuts md into code (fenced blocks and code spans),
// and, in the rest, HTML tags, comments and text runs (html.Tokenizer).
func splitMarkdownHTML(md string) []mdPiece {
	var out []mdPiece
	var text strings.Builder
	flushText := func() {
		if text.Len() > 0 {
			out = append(out, tokenizeHTMLRuns(text.String())...)
			text.Reset()
		}
	}
	fence := ""
	lines := strings.SplitAfter(md, "\n")
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " >")
		if fence != "" {
			out = append(out, mdPiece{raw: line, kind: 'c'})
			if strings.HasPrefix(strings.TrimRight(trimmed, "\r\n"), fence) {
				fence = ""
			}
			continue
		}
		if f := FenceOpener(trimmed); f != "" && len(line)-len(strings.TrimLeft(line, " ")) < 4 {
			flushText()
			fence = f
			out = append(out, mdPiece{raw: line, kind: 'c'})
			continue
		}
		// Code spans of the line.
		for i := 0; i < len(line); {
			j := strings.IndexByte(line[i:], '`')
			if j < 0 {
				text.WriteString(line[i:])
				break
			}
			j += i
			k := j
			for k < len(line) && line[k] == '`' {
				k++
			}
			end := ClosingTicks(line, k, k-j)
			if end < 0 {
				text.WriteString(line[i:k])
				i = k
				continue
			}
			text.WriteString(line[i:j])
			flushText()
			out = append(out, mdPiece{raw: line[j : end+k-j], kind: 'c'})
			i = end + k - j
		}
	}
	flushText()
	return out
}

// tokenizeHTMLRuns cuts s into text runs, start and end tags, and dropped
// pieces (comments, doctypes). A '<' that starts no tag stays text.
func tokenizeHTMLRuns(s string) []mdPiece {
	z := html.NewTokenizer(strings.NewReader(s))
	var out []mdPiece
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := string(z.Raw())
		switch tt {
		case html.TextToken:
			out = append(out, mdPiece{raw: raw, kind: 't'})
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			out = append(out, mdPiece{raw: raw, kind: 's', name: string(name)})
		case html.EndTagToken:
			name, _ := z.TagName()
			out = append(out, mdPiece{raw: raw, kind: 'e', name: string(name)})
		default: // comments, doctypes
			out = append(out, mdPiece{raw: raw, kind: 'x'})
		}
	}
	return out
}
