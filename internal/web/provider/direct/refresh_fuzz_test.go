package direct

import (
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// refreshSeeds are refresh content values found on real pages and in the
// HTML Standard's examples, with the target each resolves to against
// http://h.test/dir/page ("" when none is followed).
var refreshSeeds = []struct{ in, want string }{
	{"0;url=/x", "http://h.test/x"},
	{"0; URL=/x", "http://h.test/x"},
	{"5; URL='a b'", "http://h.test/dir/a%20b"},
	{`0;URL="/100%"`, "http://h.test/100%25"},
	{"0; url=/a%zz", "http://h.test/a%25zz"},
	{"0; url=https://other.test/p?q=1", "https://other.test/p?q=1"},
	{"0, /x", "http://h.test/x"},
	{"0 /x", "http://h.test/x"},
	{"1.5; url=/x", "http://h.test/x"},
	{".5;url=/x", "http://h.test/x"},
	{"0; url = 'next.html'", "http://h.test/dir/next.html"},
	{"0; 'quoted.html'", "http://h.test/dir/quoted.html"},
	{"0; urlx.html", "http://h.test/dir/urlx.html"},
	{"0;url=http://h.test/é", "http://h.test/%C3%A9"},
	{"0;url=//other.test/", "http://other.test/"},
	{"0;url=http://[::1", ""},
	{"1.5", ""},
	{";url=", ""},
	{"0;url=", ""},
	{"0", ""},
	{"", ""},
	{"abc; url=/x", ""},
	{"0x; url=/x", ""},
	{"\u00a00;url=/x", ""},                               // NBSP is not ASCII white space: no delay
	{"0;\u00a0url=/x", "http://h.test/dir/%C2%A0url=/x"}, // nor is it skipped before "url"
	{"0;\u2003/x", "http://h.test/dir/%E2%80%83/x"},
	{"99999999999999999999; url=/x", "http://h.test/x"},
}

// TestParseRefreshSeeds checks the seed corpus against the HTML Standard's
// steps: the target, and that nothing is followed where a browser follows
// nothing.
func TestParseRefreshSeeds(t *testing.T) {
	base, _ := url.Parse("http://h.test/dir/page")
	for _, c := range refreshSeeds {
		delay, u, ok := parseRefresh(c.in, base)
		got := ""
		if ok {
			got = u.String()
		}
		if got != c.want || delay < 0 {
			t.Errorf("parseRefresh(%q) = %d, %q, want %q", c.in, delay, got, c.want)
		}
	}
	if d, _, _ := parseRefresh("99999999999999999999; url=/x", base); d <= maxRefreshDelay {
		t.Errorf("an overflowing delay is %d, want one that is never followed", d)
	}
}

// FuzzParseRefresh: parseRefresh never panics, its delay is never
// negative, and a target it returns is an absolute URL the project's URL
// parser (urlsafe.Parse, WHATWG) accepts and net/url (what net/http sends)
// accepts as well; an http(s) target holds no white space.
func FuzzParseRefresh(f *testing.F) {
	for _, c := range refreshSeeds {
		f.Add(c.in)
	}
	base, _ := url.Parse("http://h.test/dir/page")
	f.Fuzz(func(t *testing.T, v string) {
		delay, u, ok := parseRefresh(v, base)
		if delay < 0 {
			t.Fatalf("parseRefresh(%q): negative delay %d", v, delay)
		}
		if !ok {
			if u != nil {
				t.Fatalf("parseRefresh(%q): not ok but a target %v", v, u)
			}
			return
		}
		if u == nil || !u.IsAbs() {
			t.Fatalf("parseRefresh(%q): ok without an absolute target: %v", v, u)
		}
		s := u.String()
		if _, rerr := urlsafe.Parse(s); rerr != nil {
			t.Fatalf("parseRefresh(%q) = %q, which urlsafe.Parse refuses: %v", v, s, rerr.Err)
		}
		if _, err := url.Parse(s); err != nil {
			t.Fatalf("parseRefresh(%q) = %q, which net/url refuses: %v", v, s, err)
		}
		if (u.Scheme == "http" || u.Scheme == "https") && strings.ContainsAny(s, " \t\n") {
			// (an opaque path, "a:b c", keeps its spaces, as the standard says)
			t.Fatalf("parseRefresh(%q) = %q holds white space", v, s)
		}
	})
}
