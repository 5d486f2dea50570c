package content

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// FuzzConvert feeds random bodies and Content-Type values to the converter
// (without Convert's recover, so a panic is a failure) and checks the
// result's invariants.
func FuzzConvert(f *testing.F) {
	seeds := []struct {
		body, ct string
	}{
		{article("Seed", "<pre><code class=\"language-go\">x := 1\n# y</code></pre><table><tr><td>a|b<br>c</td></tr></table>"), "text/html; charset=utf-8"},
		{"<meta charset=gbk><p>\xc4\xe3\xba\xc3</p>", ""},
		{"\xff\xfe<\x00p\x00>\x00h\x00i\x00", "text/html"},
		{"<html><body><ul><li>a<ul><li>b</li></ul></li></ul></body></html>", "text/html; charset=windows-1252"},
		{`{"a": 1}`, "application/json"},
		{"# T\n\ntext", "text/markdown"},
		{"\x89PNG\r\n\x1a\n", "text/html"},
		{"PK\x03\x04", "application/octet-stream"},
		{string(minimalPDF("T", "Hello")), "application/pdf"},
		{"%PDF-1.4\n1 0 obj<</Type/Pages/Kids[1 0 R]/Count 9>>endobj trailer<</Root 1 0 R>>", ""},
		{"<base href=//x/><a href=../y>z</a>", "text/html; charset=\"x\"; charset=utf-8"},
		{"<title>T</title><article><p>T x</p><dl><dt>a</dt><dd>b</dd></dl><blockquote>q</blockquote><ol><li>1<ol start=3><li>3</li></ol></li></ol></article>", "text/html"},
		{"<article><ul><li><input type=checkbox checked> a</li></ul><figure><img src=i.png><figcaption>One two three four five six.</figcaption></figure><aside class=quote><div class=title>b:</div><blockquote>q<footer>f</footer></blockquote></aside><span class=u>c</span><span class=d>d</span><a href=#cite_ref-1>^</a></article>", "text/html"},
		{"<main><h1>A</h1><pre><code class=language-sh>x\n  \ny</code></pre><div hidden>h</div></main><footer>f</footer>", "text/html"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.ct)
	}
	base, _ := url.Parse("https://example.com/dir/page.html")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		checkConvert(t, body, contentType, base)
	})
}

// checkConvert is the property both fuzz targets check: Convert never hangs
// (a 10 s watchdog crashes and so records the input), every error carries a
// known reason code, and a success has a known kind, non-empty valid UTF-8
// markdown (HTML, feeds, XML) and a charset for text kinds.
func checkConvert(t *testing.T, body []byte, contentType string, base *url.URL) {
	timer := time.AfterFunc(10*time.Second, func() {
		panic(fmt.Sprintf("convert hung on %d bytes, content type %q", len(body), contentType))
	})
	defer timer.Stop()
	doc, err := convert(body, contentType, base)
	if err != nil {
		if e := reason.As(err); e == nil || !e.Code.Known() {
			t.Fatalf("error without a known reason code: %v", err)
		}
		return
	}
	switch doc.Kind {
	case KindHTML, KindText, KindMarkdown, KindJSON, KindPDF, KindFeed, KindXML:
	default:
		t.Fatalf("unknown kind %q", doc.Kind)
	}
	if strings.TrimSpace(doc.Markdown) == "" {
		t.Fatal("success with empty markdown")
	}
	if doc.Kind != KindPDF && doc.Charset == "" {
		t.Fatal("text without a charset")
	}
	if (doc.Kind == KindHTML || doc.Kind == KindFeed || doc.Kind == KindXML) && !utf8.ValidString(doc.Markdown) {
		t.Fatal("markdown is not valid UTF-8")
	}
}
