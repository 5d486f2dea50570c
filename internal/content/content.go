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
//   - XML (text/xml, application/xml, any +xml type, or an undeclared body
//     that is XML) is told apart by its root element: an RSS, RDF or Atom
//     feed becomes a markdown list of its items (content/feed), <svg> is
//     refused as an image, <html> (XHTML) takes the HTML path, anything
//     else is shown as written in a fenced ```xml block;
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
	"net/http"
	"net/url"
	"strings"

	"encoding/xml"
	"github.com/gatehouse-dev/gatehouse/internal/content/charset"
	"github.com/gatehouse-dev/gatehouse/internal/content/feed"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Kinds of Document, as reported in Document.Kind.
const (
	KindHTML     = "html"
	KindText     = "text"
	KindMarkdown = "markdown"
	KindJSON     = "json"
	KindPDF      = "pdf"
	// KindFeed is an RSS 2.0, RSS 1.0 (RDF) or Atom feed shown as a
	// list of its items (see Convert).
	KindFeed = "feed"
	// KindXML is other XML, shown as written in a fenced ```xml block.
	KindXML = "xml"
)

// Document is the converted page.
type Document struct {
	// Title is the page title, trimmed: main-content extractor metadata,
	// then <title>, then the first <h1> (HTML); the first level-1 ATX heading
	// (markdown); the document information /Title (PDF); the channel or
	// feed title (feed). It may be "".
	Title string
	// Markdown is the main content as markdown. For text/plain, markdown and
	// JSON it is the decoded text itself; for PDF, the plain text; for a
	// feed, the list of its items; for other XML, the decoded text in a
	// fenced ```xml block.
	Markdown string
	// Charset is the WHATWG name of the encoding used to decode the body
	// ("utf-8", "gbk", "utf-16le", "windows-1252", …); "" for binary formats
	// such as PDF.
	Charset string
	// Kind is one of KindHTML, KindText, KindMarkdown, KindJSON, KindPDF,
	// KindFeed, KindXML.
	Kind string
	// Facts are the page's metadata, links and shell signals (HTML; the
	// page count for PDF), see meta.go.
	Facts
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
// XML bodies are decoded with the encoding of their XML declaration when
// neither a byte order mark nor the Content-Type names one. A feed
// (application/rss+xml, application/atom+xml, or XML whose root is <rss>,
// <rdf:RDF> or <feed>) gives a KindFeed Document titled with the feed's
// title; Markdown lists the first 100 items in order, each as
// "## [title](link)", a line with its date (as written) and authors, and
// its summary or description converted from HTML (no main-content
// extraction), links absolute against base and xml:base; a note gives the
// total when there are more. Malformed feeds are read leniently (stray '<',
// bare '&', unclosed or mismatched tags, illegal characters, a cut-off
// end); one whose structure cannot be read at all gives its text content.
//
// Errors are *reason.Error values:
//   - reason.BinaryPayload: the body starts with a known binary magic number
//     (SQLite, ZIP, gzip, bzip2, xz, 7-Zip, ELF, Mach-O, PNG, JPEG, GIF, TIFF,
//     FLAC, Ogg; spec §A10.2) although the declared type is text or missing,
//     or the decoded text is more than 10 % NUL or other control bytes
//     (WHATWG MIME Sniffing "binary data bytes"), or the body's bytes as
//     received more than 3 % (random or compressed bytes, which decoding
//     would turn into mojibake; UTF-16 and UTF-32 excepted; payload.go);
//   - reason.UnsupportedContentType: a binary type Gatehouse does not convert
//     (image/*, audio/*, video/*, font/*, archives, application/octet-stream
//     that sniffs binary, …), and SVG images (image/svg+xml, or XML whose
//     root is <svg>): the message suggests a vision tool for images;
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
	mediaType := charset.MediaType(contentType)
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
	xmlFamily := kind == KindXML
	if kind == KindXML || mediaType == "" || isGenericBinary(mediaType) {
		// XML, or an undeclared body: the root element decides.
		root := charset.XMLRoot(body)
		switch r := strings.ToLower(root.Local); {
		case r == "svg":
			return Document{}, imageRefusal("an SVG image")
		case r == "html":
			if kind == KindXML {
				kind = KindHTML // XHTML
			}
		case feed.FormatOf(root, mediaType) != feed.FormatNone:
			text, cs, err := charset.DecodeXML(body, contentType)
			if err != nil {
				return Document{}, err
			}
			doc, ok, err := convertFeed(text, cs, base, feed.FormatOf(root, mediaType), root)
			if ok {
				return doc, err
			}
			// Not a feed after all (RDF data): shown as XML.
			kind, xmlFamily = KindXML, true
		case r == "":
			if kind == KindXML {
				kind, xmlFamily = KindText, false // declared XML that is not XML
			}
		}
	}
	var text, cs string
	if xmlFamily {
		text, cs, err = charset.DecodeXML(body, contentType)
	} else {
		text, cs, err = charset.DecodeBody(body, contentType, kind == KindHTML)
	}
	if err != nil {
		return Document{}, err
	}
	if err := binaryText(text, mediaType); err != nil {
		return Document{}, err
	}
	if err := binaryBody(body, mediaType, cs); err != nil {
		return Document{}, err // bytes no text encoding produces (payload.go)
	}
	switch kind {
	case KindHTML:
		doc, err = HTMLToMarkdown(text, base)
		doc.Charset = cs
		return doc, err
	case KindMarkdown:
		// Comments and hidden HTML go, as from HTML pages (mdhtml.go).
		text = markdown.SanitizeHTML(text)
		doc = Document{Title: markdownTitle(text), Markdown: text, Kind: KindMarkdown, Charset: cs}
	case KindXML:
		if strings.TrimSpace(text) == "" {
			return Document{}, reason.New(reason.EmptyContent, "", "the response body has no text; nothing to extract")
		}
		doc = Document{Markdown: fencedXML(text), Kind: KindXML, Charset: cs}
	default:
		doc = Document{Markdown: text, Kind: kind, Charset: cs}
	}
	if strings.TrimSpace(doc.Markdown) == "" {
		return Document{}, reason.New(reason.EmptyContent, "", "the response body has no text; nothing to extract")
	}
	return doc, nil
}

