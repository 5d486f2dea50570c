package markdown

import (
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Tables the converter cannot write as GFM tables.

// rowCells returns the rows of table t (in <thead>, <tbody>, <tfoot> or
// directly under it, not those of a nested table) and each row's cells.
func rowCells(t *html.Node) [][]*html.Node {
	var rows [][]*html.Node
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case dom.IsElem(c, "thead"), dom.IsElem(c, "tbody"), dom.IsElem(c, "tfoot"):
				visit(c)
			case dom.IsElem(c, "tr"):
				var cells []*html.Node
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if dom.IsElem(d, "td") || dom.IsElem(d, "th") {
						cells = append(cells, d)
					}
				}
				if len(cells) > 0 {
					rows = append(rows, cells)
				}
			}
		}
	}
	visit(t)
	return rows
}

// codeListing returns the code of table t when t lays out a code listing
// with its line numbers: a first column of line numbers and a second of
// code, as Pygments ("highlighttable": one row, a cell with a <pre> of the
// numbers and one with the code), GitHub's file view (a row per line, the
// number in data-line-number) and hand-written listings (a row per line
// with the number as text) write them. The line numbers are layout, not
// content: the code alone is what a reader copies. ok is false for any
// other table, among them tables whose first column counts rows of data
// (a "#" column next to several others).
func codeListing(t *html.Node) (code string, ok bool) {
	rows := rowCells(t)
	if len(rows) == 0 {
		return "", false
	}
	if len(rows) == 1 && len(rows[0]) == 2 {
		// Pygments: the numbers as lines of one cell.
		nums := strings.Fields(dom.TextContent(rows[0][0]))
		if len(nums) >= 2 && consecutive(nums) && findElem(rows[0][1], "pre") != nil {
			return strings.TrimRight(dom.TextContent(rows[0][1]), "\n"), true
		}
		return "", false
	}
	var lines, nums []string
	for _, r := range rows {
		if len(r) != 2 || findElem(r[1], "table") != nil {
			return "", false
		}
		num := strings.TrimSpace(dom.TextContent(r[0]))
		if num == "" {
			num, _ = dom.Attr(r[0], "data-line-number")
		}
		nums = append(nums, strings.TrimSpace(num))
		lines = append(lines, strings.TrimRight(strings.TrimPrefix(dom.TextContent(r[1]), "\n"), "\n"))
	}
	if len(rows) < 3 || !consecutive(nums) || !looksLikeCode(lines) {
		return "", false
	}
	return strings.Join(lines, "\n"), true
}

// consecutive reports whether nums are integers counting up by one.
func consecutive(nums []string) bool {
	prev := 0
	for i, s := range nums {
		n, err := strconv.Atoi(s)
		if err != nil || i > 0 && n != prev+1 {
			return false
		}
		prev = n
	}
	return true
}

// looksLikeCode reports whether the second column of a numbered table
// reads as lines of code rather than rows of data: some line holds
// punctuation code is made of, or is indented.
func looksLikeCode(lines []string) bool {
	for _, l := range lines {
		if strings.ContainsAny(l, "{}();=<>[]#$/\"'") || strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t") {
			return true
		}
	}
	return false
}

// findElem returns the first element named name under n (n excluded), or
// nil.
func findElem(n *html.Node, name string) *html.Node {
	var found *html.Node
	for c := n.FirstChild; c != nil && found == nil; c = c.NextSibling {
		dom.Walk(c, func(d *html.Node) bool {
			if found == nil && dom.IsElem(d, name) {
				found = d
			}
			return found == nil
		})

	}
	return found
}

// listingsToCode replaces every code listing laid out as a table under
// root (codeListing) by a code block with the listing's language.
func listingsToCode(root *html.Node) {
	var tables []*html.Node
	dom.Walk(root, func(n *html.Node) bool {
		if dom.IsElem(n, "table") {
			tables = append(tables, n)
		}
		return true
	})

	for _, t := range tables {
		if t.Parent == nil {
			continue
		}
		code, ok := codeListing(t)
		if !ok {
			continue
		}
		lang := ""
		if pre := findElem(t, "pre"); pre != nil {
			lang = codeLanguage(pre)
		}
		if lang == "" {
			lang = codeLanguage(t) // the table's class or its wrappers'
		}
		pre := &html.Node{Type: html.ElementNode, Data: "pre", DataAtom: atom.Pre}
		c := &html.Node{Type: html.ElementNode, Data: "code", DataAtom: atom.Code}
		c.AppendChild(&html.Node{Type: html.TextNode, Data: code})
		pre.AppendChild(c)
		setLanguage(pre, lang)
		t.Parent.InsertBefore(pre, t)
		t.Parent.RemoveChild(t)
	}
}

