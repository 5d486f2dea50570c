// Package markdown turns the HTML trees internal/content extracts into
// GitHub-flavoured markdown. On the page, before extraction, it polishes
// layouts the extractors and the writer would misread (Polish,
// BreaksToParagraphs, CaptionsToParagraphs), marks images in running text
// (MarkInlineImages), makes links absolute (AbsolutizeLinks) and indexes
// the page's own code blocks and tables (CollectOriginals). On each
// extracted tree it restores what the extractors lost (RestoreOriginals),
// prepares the tree for the writer (Prepare, FiguresToImages) and writes
// it (Convert: html-to-markdown v2 with the house plugins, Render); Tidy
// trims the text. It also holds the line-level markdown helpers the
// content packages share and the sanitising of HTML inside markdown
// documents (SanitizeHTML).
package markdown

import (
	"net/url"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
)

// mdConverter is shared: html-to-markdown converters are safe for
// concurrent use once built.
var mdConverter = converter.NewConverter(
	converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(
			commonmark.WithListEndComment(false),
			commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
			commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip),
		),
		strikethrough.NewStrikethroughPlugin(),
		escapePlugin{},
		quotePlugin{},
		supSubPlugin{},
		table.NewTablePlugin(
			table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
			table.WithSpanCellBehavior(table.SpanBehaviorEmpty),
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
			table.WithSkipEmptyRows(true),
			table.WithHeaderPromotion(true),
		),
	),
)

// Render converts node to markdown with html-to-markdown and the house
// plugins (escaping, code in quotes, sup/sub), links absolute against base
// (nil: left as written), and turns the marks the tree preparation left
// (GapMark, LinkNameMark, LinkLeadMark, CellBreak, CellPipe, TaskDone,
// TaskOpen) into what they stand for. Image marks are left to the caller.
func Render(node *html.Node, base *url.URL) (string, error) {
	var opts []converter.ConvertOptionFunc
	if base != nil {
		opts = append(opts, converter.WithDomain(base.String()))
	}
	out, err := mdConverter.ConvertNode(node, opts...)
	if err != nil {
		return "", err
	}
	fixed := fixEscapes(string(out))
	if strings.Contains(fixed, GapMark) {
		fixed = leadingGap.ReplaceAllString(fixed, "$1")
	}
	md := markReplacer.Replace(fixed)
	if strings.Contains(md, "<br") {
		md = collapseCellBreaks(md)
	}
	return md, nil
}

// markReplacer turns the marks the tree preparation left into what they
// stand for. Built once: a strings.Replacer is safe for concurrent use, and
// building one per call cost a fresh lookup trie on every rendering.
var markReplacer = strings.NewReplacer(LinkNameMark, "", LinkLeadMark, "", CellBreak, "<br>", CellPipe, `\|`, TaskDone, "[x]", TaskOpen, "[ ]", GapMark+"\n", "\n", GapMark, " ")

// leadingGap is a GapMark at the start of a line's text (after its
// indentation, quote, list marker, heading or emphasis marks): a block
// the converter put on a line of its own needs no space there.
var leadingGap = lazyregexp.New(`(?m)^([ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(?:#{1,6}[ \t]+)?(?:\*\*|\*|_)?)` + GapMark + `+`)

// cellBreakRun is two or more line breaks in a row of a table: the
// converter writes each newline of a cell's blocks as one ("<div>a</div>
// <div>b</div>" became "a<br /><br /><br /><br />b").
var cellBreakRun = lazyregexp.New(`(?:<br ?/?>\s*){2,}`)

// collapseCellBreaks makes every run of line breaks in a table row one.
func collapseCellBreaks(md string) string {
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " >"), "|") {
			lines[i] = cellBreakRun.ReplaceAllString(l, "<br>")
		}
	}
	return strings.Join(lines, "\n")
}

// Task list placeholders: a GFM task list checkbox becomes one of these
// before extraction (extractors drop <input>) and "[x]" or "[ ]" in the
// markdown (Convert). Private-use code points keep them clear of real
// text and of the converter's escaping.
const (
	TaskDone = "\uE000task-x\uE001"
	TaskOpen = "\uE000task-o\uE001"
)

// GapMark stands for the space Polish puts between adjacent inline
// elements; Convert and content's chooseTitle turn it into a space.
const GapMark = "\uE002"

// LinkNameMark is the text markTextlessLinks gives a link without text (a
// private-use code point: clear of real text).
const LinkNameMark = "\uE003"

// LinkLeadMark is the text markElementLinks puts at the start of a link
// whose content opens with an element (a private-use code point: clear of
// real text and of the other marks).
const LinkLeadMark = "\uE006"

// CellBreak stands in for a <br> inside a table cell during conversion; it
// becomes "<br>" in the markdown, which GFM renders as a line break inside
// the cell without ending the row. Private-use code points keep it clear of
// real text.
const CellBreak = "\uE000br\uE001"

// CellPipe stands in for '|' inside code in a table cell: the converter
// does not escape code, but GFM needs "\|" there too, or the pipe splits
// the cell.
const CellPipe = "\uE000pipe\uE001"

// FenceOpener returns the fence (``` or ~~~, possibly longer) that opens a
// code block on this line, or "".
func FenceOpener(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// ListMarker reads a list item marker at the start of line: its
// indentation, the width of the marker with the space after it ("- " is
// 2, "10. " is 4), and whether the marker may start a list that interrupts
// a paragraph (a bullet, or an ordered marker numbered 1). Width is 0 when
// the line is no list item.
func ListMarker(line string) (indent, width int, canInterrupt bool) {
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	s := line[indent:]
	if len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ' {
		return indent, 2, true
	}
	d := 0
	for d < len(s) && d < 9 && s[d] >= '0' && s[d] <= '9' {
		d++
	}
	if d > 0 && d+1 < len(s) && (s[d] == '.' || s[d] == ')') && s[d+1] == ' ' {
		n := strings.TrimLeft(s[:d], "0")
		return indent, d + 2, n == "1"
	}
	return indent, 0, false
}