// convertFeed reads an RSS, RDF or Atom feed (feed.Convert) as a Document of
// KindFeed in charset cs; ok is false when the body is no feed after all.
func convertFeed(text, cs string, base *url.URL, format feed.Format, root xml.Name) (doc Document, ok bool, err error) {
	title, md, ok, err := feed.Convert(text, base, format, root)
	if !ok || err != nil {
		return Document{}, ok, err
	}
	return Document{Title: title, Markdown: md, Kind: KindFeed, Charset: cs}, true, nil
}

// classify picks the Kind for a body and its declared media type, or refuses
// it. Rules, in order: a PDF signature wins; a binary magic number is refused
// (BinaryPayload when declared as text or undeclared, UnsupportedContentType
// when declared as a binary type such as application/octet-stream); an SVG
// type is refused as an image; a known textual type gives its kind (every
// XML type KindXML, which convert refines by the root element); an
// undeclared or generic binary type is sniffed (WHATWG MIME Sniffing) and
// refused unless it sniffs as text.
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
	if mediaType == "image/svg+xml" || mediaType == "image/svg" {
		return "", imageRefusal("an SVG image (" + quoteType(mediaType) + ")")
	}
	if k := textKind(mediaType); k != "" {
		return k, nil
	}
	if mediaType == "" || isGenericBinary(mediaType) {
		sniffed := charset.MediaType(http.DetectContentType(body))
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
	if strings.HasPrefix(mediaType, "image/") {
		return imageRefusal("an image (" + quoteType(mediaType) + ")")
	}
	return reason.Newf(reason.UnsupportedContentType, "", "the response is %s, a binary type Gatehouse does not convert to text; download it with the terminal and inspect it locally", quoteType(mediaType))
}

// quoteType returns a media type for a message: as it is when it has the
// shape of one (RFC 9110 tokens around a "/", at most 100 chars), else
// "an unparseable media type". The header is the server's words, and a
// message is Gatehouse's text outside any content boundary, so free text
// from it is never quoted (issue 16 item 4).
func quoteType(mt string) string {
	if HeaderToken(mt, true) {
		return mt
	}
	return "an unparseable media type"
}

// HeaderToken reports whether s is an HTTP token (RFC 9110 §5.6.2 tchar)
// of 1 to 100 chars, or with slash two tokens around one "/" (a media
// type): a header value a message may quote without quoting a server's
// free text.
func HeaderToken(s string, slash bool) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		case c == '/' && slash && i > 0 && i < len(s)-1:
			slashes++
		default:
			return false
		}
	}
	return slashes == 0 && !slash || slashes == 1
}

// imageRefusal refuses an image; what names it ("an SVG image
// (image/svg+xml)").
func imageRefusal(what string) error {
	return reason.Newf(reason.UnsupportedContentType, "", "the response is %s, which Gatehouse does not convert to text; look at it with a vision tool (for example browser_navigate to the URL, then browser_vision), or download it with the terminal and inspect it locally", what)
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
	case "text/xml", "application/xml", "text/xml-external-parsed-entity", "application/xml-external-parsed-entity", "application/xml-dtd":
		return KindXML
	}
	if strings.HasSuffix(mt, "+json") {
		return KindJSON
	}
	if strings.HasSuffix(mt, "+xml") {
		return KindXML
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

// fencedXML shows XML text as a fenced ```xml block; the fence is longer
// than any run of backticks in the text.
func fencedXML(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "xml\n" + strings.TrimRight(text, "\r\n") + "\n" + fence + "\n"
}
