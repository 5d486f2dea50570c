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
