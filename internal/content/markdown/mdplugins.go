package markdown

import (
	"bytes"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/marker"
	"golang.org/x/net/html"
)

// Code blocks inside block quotes.
//
// html-to-markdown writes each line break of a fenced code block as
// marker.MarkerCodeBlockNewline (so that the blank lines of the code
// survive the trimming of blank lines around blocks) and turns the marks
// into line breaks only at the end. Its list renderer indents the lines
// after a mark; its block quote renderer prefixes "> " only after real
// line breaks, so every line of a code block after the first lost its
// quote marker: inside a list item, "> ```yaml\n> key: value\n   other: 2"
// ended the quote (CommonMark 0.31 §5.1: a fenced code block is not a
// paragraph continuation) and broke the fence. quotePlugin wraps the
// block quote renderer: the quote is rendered by the commonmark plugin as
// before, then "> " is put after each code-block line mark inside it.
// Quotes nest (each level adds its marker after those of the levels
// inside it, which come first on the line when the outer level adds its
// own: the outermost marker is written last but lands first), and a list
// around the quote indents after the mark, before the quote markers.

// quotePlugin registers renderQuote with the converter.
type quotePlugin struct{}

func (quotePlugin) Name() string { return "gatehouse-quote-code" }

func (quotePlugin) Init(conv *converter.Converter) error {
	conv.Register.Renderer(renderQuote, converter.PriorityEarly)
	return nil
}

// quoteKey is the context key under which renderQuote names the quote it
// is rendering, so that the render of that node falls through to the
// commonmark plugin's block quote renderer.
type quoteKey struct{}

// quotedCodeNewline is a code-block line mark followed by a quote marker.
var quotedCodeNewline = append(bytes.Clone(marker.BytesMarkerCodeBlockNewline), '>', ' ')

// renderQuote renders a <blockquote> with the next renderer (the
// commonmark plugin's) and puts a quote marker after every code-block line
// mark of the result.
func renderQuote(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	if n.Type != html.ElementNode || n.Data != "blockquote" || ctx.Value(quoteKey{}) == n {
		return converter.RenderTryNext
	}
	var buf bytes.Buffer
	ctx.RenderNodes(ctx.WithValue(quoteKey{}, n), &buf, n)
	w.Write(bytes.ReplaceAll(buf.Bytes(), marker.BytesMarkerCodeBlockNewline, quotedCodeNewline))
	return converter.RenderSuccess
}

// Superscripts and subscripts.
//
// CommonMark has no syntax for them, and the converter wrote their text
// run into the word before it: "E = mc<sup>2</sup>" became "E = mc2",
// "H<sub>2</sub>O" "H2O", a footnote reference "note<sup>[1]</sup>"
// "note[1]". GFM passes inline raw HTML through (GFM §6.6; its tag filter
// leaves <sup> and <sub> alone), so supSubPlugin writes them as the tags
// themselves around their converted content: "mc<sup>2</sup>". A sub- or
// superscript without text is dropped, and one holding blocks (a line
// break in its markdown) is written as its content alone: raw inline
// HTML cannot span blocks.

// supSubPlugin registers renderSupSub with the converter.
type supSubPlugin struct{}

func (supSubPlugin) Name() string { return "gatehouse-sup-sub" }

func (supSubPlugin) Init(conv *converter.Converter) error {
	conv.Register.Renderer(renderSupSub, converter.PriorityEarly)
	return nil
}

// renderSupSub writes a <sup> or <sub> as that tag around its converted
// content (see supSubPlugin).
func renderSupSub(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	if n.Type != html.ElementNode || n.Data != "sup" && n.Data != "sub" {
		return converter.RenderTryNext
	}
	var buf bytes.Buffer
	ctx.RenderChildNodes(ctx, &buf, n)
	content := buf.Bytes()
	switch {
	case len(bytes.TrimSpace(content)) == 0:
		w.Write(content)
	case bytes.ContainsAny(content, "\n") || bytes.Contains(content, marker.BytesMarkerCodeBlockNewline):
		w.Write(content)
	default:
		w.WriteString("<" + n.Data + ">")
		w.Write(content)
		w.WriteString("</" + n.Data + ">")
	}
	return converter.RenderSuccess
}
