// Package content turns the bytes of an HTTP response into clean markdown of
// the page's main content. It is the heart of Gatehouse's embedded "direct"
// extract backend.
//
// The steps, in order:
//
//   - classify the body: a known binary magic number (spec §A10.2) declared as
//     text is refused with reason.BinaryPayload, images, audio, video,
//     archives and other binary types with reason.UnsupportedContentType;
//   - decode text per the WHATWG order (BOM → Content-Type charset → <meta>
//     prescan → sniff), see Decode;
//   - HTML: find the main content (go-trafilatura and readability, merged;
//     on small pages the main container itself, see direct.go) and convert
//     it to GitHub-flavoured markdown (html-to-markdown v2), see
//     HTMLToMarkdown;
//   - text/plain, markdown and JSON pass through as decoded text;
//   - PDF: plain text per page (github.com/ledongthuc/pdf), laid out from
//     the glyphs' positions: a line break where the baseline moves, a
//     blank line at a paragraph-sized gap, a space at a word gap.
//
// # Large pages
//
// The direct fetcher accepts bodies up to 10 MB, and both extractors are
// superlinear on big pages (measured on 2 shared cores): go-trafilatura
// v1.12.2 concatenates the text of every <p> of the page with += (it takes
// 10.7 s on 10 MB of 1 KB paragraphs), and readability re-counts the text
// of every ancestor while cleaning (4.6 s on 10 MB of text nested 64 <div>s
// deep). So HTMLToMarkdown first measures the parsed page (visible
// text, outside <head>, scripts, styles, <noscript>, <template>, <svg>) and
// picks, see size.go:
//
//   - both extractors and the merge when the text is at most 1 MiB, the page
//     has at most 30,000 elements, trafilatura's <p> concatenation would
//     copy at most 2e8 bytes (about 0.1 s) and the sum of text bytes times
//     element depth is at most 2e7;
//   - readability alone (it scales better and rarely loses text) up to
//     100,000 elements and a text × depth sum of 1e8 (about 1.3 s);
//   - beyond, the whole <body> minus navigation, scripts and forms.
//
// Every limit is at least ten times the largest value on the shared 181-page
// bench (101 KB of text, 1,536 elements), whose output is unchanged. Lists
// and quotes nested more than maxNesting (8) deep are flattened before
// conversion, as html-to-markdown's time grows with the nesting depth. A
// 10 MB page of every shape tried (long article, one huge paragraph, deep
// nesting, big table, link lists, code, outlines, quote threads) converts
// in under 2 s; the merge itself is linear (hash sets, no substring search
// over the whole answer). See TestLargePageLinear and
// BenchmarkConvertLarge.
//
// Nothing here touches the network or the file system. Every function is safe
// for concurrent use.
package content

