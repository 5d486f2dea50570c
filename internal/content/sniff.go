package content

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"

	"golang.org/x/net/html/charset"
)

// magicSignatures lists the binary kinds refused as BinaryPayload (spec
// §A10.2: "SQLite, ZIP, gzip, bzip2, xz, 7-Zip, ELF, Mach-O, PNG, JPEG, GIF,
// TIFF, FLAC, Ogg"). The signatures are the published magic numbers of each
// format; they are compared after NUL bytes are removed, as the spec does,
// so the table holds them NUL-free.
var magicSignatures = []struct {
	kind string
	sig  string // NUL bytes removed
}{
	{"SQLite database", "SQLite format 3"},
	{"ZIP archive", "PK\x03\x04"},
	{"ZIP archive", "PK\x05\x06"},
	{"ZIP archive", "PK\x07\x08"},
	{"gzip archive", "\x1f\x8b\x08"},
	{"xz archive", "\xfd7zXZ"},
	{"7-Zip archive", "7z\xbc\xaf\x27\x1c"},
	{"ELF executable", "\x7fELF"},
	{"Mach-O executable", "\xfe\xed\xfa\xce"},
	{"Mach-O executable", "\xfe\xed\xfa\xcf"},
	{"Mach-O executable", "\xce\xfa\xed\xfe"},
	{"Mach-O executable", "\xcf\xfa\xed\xfe"},
	{"PNG image", "\x89PNG\r\n\x1a\n"},
	{"JPEG image", "\xff\xd8\xff"},
	{"GIF image", "GIF87a"},
	{"GIF image", "GIF89a"},
	{"TIFF image", "II*"}, // "II*\x00"
	{"TIFF image", "MM*"}, // "MM\x00*"
	{"FLAC audio", "fLaC"},
	{"Ogg media", "OggS"},
}

// binaryMagic reports whether body starts with a known binary signature and
// names the kind. Like spec §A10.2 it looks at the first 32 bytes with NUL
// bytes removed. bzip2 needs a closer look ("BZh" is also ordinary text): the
// block size digit and the block or end-of-stream magic must follow.
func binaryMagic(body []byte) (string, bool) {
	head := body
	if len(head) > 32 {
		head = head[:32]
	}
	head = bytes.ReplaceAll(head, []byte{0}, nil)
	for _, m := range magicSignatures {
		if bytes.HasPrefix(head, []byte(m.sig)) {
			return m.kind, true
		}
	}
	if len(head) >= 5 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9' &&
		(bytes.HasPrefix(head[4:], []byte("1AY&SY")) || bytes.HasPrefix(head[4:], []byte("\x17rE8P"))) {
		return "bzip2 archive", true
	}
	return "", false
}

// isPDF reports whether body is a PDF file: it starts with "%PDF-" (ISO
// 32000-1 §7.5.2), leading white space allowed.
func isPDF(body []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n\f"), []byte("%PDF-"))
}

// rootSniffBytes is how much of the body xmlRoot reads to find the root
// element: the XML declaration, comments and a DOCTYPE come before it.
const rootSniffBytes = 64 << 10

// xmlRoot returns the name of the root element of an XML (or XHTML) body:
// the first start tag, after an optional byte order mark, XML declaration,
// comments, processing instructions, a DOCTYPE and white space. Name.Space
// is the tag's prefix as written ("rdf" for <rdf:RDF>), not a namespace
// URL. It returns the zero Name when text comes first or no tag starts in
// the first rootSniffBytes bytes. A declaration naming a non-UTF-8
// encoding is honoured (golang.org/x/net/html/charset); syntax errors are
// skipped as in scanXML.
func xmlRoot(body []byte) xml.Name {
	head := body
	if len(head) > rootSniffBytes {
		head = head[:rootSniffBytes]
	}
	var text string
	readerFor := charsetReader
	if enc, _, n := bomEncoding(head); enc != nil {
		s, err := decodeWith(enc, head[n:])
		if err != nil {
			return xml.Name{}
		}
		// Already UTF-8: a declaration must not re-decode it.
		text, readerFor = s, identityCharsetReader
	} else {
		text = string(head)
	}
	var root xml.Name
	scanXML(text, readerFor, 16, func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			root = t.Name
			return false
		case xml.CharData:
			return len(bytes.TrimSpace(t)) == 0
		}
		return true
	})
	return root
}

