package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text\twith tab\nand lines", "plain text\twith tab\nand lines"},
		{"title\x1b]0;pwned\x07 after", "title]0;pwned after"},
		{"clear\x1b[2Jscreen", "clear[2Jscreen"},
		{"crlf\r\nline\rover", "crlf\nlineover"},
		{"c1 \u009b31m csi and \u0085 nel", "c1 31m csi and  nel"},
		{"del\x7f nul\x00", "del nul"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"ünïcödé → fine ✓", "ünïcödé → fine ✓"},
	} {
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLineCapEscape(t *testing.T) {
	if got := Line("  a\n\tb   c \x1b "); got != "a b c" {
		t.Errorf("Line = %q", got)
	}
	if got := Cap("héllo wörld", 5); got != "héll…" || utf8.RuneCountInString(got) != 5 {
		t.Errorf("Cap = %q", got)
	}
	if got := Cap("héllo", 5); got != "héllo" {
		t.Errorf("Cap exact = %q", got)
	}
	if got := Cap(strings.Repeat("é", 10), 0); got != strings.Repeat("é", 10) {
		t.Errorf("Cap 0 = %q", got)
	}
	if got := Escape("http://10.0.0.1/\x1b]0;X\x07\u009b"); got != `http://10.0.0.1/\x1b]0;X\x07\u009b` {
		t.Errorf("Escape = %q", got)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"a\x1b[2Jb", "\r\n", "\xff\xfe", "\u009b", "ok"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		c := Clean(s)
		if !utf8.ValidString(c) || !isClean(c) || Clean(c) != c {
			t.Fatalf("Clean(%q) = %q not clean/idempotent", s, c)
		}
		l := Line(s)
		if strings.ContainsAny(l, "\n\t") || !isClean(l) {
			t.Fatalf("Line(%q) = %q", s, l)
		}
		e := Escape(s)
		if !isClean(e) {
			t.Fatalf("Escape(%q) = %q", s, e)
		}
		n = (n%50+50)%50 + 1
		if got := Cap(c, n); utf8.RuneCountInString(got) > n || !utf8.ValidString(got) {
			t.Fatalf("Cap(%q,%d) = %q", c, n, got)
		}
	})
}
