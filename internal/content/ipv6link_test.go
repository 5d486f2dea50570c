package content

import (
	"net/url"
	"strings"
	"testing"
)

// TestIPv6HostLinks: links and images of a page on an IPv6 host, and
// absolute links to one, keep their "[…]" host (hostile review: every link
// became http://%5B::1%5D:8080/…, which no client can open).
func TestIPv6HostLinks(t *testing.T) {
	page := `<html><body><main><p>Some paragraph text with <a href="x">rel</a> and <a href="http://[::1]/abs">abs</a> and <img src="i.png" alt="pic"> and <a href="https://example.com/a%5Bb%5D">enc</a> words words words.</p></main></body></html>`
	for _, c := range []struct{ base, rel, img string }{
		{"http://[::1]:8080/a/", "http://[::1]:8080/a/x", "http://[::1]:8080/a/i.png"},
		{"http://[::ffff:7f00:1]:8701/a/", "http://[::ffff:7f00:1]:8701/a/x", "http://[::ffff:7f00:1]:8701/a/i.png"},
		{"http://127.0.0.1/a/", "http://127.0.0.1/a/x", "http://127.0.0.1/a/i.png"},
	} {
		base, _ := url.Parse(c.base)
		d, err := HTMLToMarkdown(page, base)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"[rel](" + c.rel + ")", "[abs](http://[::1]/abs)", "![pic](" + c.img + ")", "(https://example.com/a%5Bb%5D)"} {
			if !strings.Contains(d.Markdown, want) {
				t.Errorf("base %s: %q missing in %q", c.base, want, d.Markdown)
			}
		}
	}
}