import (
	"bytes"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Kinds of Document, as reported in Document.Kind.
const (
	KindHTML     = "html"
	KindText     = "text"
	KindMarkdown = "markdown"
	KindJSON     = "json"
	KindPDF      = "pdf"
)

// Document is the converted page.
type Document struct {
	// Title is the page title, trimmed: main-content extractor metadata,
	// then <title>, then the first <h1> (HTML); the first level-1 ATX heading
	// (markdown); the document information /Title (PDF). It may be "".
	Title string
	// Markdown is the main content as markdown. For text/plain, markdown and
	// JSON it is the decoded text itself; for PDF, the plain text.
	Markdown string
	// Charset is the WHATWG name of the encoding used to decode the body
	// ("utf-8", "gbk", "utf-16le", "windows-1252", …); "" for binary formats
	// such as PDF.
	Charset string
	// Kind is one of KindHTML, KindText, KindMarkdown, KindJSON, KindPDF.
	Kind string
}

// Convert turns a response body into a Document.
//
// contentType is the raw Content-Type header value and may be "" (then the
// body is sniffed as browsers do, WHATWG MIME Sniffing via
// net/http.DetectContentType). A malformed header is read up to its first ';'.
// base is the final URL after redirects: links and images become absolute
// against it, honouring a <base href> in the page; base may be nil (links stay
// as written).
//
// Errors are *reason.Error values:
//   - reason.BinaryPayload: the body starts with a known binary magic number
//     (SQLite, ZIP, gzip, bzip2, xz, 7-Zip, ELF, Mach-O, PNG, JPEG, GIF, TIFF,
//     FLAC, Ogg; spec §A10.2) although the declared type is text or missing;
//   - reason.UnsupportedContentType: a binary type Gatehouse does not convert
//     (image/*, audio/*, video/*, font/*, archives, application/octet-stream
//     that sniffs binary, …);
//   - reason.EmptyContent: the body is empty or nothing extractable was found.
//
// Convert never panics, whatever the input.
func Convert(body []byte, contentType string, base *url.URL) (doc Document, err error) {
	defer func() {
		// A last safety net: the parsers are third-party code fed with
		// hostile bytes. FuzzConvert runs convert without it.
		if r := recover(); r != nil {
			doc = Document{}
			err = reason.New(reason.EmptyContent, "", "the page could not be converted to text (malformed document); download it and inspect it locally")
		}
	}()
	return convert(body, contentType, base)
}

func convert(body []byte, contentType string, base *url.URL) (doc Document, err error) {
	mediaType := parseMediaType(contentType)
	if len(bytes.TrimSpace(body)) == 0 {
		return Document{}, reason.New(reason.EmptyContent, "", "the response body is empty; nothing to extract")
	}
	kind, err := classify(body, mediaType)
	if err != nil {
		return Document{}, err
	}
	if kind == KindPDF {
		return convertPDF(body)
	}
	text, cs, err := decode(body, contentType, kind == KindHTML)
	if err != nil {
		return Document{}, err
	}
	switch kind {
	case KindHTML:
		doc, err = HTMLToMarkdown(text, base)
		doc.Charset = cs
		return doc, err
	case KindMarkdown:
		doc = Document{Title: markdownTitle(text), Markdown: text, Kind: KindMarkdown, Charset: cs}
	default:
		doc = Document{Markdown: text, Kind: kind, Charset: cs}
	}
	if strings.TrimSpace(doc.Markdown) == "" {
		return Document{}, reason.New(reason.EmptyContent, "", "the response body has no text; nothing to extract")
	}
	return doc, nil
}

// parseMediaType returns the lower-cased media type of a Content-Type value,
// without parameters; "" when none is given. A header that mime cannot parse
// (duplicate parameters, stray characters) still yields the part before ';'.
func parseMediaType(contentType string) string {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// classify picks the Kind for a body and its declared media type, or refuses
// it. Rules, in order: a PDF signature wins; a binary magic number is refused
// (BinaryPayload when declared as text or undeclared, UnsupportedContentType
// when declared as a binary type such as application/octet-stream); a known
// textual type gives its kind; an undeclared or generic binary type is
// sniffed (WHATWG MIME Sniffing) and refused unless it sniffs as text.
func classify(body []byte, mediaType string) (string, error) {
	if isPDF(body) || mediaType == "application/pdf" || mediaType == "application/x-pdf" {
		if !isPDF(body) {
			return "", reason.New(reason.UnsupportedContentType, "", "the response is declared as PDF but is not a PDF file; download it and inspect it locally")
		}
		return KindPDF, nil
	}
	if kindName, ok := binaryMagic(body); ok {
		if mediaType == "" || isTextual(mediaType) {
			return "", reason.Newf(reason.BinaryPayload, "", "the response body is a binary file (%s) despite its declared type; download it with the terminal and inspect it locally", kindName)
		}
		return "", unsupported(mediaType)
	}
	if k := textKind(mediaType); k != "" {
		return k, nil
	}
	if mediaType == "" || isGenericBinary(mediaType) {
		sniffed := parseMediaType(http.DetectContentType(body))
		if k := textKind(sniffed); k != "" {
			return k, nil
		}
		if sniffed == "application/pdf" {
			return KindPDF, nil
		}
		if mediaType == "" {
			mediaType = sniffed
		}
	}
	return "", unsupported(mediaType)
}

func unsupported(mediaType string) error {
	return reason.Newf(reason.UnsupportedContentType, "", "the response is %q, a binary type Gatehouse does not convert to text; download it with the terminal and inspect it locally", mediaType)
}

// textKind maps a textual media type to a Kind, or "" for anything else.
func textKind(mt string) string {
	switch mt {
	case "text/html", "application/xhtml+xml":
		return KindHTML
	case "text/markdown", "text/x-markdown":
		return KindMarkdown
	case "application/json", "text/json", "application/ld+json":
		return KindJSON
	}
	if strings.HasSuffix(mt, "+json") {
		return KindJSON
	}
	if isTextual(mt) {
		return KindText
	}
	return ""
}

// isTextual reports whether mt is a type whose body is text: text/*, XML,
// JSON, JavaScript, YAML and friends.
func isTextual(mt string) bool {
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "+json") {
		return true
	}
	switch mt {
	case "application/xhtml+xml", "application/xml", "application/json", "application/ld+json",
		"application/javascript", "application/ecmascript", "application/x-javascript",
		"application/yaml", "application/x-yaml", "application/toml", "application/x-sh",
		"application/sql", "application/graphql", "application/x-www-form-urlencoded":
		return true
	}
	return false
}

// isGenericBinary reports whether mt says nothing about the format, so the
// body must be sniffed.
func isGenericBinary(mt string) bool {
	switch mt {
	case "application/octet-stream", "application/unknown", "unknown/unknown", "binary/octet-stream", "application/binary", "application/x-unknown-content-type":
		return true
	}
	return false
}

// markdownTitle returns the text of the first level-1 ATX heading ("# x")
// outside fenced code, or "".
func markdownTitle(md string) string {
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		if strings.HasPrefix(t, "# ") {
			return trimClosingHashes(strings.TrimSpace(t[2:]))
		}
	}
	return ""
}

// trimClosingHashes removes an ATX closing sequence: a run of '#' at the end
// that is preceded by a space (so "C#" stays "C#").
func trimClosingHashes(h string) string {
	t := strings.TrimRight(h, "#")
	if t == "" {
		return ""
	}
	if t != h && strings.HasSuffix(t, " ") {
		return strings.TrimSpace(t)
	}
	return h
}
