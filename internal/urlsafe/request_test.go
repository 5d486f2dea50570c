package urlsafe

import (
	"net/url"
	"strings"
	"testing"
)

func TestRequestHref(t *testing.T) {
	for in, want := range map[string]string{
		"http://h.test/100%":          "http://h.test/100%25",
		"http://h.test/%E0%A4%A":      "http://h.test/%E0%A4%25A",
		"http://h.test/a%zz/b%2":      "http://h.test/a%25zz/b%252",
		"http://h.test/ok%20x":        "http://h.test/ok%20x",
		"http://h.test/a?q=50%off":    "http://h.test/a?q=50%off",
		"http://h.test/%?q=%#frag%":   "http://h.test/%25?q=%#frag%25",
		"https://h.test:8443/x%":      "https://h.test:8443/x%25",
		"http://h.test":               "http://h.test",
		"http://h.test/plain":         "http://h.test/plain",
		"http://h.test/%%41":          "http://h.test/%25%41",
		"http://[2001:db8::1]/5%":     "http://[2001:db8::1]/5%25",
		"http://h.test/#only-frag-%4": "http://h.test/#only-frag-%254",
		"http://aa%0@0.0.0.0/":        "http://aa%250@0.0.0.0/",
		"http://u:p%@h.test":          "http://u:p%25@h.test",
		"http://u%41:p@h.test/x%":     "http://u%41:p@h.test/x%25",
	} {
		got := RequestHref(in)
		if got != want {
			t.Errorf("RequestHref(%q) = %q, want %q", in, got, want)
		}
		if _, err := url.Parse(got); err != nil {
			t.Errorf("url.Parse(RequestHref(%q)): %v", in, err)
		}
	}
}

// FuzzRequestHref: for any URL that Parse accepts, RequestHref of its Href
// is accepted by net/url (what http.NewRequest uses) and keeps every byte
// except a stray '%' becoming "%25".
func FuzzRequestHref(f *testing.F) {
	for _, s := range []string{"http://h/100%", "http://h/%E0%A4%A", "http://h/a?q=5%#%", "https://h/%%%", "http://h/ü%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return
		}
		got := RequestHref(u.Href)
		if strings.ReplaceAll(got, "%25", "%") != strings.ReplaceAll(u.Href, "%25", "%") {
			t.Fatalf("RequestHref(%q) = %q changed more than stray %%", u.Href, got)
		}
		if _, err := url.Parse(got); err != nil && strings.Contains(err.Error(), "invalid URL escape") {
			t.Fatalf("url.Parse(RequestHref(%q) = %q): %v", u.Href, got, err)
		}
	})
}
