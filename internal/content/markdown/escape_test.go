package markdown

import "testing"

func TestFixEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`MAX\_RETRY`:            `MAX_RETRY`,
		`a \_b\_ c`:             `a \_b\_ c`,
		`x\\\_y`:                `x\\\_y`, // a literal backslash, then an escaped '_' after a non-letter
		"`MAX\\_X` and A\\_B":   "`MAX\\_X` and A_B",
		`go \~/notes`:           `go ~/notes`,
		`\~a\~ b`:               `\~a\~ b`,
		`\[a-z]+`:               `\[a-z]+`, // line start: could be a definition or task box
		`use \[a-z]+`:           `use [a-z]+`,
		`see \[a\](b)`:          `see [a\](b)`, // the escaped "]" already stops the link
		`see \[a](b)`:           `see \[a](b)`,
		"```\nMAX\\_X\n```":     "```\nMAX\\_X\n```",
		gtMark + " q":           `\> q`,
		"- " + gtMark + " q":    `- \> q`,
		"a " + gtMark + " b":    "a > b",
		ltMark + "div" + gtMark: `\<div>`,
		"1 " + ltMark + " 2":    "1 < 2",
		ampMark + "gt;":         `\&gt;`,
	} {
		if got := fixEscapes(in); got != want {
			t.Errorf("fixEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}
