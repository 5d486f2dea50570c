package urlsafe

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

func TestCanonicalHost(t *testing.T) {
	tests := []struct {
		name, raw, host string
		class           Class
		href            string // "" = not checked
	}{
		{name: "decimal IPv4", raw: "http://2130706433/", host: "127.0.0.1", class: ClassPrivate, href: "http://127.0.0.1/"},
		{name: "hex and short form", raw: "http://0x7f.1/", host: "127.0.0.1", class: ClassPrivate},
		{name: "octal first part", raw: "http://0177.0.0.1/", host: "127.0.0.1", class: ClassPrivate},
		{name: "short form", raw: "http://127.1/", host: "127.0.0.1", class: ClassPrivate},
		{name: "ideographic full stops", raw: "http://127。0。0。1/", host: "127.0.0.1", class: ClassPrivate},
		{name: "enclosed alphanumerics", raw: "http://①②⑦.⓪.⓪.①/", host: "127.0.0.1", class: ClassPrivate},
		{name: "backslash as slash", raw: `http:/\/127.0.0.1/`, host: "127.0.0.1", class: ClassPrivate},
		{name: "percent-encoded host", raw: "http://%31%32%37.0.0.1/", host: "127.0.0.1", class: ClassPrivate},
		{name: "tab stripped", raw: "http://exa\tmple.com/", host: "example.com", class: ClassPublic, href: "http://example.com/"},
		{name: "newline stripped", raw: "http://exa\nmple.com/", host: "example.com", class: ClassPublic},
		{name: "upper case and trailing dot", raw: "http://EXAMPLE.com./", host: "example.com", class: ClassPublic, href: "http://example.com./"},
		{name: "IDNA", raw: "http://bücher.de/", host: "xn--bcher-kva.de", class: ClassPublic, href: "http://xn--bcher-kva.de/"},
		{name: "full-width letters", raw: "http://ＥＸＡＭＰＬＥ.com/", host: "example.com", class: ClassPublic},
		{name: "userinfo", raw: "http://user:pw@host.com/", host: "host.com", class: ClassPublic},
		{name: "trailing dot on IPv4", raw: "http://127.0.0.1./", host: "127.0.0.1", class: ClassPrivate},
		{name: "metadata in decimal", raw: "http://2852039166/", host: "169.254.169.254", class: ClassMetadata},
		{name: "mapped loopback", raw: "http://[::ffff:127.0.0.1]/", host: "::ffff:7f00:1", class: ClassPrivate},
		{name: "compatible loopback", raw: "http://[::127.0.0.1]/", host: "::7f00:1", class: ClassPrivate},
		{name: "NAT64 metadata", raw: "http://[64:ff9b::a9fe:a9fe]/", host: "64:ff9b::a9fe:a9fe", class: ClassMetadata},
		{name: "NAT64 local-use private", raw: "http://[64:ff9b:1::a00:1]/", host: "64:ff9b:1::a00:1", class: ClassPrivate},
		{name: "6to4 metadata", raw: "http://[2002:a9fe:a9fe::]/", host: "2002:a9fe:a9fe::", class: ClassMetadata},
		// breaker5 D1: the IPv6 prefix keeps its own CPython class even when
		// the embedded IPv4 is public (2002::/16 private in newer CPython).
		{name: "6to4 of a public IPv4", raw: "http://[2002:808:808::1]/", host: "2002:808:808::1", class: ClassPrivate},
		// Teredo: server 65.54.227.120, client 10.0.0.1 = ^0xf5fffffe.
		{name: "Teredo client 10.0.0.1", raw: "http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", host: "2001:0:4136:e378:8000:63bf:f5ff:fffe", class: ClassPrivate},
		{name: "Azure wire server", raw: "http://168.63.129.16/", host: "168.63.129.16", class: ClassMetadata},
		{name: "AWS IPv6 IMDS", raw: "http://[FD00:EC2::254]/", host: "fd00:ec2::254", class: ClassMetadata},
		{name: "default port dropped", raw: "HTTPS://Example.com:443/x", host: "example.com", class: ClassPublic, href: "https://example.com/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Parse(tt.raw)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.raw, err)
			}
			if u.Host != tt.host {
				t.Errorf("Host = %q, want %q", u.Host, tt.host)
			}
			if tt.href != "" && u.Href != tt.href {
				t.Errorf("Href = %q, want %q", u.Href, tt.href)
			}
			c := ClassPublic
			if u.Addr.IsValid() {
				c = ClassifyAddr(u.Addr)
			}
			if c != tt.class {
				t.Errorf("class = %v, want %v", c, tt.class)
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	u, err := Parse("  https://user:pw@[::1]:8443/a b?q=1#frag  ")
	if err != nil {
		t.Fatal(err)
	}
	want := URL{
		Raw: "https://user:pw@[::1]:8443/a b?q=1#frag", Href: "https://user:pw@[::1]:8443/a%20b?q=1#frag",
		Scheme: "https", Host: "::1", Port: "8443", Addr: netip.MustParseAddr("::1"),
		Username: "user", HasPassword: true, Path: "/a%20b", RawQuery: "q=1", Fragment: "frag",
	}
	if *u != want {
		t.Errorf("Parse = %+v\nwant    %+v", *u, want)
	}
	if hp := u.HostPort(); hp != "[::1]:8443" {
		t.Errorf("HostPort = %q", hp)
	}
	for raw, hp := range map[string]string{
		"http://example.com/":     "example.com:80",
		"https://example.com/":    "example.com:443",
		"https://[2001:db8::1]/":  "[2001:db8::1]:443",
		"http://example.com:8080": "example.com:8080",
		"foo://example.com/":      "example.com",
	} {
		u, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.HostPort(); got != hp {
			t.Errorf("HostPort(%q) = %q, want %q", raw, got, hp)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for _, raw := range []string{
		"", "   ", "http://", "https://", "example.com/path", "not a url at all",
		"http://exa mple.com/", "http://1.2.3.4.5/", "http://999999999999/",
		"http://[fe80::1%eth0]/", "http://a%2Fb.com/", "http://xn--/", "http://./", "http://../",
		"https://sk-aaaaaaaaaaaaaaaaaaaa%00.com/",
	} {
		u, err := Parse(raw)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want invalid_url", raw, u)
			continue
		}
		if err.Code != reason.InvalidURL || err.Gate != reason.GateParse {
			t.Errorf("Parse(%q) = %v/%v, want invalid_url/parse", raw, err.Code, err.Gate)
		}
		if strings.Contains(err.Error(), "sk-") || (err.Err != nil && strings.Contains(err.Err.Error(), "sk-")) {
			t.Errorf("Parse(%q) error echoes input: %v / %v", raw, err, err.Err)
		}
	}
}

func TestParseSchemeGap(t *testing.T) {
	u, err := Parse("https://  docs.example/page")
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "docs.example" || u.Href != "https://docs.example/page" {
		t.Errorf("got host %q href %q", u.Host, u.Href)
	}
}

func TestCheckStatic(t *testing.T) {
	tests := []struct {
		name, raw string
		opts      Options
		want      reason.Code
		gate      reason.Gate
	}{
		{name: "public name", raw: "https://example.com/"},
		{name: "ftp", raw: "ftp://example.com/", want: reason.UnsupportedScheme, gate: reason.GateScheme},
		{name: "file", raw: "file:///etc/passwd", want: reason.UnsupportedScheme, gate: reason.GateScheme},
		{name: "javascript", raw: "javascript:alert(1)", want: reason.UnsupportedScheme, gate: reason.GateScheme},
		{name: "metadata host", raw: "http://METADATA.google.internal./x", want: reason.SSRFMetadata, gate: reason.GateSSRF},
		{name: "metadata.goog", raw: "http://metadata.goog/", want: reason.SSRFMetadata, gate: reason.GateSSRF},
		{name: "loopback literal", raw: "http://127.1/", want: reason.SSRFPrivate, gate: reason.GateSSRF},
		{name: "loopback allowed by toggle", raw: "http://127.1/", opts: Options{AllowPrivate: true}},
		{name: "metadata literal with toggle", raw: "http://169.254.169.254/", opts: Options{AllowPrivate: true}, want: reason.SSRFMetadata, gate: reason.GateSSRF},
		{name: "Azure literal with toggle", raw: "http://168.63.129.16/", opts: Options{AllowPrivate: true}, want: reason.SSRFMetadata, gate: reason.GateSSRF},
		{name: "CGNAT literal", raw: "http://100.64.0.1/", want: reason.SSRFPrivate, gate: reason.GateSSRF},
		{name: "mapped metadata literal", raw: "http://[::ffff:169.254.169.254]/", opts: Options{AllowPrivate: true}, want: reason.SSRFMetadata, gate: reason.GateSSRF},
		{name: "Teredo private literal", raw: "http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", want: reason.SSRFPrivate, gate: reason.GateSSRF},
		{name: "public literal", raw: "http://8.8.8.8/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, perr := Parse(tt.raw)
			if perr != nil {
				t.Fatal(perr)
			}
			err := tt.opts.CheckStatic(u)
			if codeOf(err) != tt.want {
				t.Fatalf("CheckStatic(%q) = %v, want %q", tt.raw, err, tt.want)
			}
			if err != nil {
				if err.Gate != tt.gate {
					t.Errorf("gate = %q, want %q", err.Gate, tt.gate)
				}
				if u.Host != "" && strings.Contains(err.Message, u.Host) {
					t.Errorf("message reveals host/IP: %q", err.Message)
				}
			}
		})
	}
	if err := (Options{}).CheckStatic(nil); codeOf(err) != reason.InvalidURL {
		t.Errorf("CheckStatic(nil) = %v", err)
	}
}

func TestJudgeAnswers(t *testing.T) {
	o := Options{}
	if err := o.JudgeAnswers("https", "example.com", nil); codeOf(err) != reason.DNSUnresolvable {
		t.Errorf("no answers: %v", err)
	}
	if err := o.JudgeAnswers("https", "example.com", []string{"93.184.216.34", "2606:4700::1"}); err != nil {
		t.Errorf("public answers: %v", err)
	}
	if err := o.JudgeAnswers("https", "example.com", []string{"93.184.216.34", "bogus", "10.0.0.1"}); codeOf(err) != reason.DNSBadAnswer {
		t.Errorf("first bad answer decides: %v", err)
	}
	err := o.JudgeAnswers("https", "example.com", []string{"10.1.2.3"})
	if codeOf(err) != reason.SSRFPrivate || strings.Contains(err.Message, "10.1.2.3") {
		t.Errorf("private answer: %v", err)
	}
	for _, m := range []string{"security.allow_private_urls: true", "security.fake_ip_ranges"} {
		if !strings.Contains(err.Message, m) {
			t.Errorf("private message does not name the fix %q: %q", m, err.Message)
		}
	}
	// Trusted host: exact, https only, trailing dot tolerated; metadata never.
	if err := o.JudgeAnswers("https", "multimedia.nt.qq.com.cn.", []string{"198.18.0.1"}); err != nil {
		t.Errorf("trusted host: %v", err)
	}
	if err := o.JudgeAnswers("https", "multimedia.nt.qq.com.cn", []string{"169.254.169.254"}); codeOf(err) != reason.SSRFMetadata {
		t.Errorf("trusted host to metadata: %v", err)
	}
}

func TestParseFakeIPRanges(t *testing.T) {
	ok, warns := ParseFakeIPRanges([]string{
		"198.18.0.0/15", " 198.18.0.0/15 ", "198.18.1.1/15", "::ffff:198.18.0.0/111", "192.0.2.7",
		"10.0.0.0/8", "0.0.0.0/0", "::/0", "fd00::/8", "127.0.0.1", "nonsense", "1.2.3.4/33", "",
	})
	want := []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("192.0.2.7/32")}
	if len(ok) != len(want) || ok[0] != want[0] || ok[1] != want[1] {
		t.Errorf("ok = %v, want %v", ok, want)
	}
	if len(warns) != 7 {
		t.Errorf("warnings = %d %q, want 7", len(warns), warns)
	}
	// A declared IPv4 range never excuses ::1 (compatible-form unwrap skips ::/104).
	o := Options{FakeIPRanges: []netip.Prefix{netip.MustParsePrefix("0.0.0.1/32")}}
	if err := o.JudgeAnswers("https", "x.example", []string{"::1"}); codeOf(err) != reason.SSRFPrivate {
		t.Errorf("::1 with 0.0.0.1/32 declared: %v", err)
	}
}

func TestUnwrap4(t *testing.T) {
	for in, want := range map[string]string{
		"::ffff:1.2.3.4":                       "1.2.3.4",
		"::ffff:0:1.2.3.4":                     "1.2.3.4",
		"::1.2.3.4":                            "1.2.3.4",
		"::1":                                  "::1",
		"::":                                   "::",
		"64:ff9b::1.2.3.4":                     "1.2.3.4",
		"64:ff9b:1::1.2.3.4":                   "1.2.3.4",
		"2002:102:304::":                       "1.2.3.4",
		"2001:0:4136:e378:8000:63bf:f5ff:fffe": "10.0.0.1",
		"2606:4700::1":                         "2606:4700::1",
		"fe80::1%eth0":                         "fe80::1",
		"8.8.8.8":                              "8.8.8.8",
	} {
		if got := Unwrap4(netip.MustParseAddr(in)); got != netip.MustParseAddr(want) {
			t.Errorf("Unwrap4(%s) = %s, want %s", in, got, want)
		}
	}
	if ClassifyAddr(netip.Addr{}) != ClassPrivate {
		t.Error("zero Addr must fail closed")
	}
}

func TestIsLocalDevHost(t *testing.T) {
	// The cache owner tests cache.never_cache_local end to end; this checks the
	// hostname heuristic against the same vectors.
	for _, v := range vectors.Area(t, "cache.never_cache_local", 13) {
		var in struct{ URL string }
		var want struct {
			Local bool `json:"local_dev_never_cached"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		u, err := Parse(in.URL)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsLocalDevHost(u.Host); got != want.Local {
			t.Errorf("%s: IsLocalDevHost(%q) = %v, want %v", in.URL, u.Host, got, want.Local)
		}
	}
	for host, want := range map[string]bool{
		"": true, "LOCALHOST.": true, "[::1]": true, "fe80::1": true, "0.0.0.0": true,
		"240.0.0.1": true, "224.0.0.1": false, "169.254.1.1": true, "100.100.100.200": false,
		"example.com": false, "printer.local": true, "::ffff:10.0.0.1": true, "8.8.8.8": false,
	} {
		if got := IsLocalDevHost(host); got != want {
			t.Errorf("IsLocalDevHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestClassString(t *testing.T) {
	for c, s := range map[Class]string{ClassPublic: "public", ClassPrivate: "private", ClassMetadata: "metadata", 9: "unknown"} {
		if c.String() != s {
			t.Errorf("%d.String() = %q", c, c.String())
		}
	}
}

// codeOf returns the code of a possibly nil *reason.Error. (reason.Of takes
// an error interface, and a nil *reason.Error inside one is not a nil error.)
func codeOf(e *reason.Error) reason.Code {
	if e == nil {
		return ""
	}
	return e.Code
}

func TestParseLimits(t *testing.T) {
	long := "https://example.com/?q=" + strings.Repeat("a", 8<<10)
	if _, err := Parse(long); err != nil {
		t.Errorf("8 KiB query refused: %v", err)
	}
	for name, raw := range map[string]string{
		"too long":           "https://example.com/?q=" + strings.Repeat("a", MaxURLBytes),
		"long userinfo":      "http://" + strings.Repeat("a:", MaxAuthorityBytes) + "@x.com/",
		"long opaque host":   "foo://" + strings.Repeat("a", MaxAuthorityBytes+1) + "/",
		"many backslashes":   "http://x.com/" + strings.Repeat(`\`, MaxSlashes+1),
		"many slashes":       "http://x.com/" + strings.Repeat("a/", MaxSlashes+1),
		"backslash relative": "http:x" + strings.Repeat(`\`, MaxSlashes+1),
	} {
		if _, err := Parse(raw); codeOf(err) != reason.InvalidURL {
			t.Errorf("%s: Parse = %v, want invalid_url", name, err)
		}
	}
	// Opaque paths have no authority: a long mailto: is not an authority overflow.
	if _, err := Parse("mailto:" + strings.Repeat("a", 4<<10) + "@example.com"); err != nil {
		t.Errorf("long mailto refused: %v", err)
	}
}

// TestEmbeddedIPv4KeepsIPv6Class: a Teredo, IPv4-compatible, NAT64 or 6to4
// literal is refused when either its IPv6 prefix (spec §A6.4, CPython:
// 2001::/23 is_private, ::/8 is_reserved, 2002::/16 is_private) or the IPv4
// it carries is non-public; an IPv4-mapped or -translated one is judged by
// its IPv4 alone (spec §A6.2). Before breaker5 D1 the first five were
// public: the embedded IPv4 replaced the address before the lookup.
func TestEmbeddedIPv4KeepsIPv6Class(t *testing.T) {
	for raw, want := range map[string]Class{
		"http://[2001::f7f7:f7f7]/":      ClassPrivate, // Teredo, client 8.8.8.8
		"http://[2001::7f00:1]/":         ClassPrivate, // Teredo, client 128.255.255.254
		"http://[::8.8.8.8]/":            ClassPrivate, // IPv4-compatible, ::/8 reserved
		"http://[64:ff9b::808:808]/":     ClassPrivate, // NAT64 WKP, inside ::/8
		"http://[2002:808:808::]/":       ClassPrivate, // 6to4
		"http://[64:ff9b::a9fe:a9fe]/":   ClassMetadata,
		"http://[2001::5601:5601]/":      ClassMetadata, // Teredo client 169.254.169.254
		"http://[::ffff:8.8.8.8]/":       ClassPublic,   // mapped: the IPv4 alone
		"http://[::ffff:0:8.8.8.8]/":     ClassPublic,   // translated: the IPv4 alone
		"http://[::ffff:10.0.0.1]/":      ClassPrivate,
		"http://[2606:4700:4700::1111]/": ClassPublic,
	} {
		u, err := Parse(raw)
		if err != nil {
			t.Fatalf("Parse(%q): %v", raw, err)
		}
		if got := ClassifyAddr(u.Addr); got != want {
			t.Errorf("ClassifyAddr(%s) = %s, want %s", u.Addr, got, want)
		}
		wantCode := map[Class]reason.Code{ClassPublic: "", ClassPrivate: reason.SSRFPrivate, ClassMetadata: reason.SSRFMetadata}[want]
		if got := codeOf((Options{}).CheckStatic(u)); got != wantCode {
			t.Errorf("CheckStatic(%s) = %q, want %q", raw, got, wantCode)
		}
	}
	// A declared fake-IP range excuses an embedding only when it holds every
	// non-public part: 198.18.0.0/15 excuses the IPv4 but not 2002::/16.
	o := Options{FakeIPRanges: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}}
	if o.JudgeAddr("http", "x.test", netip.MustParseAddr("2002:c612:1::")) == nil {
		t.Error("a fake-IP IPv4 range excused a 6to4 address")
	}
	if o.JudgeAddr("http", "x.test", netip.MustParseAddr("198.18.0.1")) != nil || o.JudgeAddr("http", "x.test", netip.MustParseAddr("::ffff:198.18.0.1")) != nil {
		t.Error("the fake-IP range no longer excuses its own or IPv4-mapped addresses")
	}
	for host, want := range map[string]bool{"::8.8.8.8": true, "2001::f7f7:f7f7": true, "::ffff:8.8.8.8": false} {
		if got := IsLocalDevHost(host); got != want {
			t.Errorf("IsLocalDevHost(%q) = %v, want %v", host, got, want)
		}
	}
}