// charsetReader is the xml.Decoder CharsetReader for raw bytes: it decodes
// the encoding named by an XML declaration with the WHATWG label table
// (golang.org/x/net/html/charset). A UTF-16 label is ignored: a
// declaration that could be read as ASCII is not in UTF-16.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(label)), "utf-16") {
		return r, nil
	}
	return charset.NewReaderLabel(label, r)
}

// identityCharsetReader is the CharsetReader for text already decoded to
// UTF-8: the declaration's encoding has been applied (see decodeXML).
func identityCharsetReader(_ string, r io.Reader) (io.Reader, error) { return r, nil }

// xmlDeclEncoding returns the encoding label of an XML declaration at the
// start of body (`<?xml version="1.0" encoding="ISO-8859-1"?>`, XML 1.0
// §4.3.3), or "". Leading white space is tolerated; only the first 1024
// bytes are read.
func xmlDeclEncoding(body []byte) string {
	head := body
	if len(head) > prescanBytes {
		head = head[:prescanBytes]
	}
	head = bytes.TrimLeft(head, " \t\r\n")
	if !bytes.HasPrefix(head, []byte("<?xml")) {
		return ""
	}
	end := bytes.Index(head, []byte("?>"))
	if end < 0 {
		return ""
	}
	decl := string(head[len("<?xml"):end])
	i := strings.Index(decl, "encoding")
	if i < 0 {
		return ""
	}
	rest := strings.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.TrimLeft(rest[1:], " \t\r\n")
	if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	j := strings.IndexByte(rest[1:], rest[0])
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(rest[1 : 1+j])
}

// decodeXML is decode for XML bodies: the encoding comes from a byte order
// mark, else a Content-Type charset that names a known encoding, else the
// XML declaration (RFC 7303 §3.2 order), else a <meta> prescan and
// sniffing as for HTML. A declared UTF-16 that can be read as ASCII is
// UTF-8. The heuristics of decode (a valid UTF-8 body under a legacy
// label is UTF-8, a wrong label is caught by its U+FFFD count) apply.
func decodeXML(body []byte, contentType string) (string, string, error) {
	if enc, _, _ := bomEncoding(body); enc == nil {
		if enc, _ := charset.Lookup(headerCharset(contentType)); enc == nil {
			if label := xmlDeclEncoding(body); label != "" {
				if enc, name := charset.Lookup(label); enc != nil && name != "replacement" {
					if strings.HasPrefix(name, "utf-16") {
						name = "utf-8"
					}
					return decode(body, "text/xml; charset="+name, false)
				}
			}
		}
	}
	return decode(body, contentType, true)
}

// maxXMLResyncs bounds how often scanXML restarts after a syntax error.
const maxXMLResyncs = 1000

// scanXML calls fn with every raw token of text (encoding/xml RawToken:
// start and end tags are not matched, prefixes not resolved; a CDATA
// section is CharData) until fn returns false or the text ends. The
// decoder is lenient (Strict off, HTML entities known), and after a syntax
// error (a stray '<', an unsupported version, an illegal character) it
// starts again just past the error, at most maxResyncs times, so that a
// malformed feed loses only the broken bytes. Tokens are valid only during
// the call to fn. readerFor is the decoder's CharsetReader.
func scanXML(text string, readerFor func(string, io.Reader) (io.Reader, error), maxResyncs int, fn func(xml.Token) bool) {
	start := 0
	for resyncs := 0; start < len(text) && resyncs <= maxResyncs; resyncs++ {
		d := xml.NewDecoder(strings.NewReader(text[start:]))
		d.Strict = false
		d.Entity = xml.HTMLEntity
		d.CharsetReader = readerFor
		for {
			tok, err := d.RawToken()
			if err != nil {
				if err == io.EOF {
					return
				}
				break
			}
			if !fn(tok) {
				return
			}
		}
		start += max(int(d.InputOffset()), 1)
	}
}
