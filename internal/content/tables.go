package content

import (
	"strconv"
	"strings"

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
			case isElem(c, "thead"), isElem(c, "tbody"), isElem(c, "tfoot"):
				visit(c)
			case isElem(c, "tr"):
				var cells []*html.Node
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if isElem(d, "td") || isElem(d, "th") {
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
		nums := strings.Fields(textContent(rows[0][0]))
		if len(nums) >= 2 && consecutive(nums) && findElem(rows[0][1], "pre") != nil {
			return strings.TrimRight(textContent(rows[0][1]), "\n"), true
		}
		return "", false
	}
	var lines, nums []string
	for _, r := range rows {
		if len(r) != 2 || findElem(r[1], "table") != nil {
			return "", false
		}
		num := strings.TrimSpace(textContent(r[0]))
		if num == "" {
			num, _ = attr(r[0], "data-line-number")
		}
		nums = append(nums, strings.TrimSpace(num))
		lines = append(lines, strings.TrimRight(strings.TrimPrefix(textContent(r[1]), "\n"), "\n"))
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
		walk(c, func(d *html.Node) bool {
			if found == nil && isElem(d, name) {
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
	walk(root, func(n *html.Node) bool {
		if isElem(n, "table") {
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
// the cell (rows joined by cellBreak, cells of a row by " | ", escaped):
// GFM has no table in a table, and the converter dropped the inner table
// and its text. Innermost tables first, so any depth is kept.
func flattenNestedTables(root *html.Node) {
	var inner []*html.Node
	var visit func(n *html.Node, inCell bool)
	visit = func(n *html.Node, inCell bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case isElem(c, "table"):
				visit(c, false)
				if inCell {
					inner = append(inner, c) // (after its own nested tables)
				}
			case isElem(c, "td") || isElem(c, "th"):
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
				if s := collapseSpace(textContent(c)); s != "" {
					cells = append(cells, s)
				}
			}
			if len(cells) > 0 {
				lines = append(lines, strings.Join(cells, " "+cellPipe+" "))
			}
		}
		t.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: strings.Join(lines, cellBreak)}, t)
		t.Parent.RemoveChild(t)
	}
}
