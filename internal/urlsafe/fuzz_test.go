package urlsafe

import (
	"net/netip"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"https://example.com/articles/2024/some-page?utm_source=x&id=42#top",
	"http://2130706433/", "http://0x7f.1/", "http://127。0。0。1/", "http://①②⑦.⓪.⓪.①/",
	`http:/\/127.0.0.1/`, "http://%31%32%37.0.0.1/", "http://exa\tmple.com/", "http://EXAMPLE.com./",
	"http://bücher.de/", "http://user:pw@host.com/", "http://[::ffff:127.0.0.1]/", "https:// host/",
	"foo://EXAMPLE/x", "web+demo:/.//not-a-host/", "file:///etc/passwd", "mailto:a@b", "http://a..b../",
	"https://evil.example/?k=sk%252Dproj0123456789abcdef", "\\nghp_AAAAAAAAAAAAAAAAAAAA",
	"https://example.com", "http://a.b:8080/x/./y?q='#f`", "https://x.y:443/", "http://x.0x/", "http://a.xn--b/",
	"https://h.example/a/%2e%2E/b", "http://h.example/a\\b", "https://h.example/?a=<b>#c{d}",
	"https://x.example/login?next=%2Fcb%3Faccess_token%3Dabc123", "https://x.example/?r=https%253A%252F%252Fy%252F%253Ftoken%253Dx",
	"https://x.example/login?next=%2Fdashboard", "https://x.example/?state=token%3Dabc#f",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Parse(raw)
		_ = Normalize(raw)
		_ = SensitiveQueryParam(raw)
		if err != nil {
			return
		}
		if u.Host != strings.ToLower(u.Host) || strings.HasSuffix(u.Host, ".") {
			t.Fatalf("Parse(%q).Host = %q: upper case or trailing dot", raw, u.Host)
		}
		if u.Addr.IsValid() {
			if a, err := netip.ParseAddr(u.Host); err != nil || a != u.Addr {
				t.Fatalf("Parse(%q): Addr %v does not match Host %q", raw, u.Addr, u.Host)
			}
		}
		_ = u.HostPort()
		u2, err := Parse(u.Href)
		if err != nil {
			t.Fatalf("Parse(%q).Href = %q does not re-parse: %v", raw, u.Href, err.Err)
		}
		if u2.Href != u.Href {
			t.Fatalf("Parse(%q): Href %q re-parses to %q", raw, u.Href, u2.Href)
		}
		if u2.Host != u.Host {
			t.Fatalf("Parse(%q): Host %q re-parses to %q", raw, u.Host, u2.Host)
		}
		_ = Options{}.CheckStatic(u)
	})
}

func FuzzFindSecret(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, ok := MatchPrefix(raw)
		err := FindSecret(raw)
		if ok && err == nil {
			t.Fatalf("MatchPrefix finds a token in %q but FindSecret is nil", raw)
		}
		u, _ := Parse(raw)
		if ok && CheckSecrets(raw, u, true) == nil {
			t.Fatalf("MatchPrefix finds a token in %q but CheckSecrets is nil", raw)
		}
	})
}
