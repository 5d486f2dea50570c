package urlsafe_test

import (
	"fmt"
	"net/netip"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

func verdict(err *reason.Error) string {
	if err == nil {
		return "allowed"
	}
	return string(err.Code)
}

// A URL is judged by the host a browser would connect to, not by its text.
func ExampleParse() {
	for _, raw := range []string{
		"http://0x7f.1/",
		"http://127。0。0。1/",
		"http://①②⑦.⓪.⓪.①/",
		"HTTPS://Bücher.example./a b",
	} {
		u, err := urlsafe.Parse(raw)
		if err != nil {
			fmt.Println(err.Code)
			continue
		}
		fmt.Println(u.Host, u.Href)
	}
	// Output:
	// 127.0.0.1 http://127.0.0.1/
	// 127.0.0.1 http://127.0.0.1/
	// 127.0.0.1 http://127.0.0.1/
	// xn--bcher-kva.example https://xn--bcher-kva.example./a%20b
}

func ExampleOptions_CheckStatic() {
	var strict urlsafe.Options
	lax := urlsafe.Options{AllowPrivate: true}
	for _, raw := range []string{"http://2130706433/", "http://[::ffff:169.254.169.254]/", "ftp://example.com/"} {
		u, _ := urlsafe.Parse(raw)
		fmt.Println(raw, verdict(strict.CheckStatic(u)), verdict(lax.CheckStatic(u)))
	}
	// Output:
	// http://2130706433/ ssrf_private allowed
	// http://[::ffff:169.254.169.254]/ ssrf_metadata ssrf_metadata
	// ftp://example.com/ unsupported_scheme unsupported_scheme
}

func ExampleClassifyAddr() {
	for _, s := range []string{"8.8.8.8", "100.64.0.1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "2002:808:808::1"} {
		fmt.Println(s, urlsafe.ClassifyAddr(netip.MustParseAddr(s)))
	}
	// Output:
	// 8.8.8.8 public
	// 100.64.0.1 private
	// ::ffff:10.0.0.1 private
	// 64:ff9b::a9fe:a9fe metadata
	// 2002:808:808::1 private
}

func ExampleFindSecret() {
	err := urlsafe.FindSecret("https://example.com/cb?k=sk%252Dproj0123456789abcdef")
	fmt.Println(err.Code)
	fmt.Println(err.Message)
	// Output:
	// secret_in_url
	// Blocked: URL contains what appears to be an API key or token (an OpenAI-style key (sk-…)). Secrets must not be sent in URLs: remove it from the URL.
}
