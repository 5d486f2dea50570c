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
		// Differential: the fast path must agree with the WHATWG library.
		trimmed := strings.TrimSpace(raw)
		repaired := repairSchemeGap(trimmed)
		if fast := parseFast(repaired); fast != nil {
			fast.Raw = trimmed
			slow, err := parseSlow(trimmed, repaired)
			if err != nil {
				t.Fatalf("parseFast accepts %q, the library refuses it: %v", raw, err.Err)
			}
			if *fast != *slow {
				t.Fatalf("parseFast(%q) = %+v\nlibrary        = %+v", raw, *fast, *slow)
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

// TestFastPathAgreesWithLibrary is the systematic half of the differential
// check in FuzzParse: every combination below that parseFast accepts must
// equal the WHATWG library's result, and the common shapes must be accepted.
func TestFastPathAgreesWithLibrary(t *testing.T) {
	hosts := []string{"example.com", "a-b.c", "x", "localhost", "a.b1", "a.0x", "a.0x1", "xn--a.com", "a.xn--b",
		"1.2.3.4", "a.b.", "A.com", "a..b", ".a", "-a.b", "a.b-", "a.123", "a.1b", "0x.a"}
	ports := []string{"", ":", ":80", ":443", ":8080", ":0", ":65535", ":65536", ":080", ":99999", ":1x"}
	paths := []string{"", "/", "/a", "/./", "/../a", "/a/.", "/a/..", "/%2e", "/%2E%2E/", "/.a", "/..a", "/a%2Fb",
		"/a'b", "/a|b^c", "/~!$&()*+,;=:@", `/a\b`, "/a b", "/é", "//", "/a//b", "/%", "/%zz"}
	tails := []string{"", "?", "#", "?a=1&b=2", "?a=1#f", "?#", "#f?x", "?'", "#`", `?"`, "?<", "#>", "#{}", "?{}", "?\\", "#\\", "?%", "#%2"}
	accepted := 0
	check := func(raw string) {
		fast := parseFast(raw)
		if fast == nil {
			return
		}
		accepted++
		fast.Raw = raw
		slow, err := parseSlow(raw, raw)
		if err != nil {
			t.Errorf("parseFast accepts %q, the library refuses it", raw)
			return
		}
		if *fast != *slow {
			t.Errorf("parseFast(%q) = %+v\nlibrary        = %+v", raw, *fast, *slow)
		}
	}
	for _, scheme := range []string{"http://", "https://", "HTTP://", "ftp://"} {
		for _, h := range hosts {
			for _, p := range ports {
				for _, pa := range paths {
					for _, tl := range tails {
						check(scheme + h + p + pa + tl)
					}
				}
			}
		}
	}
	for c := 0; c < 0x80; c++ {
		ch := string(rune(c))
		check("https://h.example/p" + ch + "x")
		check("https://h.example/p?q" + ch + "x")
		check("https://h.example/p#f" + ch + "x")
		check("https://h" + ch + "x.example/")
	}
	for _, raw := range []string{
		"https://example.com", "https://example.com/", "http://example.com:8080/a/b?c=d#e",
		"https://example.com/articles/2024/some-page?utm_source=x&id=42#top",
	} {
		if parseFast(raw) == nil {
			t.Errorf("parseFast(%q) = nil, want the fast path", raw)
		}
	}
	t.Logf("fast path accepted %d combinations", accepted)
	if accepted < 1000 {
		t.Errorf("only %d combinations took the fast path", accepted)
	}
}
