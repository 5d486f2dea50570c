package urlsafe

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

func TestParseRef(t *testing.T) {
	for _, c := range []struct{ base, ref, want string }{
		{"http://h.test/a/b", "c", "http://h.test/a/c"},
		{"http://h.test/a/b", "/100%", "http://h.test/100%"}, // stray '%' kept, as browsers keep it
		{"http://h.test/a/b", "../x y", "http://h.test/x%20y"},
		{"http://h.test/a/b", "//0x7f.1/", "http://127.0.0.1/"},
		{"http://h.test/a/b", "https://other.test", "https://other.test/"},
		{"http://h.test/a/b", "\t/t\n", "http://h.test/t"},
	} {
		u, rerr := ParseRef(c.base, c.ref)
		if rerr != nil || u.Href != c.want {
			t.Errorf("ParseRef(%q, %q) = %v, %v; want %q", c.base, c.ref, u, rerr, c.want)
		}
	}
	if _, rerr := ParseRef("http://h.test/", "http://[::1"); rerr == nil || rerr.Code != reason.InvalidURL {
		t.Errorf("bad ref: %v, want invalid_url", rerr)
	}
}