// flattenNestedTables writes each table inside a table cell as lines of
// the cell (rows joined by CellBreak, cells of a row by " | ", escaped):
// GFM has no table in a table, and the converter dropped the inner table
// and its text. Innermost tables first, so any depth is kept.
func flattenNestedTables(root *html.Node) {
	var inner []*html.Node
	var visit func(n *html.Node, inCell bool)
	visit = func(n *html.Node, inCell bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case dom.IsElem(c, "table"):
				visit(c, false)
				if inCell {
					inner = append(inner, c) // (after its own nested tables)
				}
			case dom.IsElem(c, "td") || dom.IsElem(c, "th"):
				visit(c, true)
			default:
				visit(c, inCell)
			}
		}
	}
	visit(root, false)
	for _, t := range inner {
		if t.Parent == nil {
			continue
		}
		var lines []string
		for _, r := range rowCells(t) {
			var cells []string
			for _, c := range r {
				if s := dom.CollapseSpace(dom.TextContent(c)); s != "" {
					cells = append(cells, s)
				}
			}
			if len(cells) > 0 {
				lines = append(lines, strings.Join(cells, " "+CellPipe+" "))
			}
		}
		t.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: strings.Join(lines, CellBreak)}, t)
		t.Parent.RemoveChild(t)
	}
}

// Tables whose cells lost text.
//
// go-trafilatura rebuilds a table cell from the cell's leading text and
// its child elements without their tails (lxml's .tail), and drops a
// link and what follows it: "<td>Use <code>--force</code> to skip</td>"
// came back as "Use `--force`", "<td><a>one</a> <a>two</a></td>" as
// nothing, "<code>a</code> <code>b</code>" as "`a``b`". Its table then has
// neither the text nor the letters of the page's, so the exact and loose
// matches of RestoreOriginals miss it. An extracted table that lost text
// only is one the page's table holds cell by cell: the same rows with
// text, and in each row the extracted cells in order, each one's text (white
// space aside) a subsequence of a cell of the page's row that starts with
// the same character (lossyTableMatch). One cell at least must have kept
// its whole text, so that a table of one-letter cells matches nothing by
// chance.

// lossyTableScan bounds how many of the page's unused tables, after the
// last one matched, an extracted table is compared with.
const lossyTableScan = 32

// cellKeys returns the textKey of each cell of each row of t, leaving out
// the rows without text.
func cellKeys(t *html.Node) [][]string {
	var rows [][]string
	for _, cells := range rowCells(t) {
		keys := make([]string, len(cells))
		text := false
		for i, c := range cells {
			keys[i] = textKey(c)
			text = text || keys[i] != ""
		}
		if text {
			rows = append(rows, keys)
		}
	}
	return rows
}

// lossyTableMatch reports whether the page's table (rows of cell keys,
// cellKeys) holds the extracted one: as many rows with text, the
// extracted cells of each row matched in order to cells of the page's row
// whose key starts with the same character and holds the extracted key as
// a subsequence, and at least one non-empty cell kept whole.
func lossyTableMatch(extracted, page [][]string) bool {
	if len(extracted) != len(page) || len(extracted) == 0 {
		return false
	}
	whole := false
	for r, row := range extracted {
		j := 0
		for _, k := range row {
			if k == "" {
				continue
			}
			for j < len(page[r]) && !(page[r][j] != "" && page[r][j][0] == k[0] && isSubsequence(k, page[r][j])) {
				j++
			}
			if j == len(page[r]) {
				return false
			}
			whole = whole || k == page[r][j]
			j++
		}
	}
	return whole
}

// isSubsequence reports whether the bytes of s occur in t in order.
func isSubsequence(s, t string) bool {
	i := 0
	for j := 0; i < len(s) && j < len(t); j++ {
		if s[i] == t[j] {
			i++
		}
	}
	return i == len(s)
}

// lossyTables finds the page's table an extracted table that lost text
// stands for, scanning the page's tables in document order from after the
// last one it matched.
type lossyTables struct {
	page []*html.Node              // the page's outermost tables, in document order
	keys map[*html.Node][][]string // cellKeys of the page's tables, computed on first use
	next int                       // where the next scan starts
}

// match returns the first unused page table (at most lossyTableScan
// looked at) that holds the extracted table t (lossyTableMatch), as a
// one-element slice, or nil.
func (l *lossyTables) match(t *html.Node, used map[*html.Node]bool) []*html.Node {
	ext := cellKeys(t)
	for i, seen := l.next, 0; i < len(l.page) && seen < lossyTableScan; i++ {
		p := l.page[i]
		if used[p] {
			continue
		}
		seen++
		keys, ok := l.keys[p]
		if !ok {
			keys = cellKeys(p)
			l.keys[p] = keys
		}
		if lossyTableMatch(ext, keys) {
			l.next = i + 1
			return []*html.Node{p}
		}
	}
	return nil
}
