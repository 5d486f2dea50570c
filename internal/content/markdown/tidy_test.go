package markdown

import (
	"strings"
	"testing"
)

func TestDropRepeatedBlocksKeepsCode(t *testing.T) {
	long := strings.Repeat("word ", 20) + "end."
	data := "Asian Chicken Zoodles [1 cup zucchini noodles, 4 oz. cooked chicken, 1/2 cup edamame, 1 tsp. sesame oil]"
	md := data + "\n\n" + data + "\n\n" + long + "\n\n```\n" + long + "\n\n" + long + "\n```\n\n" + long + "\n\n- " + long + "\n\n- " + long
	got := dropRepeatedBlocks(md)
	if strings.Count(got, long) != 5 || strings.Count(got, data) != 2 {
		t.Errorf("want the second paragraph copy dropped only:\n%s", got)
	}
}

func TestTightenNestedLists(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"bullet in bullet", "- a\n  \n  - b\n- c", "- a\n  - b\n- c"},
		{"empty blank line", "- a\n\n  - b", "- a\n  - b"},
		{"ordered from 1", "1. a\n\n   1. b", "1. a\n   1. b"},
		{"ordered from 3 keeps the blank", "1. a\n\n   3. b", "1. a\n\n   3. b"},
		{"sibling list keeps the blank", "- a\n\n- b", "- a\n\n- b"},
		{"paragraph then list keeps the blank", "text\n\n  - b", "text\n\n  - b"},
		{"two blank lines left alone", "- a\n\n\n  - b", "- a\n\n\n  - b"},
		{"inside a fence", "```\n- a\n\n  - b\n```", "```\n- a\n\n  - b\n```"},
		{"after a fence", "```\nx\n```\n- a\n\n  - b", "```\nx\n```\n- a\n  - b"},
		{"marker without text", "-\n\n  - b", "-\n\n  - b"},
		{"spaces-only line emptied", "a\n  \nb", "a\n\nb"},
		{"spaces kept in a fence", "```\na\n  \nb\n```", "```\na\n  \nb\n```"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tightenNestedLists(tc.in); got != tc.want {
				t.Errorf("tightenNestedLists(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
