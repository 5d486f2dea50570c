package vendors

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// FuzzParseExaBlocks: the keyless Exa reply parser never panics and returns
// only rows with a URL taken from a "URL:" line.
func FuzzParseExaBlocks(f *testing.F) {
	f.Add("Title: A\nURL: https://a.example/\nHighlights:\none\ntwo\n---\nTitle: B\nURL: https://b.example/\n")
	f.Add("---\n---\nURL:\nHighlights: x")
	f.Add("Title: only\r\nURL: https://c.example/\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, r := range parseExaBlocks(text) {
			if r.URL == "" || !strings.Contains(text, r.URL) {
				t.Fatalf("row URL %q not from the text", r.URL)
			}
		}
		_ = titleOf(text)
	})
}

// FuzzParseDDG: the DuckDuckGo HTML parser never panics, skips ads and
// returns only http(s) URLs.
func FuzzParseDDG(f *testing.F) {
	f.Add(`<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2F">A</a><a class="result__snippet">s</a></div>`)
	f.Add(`<div class="result result--ad"><a class="result__a" href="https://ad.example/">x</a></div>`)
	f.Add(`<div class="result"><a class="result__a" href="javascript:alert(1)">x</a></div>`)
	f.Fuzz(func(t *testing.T, page string) {
		doc, err := html.Parse(bytes.NewReader([]byte(page)))
		if err != nil {
			return
		}
		for _, r := range numbered(parseDDG(doc)) {
			if r.URL == "" {
				t.Fatal("empty URL kept")
			}
			u, err := url.Parse(r.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("not an absolute http(s) URL: %q", r.URL)
			}
		}
	})
}

// FuzzScrub: scrub removes the key from any text and keeps valid UTF-8 valid.
func FuzzScrub(f *testing.F) {
	f.Add("error for key sk-abc", "sk-abc")
	f.Add("Bearer tvly-0123456789abcdefghij0123", "")
	f.Fuzz(func(t *testing.T, s, key string) {
		if len(key) < 4 {
			key = ""
		}
		out := scrub(s, key)
		if key != "" && strings.Contains(out, key) && !strings.Contains("[redacted]", key) {
			t.Fatalf("key survived: %q", out)
		}
		if utf8.ValidString(s) && utf8.ValidString(key) && !utf8.ValidString(out) {
			t.Fatal("scrub broke UTF-8")
		}
	})
}
