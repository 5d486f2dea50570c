package charset

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"

	"golang.org/x/net/html/charset"
)

// rootSniffBytes is how much of the body XMLRoot reads to find the root
// element: the XML declaration, comments and a DOCTYPE come before it.
const rootSniffBytes = 64 << 10

// XMLRoot returns the name of the root element of an XML (or XHTML) body:
// the first start tag, after an optional byte order mark, XML declaration,
// comments, processing instructions, a DOCTYPE and white space. Name.Space
// is the tag's prefix as written ("rdf" for <rdf:RDF>), not a namespace
// URL. It returns the zero Name when text comes first or no tag starts in
// the first rootSniffBytes bytes. A declaration naming a non-UTF-8
// encoding is honoured (golang.org/x/net/html/charset); syntax errors are
// skipped as in scanXML.
func XMLRoot(body []byte) xml.Name {
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
// UTF-8: the declaration's encoding has been applied (see DecodeXML).
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

// DecodeXML is Decode for XML bodies: the encoding comes from a byte order
// mark, else a Content-Type charset that names a known encoding, else the
// XML declaration (RFC 7303 §3.2 order), else a <meta> prescan and
// sniffing as for HTML. A declared UTF-16 that can be read as ASCII is
// UTF-8. The heuristics of decode (a valid UTF-8 body under a legacy
// label is UTF-8, a wrong label is caught by its U+FFFD count) apply.
func DecodeXML(body []byte, contentType string) (string, string, error) {
	if enc, _, _ := bomEncoding(body); enc == nil {
		if enc, _ := charset.Lookup(headerCharset(contentType)); enc == nil {
			if label := xmlDeclEncoding(body); label != "" {
				if enc, name := charset.Lookup(label); enc != nil && name != "replacement" {
					if strings.HasPrefix(name, "utf-16") {
						name = "utf-8"
					}
					return DecodeBody(body, "text/xml; charset="+name, false)
				}
			}
		}
	}
	return DecodeBody(body, contentType, true)
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

// ScanDecodedXML calls fn with every raw token of text, which is already
// decoded to UTF-8 (an encoding named by its XML declaration is not applied
// again), as scanXML does with at most maxXMLResyncs restarts after syntax
// errors. Tokens are valid only during the call to fn.
func ScanDecodedXML(text string, fn func(xml.Token) bool) {
	scanXML(text, identityCharsetReader, maxXMLResyncs, fn)
}
