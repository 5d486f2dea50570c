package snapshot

import (
	"strings"
	"testing"
)

const findPage = `- banner:
  - navigation "Main":
    - link "Home" [ref=e1]
    - link "Account" [ref=e2]
- main:
  - heading "Sign in" [level=1]
  - form:
    - textbox "Username" [ref=e3]
    - textbox "Password" [ref=e4]
    - checkbox "Remember me" [ref=e5]
    - button "Sign in" [ref=e6]
  - link "Forgot your password?" [ref=e7]
- contentinfo:
  - link "About us" [ref=e8]
  - "© 2026 Example Corp."`

// TestFind: a searched snapshot shows the matching line under its
// ancestors, with the fields after it in the same parent, refs unchanged;
// lines elsewhere are left out, and the header counts the matches.
func TestFind(t *testing.T) {
	out, n := Find(findPage, "username")
	if n != 1 {
		t.Fatalf("matches = %d, want 1:\n%s", n, out)
	}
	for _, want := range []string{`[find "username": 1 of 15 lines match]`, "- main:", "  - form:", `textbox "Username" [ref=e3]`, `textbox "Password" [ref=e4]`, `button "Sign in" [ref=e6]`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, not := range []string{`link "Home"`, "About us", "Forgot"} {
		if strings.Contains(out, not) {
			t.Errorf("%q should be left out of\n%s", not, out)
		}
	}
	// A ref is not text: "e3" matches no line by its ref mark.
	if _, n := Find(findPage, "e3]"); n != 0 {
		t.Errorf("a ref mark matched")
	}
	out, n = Find(findPage, "no such text")
	if n != 0 || !strings.Contains(out, "no line") {
		t.Errorf("no match: %d %q", n, out)
	}
}

// TestFindCap: more than MaxFindMatches matches show the first ones and
// count the rest.
func TestFindCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("- main:")
	for i := 0; i < 50; i++ {
		b.WriteString("\n  - row \"Widget\"")
	}
	out, n := Find(b.String(), "widget")
	if n != 50 || strings.Count(out, `row "Widget"`) != MaxFindMatches+findAfter || !strings.Contains(out, "50 of 51 lines match; the first 20") {
		t.Errorf("n=%d shown=%d\n%s", n, strings.Count(out, `row "Widget"`), out)
	}
}

// TestCollapse: a block the page before held verbatim (same lines, same
// refs) is folded to its first line and a line naming its refs; a block
// that changed, or is short, is kept whole.
func TestCollapse(t *testing.T) {
	next := strings.Replace(findPage, `heading "Sign in" [level=1]`, `heading "Dashboard" [level=1]`, 1)
	out := Collapse(findPage, next)
	if !strings.Contains(out, "- banner:\n  - [same 3 lines as on the previous page: refs e1–e2]") {
		t.Errorf("banner not folded:\n%s", out)
	}
	if strings.Contains(out, `link "Home"`) || !strings.Contains(out, `heading "Dashboard"`) || !strings.Contains(out, `textbox "Username" [ref=e3]`) {
		t.Errorf("wrong blocks kept:\n%s", out)
	}
	// contentinfo has 3 lines: under minRepeat, kept.
	if !strings.Contains(out, `link "About us" [ref=e8]`) {
		t.Errorf("short block folded:\n%s", out)
	}
	// A changed ref is a different element: kept whole.
	moved := strings.Replace(next, `link "Home" [ref=e1]`, `link "Home" [ref=e9]`, 1)
	if out := Collapse(findPage, moved); !strings.Contains(out, `link "Home" [ref=e9]`) {
		t.Errorf("changed block folded:\n%s", out)
	}
	if Collapse("", next) != next {
		t.Error("no previous page: changed")
	}
}

// TestFindDelta: only the changed lines that match are kept, under a header
// counting all of them; no change stays "".
func TestFindDelta(t *testing.T) {
	d := "+ link \"Oak table 16\" [ref=e23]\n+ link \"Vintage typewriter\" [ref=e24]\n~ button \"Load more\" [ref=e9]"
	got := FindDelta(d, "vintage")
	if got != "[find \"vintage\": 1 of 3 changed lines match]\n+ link \"Vintage typewriter\" [ref=e24]" {
		t.Errorf("got %q", got)
	}
	if FindDelta("", "x") != "" {
		t.Error("no change became a find result")
	}
}
