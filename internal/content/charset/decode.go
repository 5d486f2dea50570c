package charset

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/gogs/chardet"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// Limits of the decoding heuristics.
const (
	// prescanBytes is how much of the body the <meta> prescan reads (HTML
	// Standard §13.2.3.2 "prescan a byte stream": 1024 bytes).
	prescanBytes = 1024
	// sniffBytes is how much of the body the statistical sniffer reads.
	sniffBytes = 64 << 10
	// minSniffConfidence is the chardet confidence (0–100) below which its
	// guess is ignored and windows-1252 is used: on short Latin text it
	// confuses the ISO-8859 family (20 for a French sentence read as
	// ISO-8859-2, against 72 when it is sure).
	minSniffConfidence = 50
	// maxReplacementRatio is the share of U+FFFD runes above which a
	// declared charset is judged wrong and the sniffed one is tried.
	maxReplacementRatio = 0.01
)

// Decode turns body into UTF-8 text, choosing the encoding in the WHATWG
// order (HTML Standard §13.2.3 "determining the character encoding"):
//
//  1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE), which is removed;
//  2. the charset parameter of contentType (the raw Content-Type header);
//  3. for HTML, XML or an undeclared type, a <meta charset> or
//     <meta http-equiv="Content-Type" content="…; charset=…"> in the first
//     1024 bytes (UTF-16 there means UTF-8, x-user-defined means
//     windows-1252, as the standard says);
//  4. sniffing: valid UTF-8 is UTF-8; otherwise a statistical detector
//     (github.com/gogs/chardet, ICU's algorithm) names a WHATWG encoding
//     (a Cyrillic, Greek, Arabic or Hebrew single-byte one also with low
//     confidence when the bytes >= 0x80 form whole words);
//     otherwise windows-1252.
//
// One deviation from the standard: when the declared charset (2 or 3) is
// a single-byte legacy one (latin1, windows-125x, iso-8859-x, koi8-…) and
// the body is valid UTF-8 with multi-byte sequences, the body is decoded
// as UTF-8 and charset is "utf-8". Browsers obey the label and show
// "CafÃ©"; a legacy text that validates as UTF-8 is vanishingly rare.
//
// Labels are resolved with the WHATWG Encoding Standard table
// (golang.org/x/net/html/charset.Lookup), so "latin1" is windows-1252 and
// "gb2312" is gbk. Invalid bytes never silently become a page of U+FFFD: if
// more than 1% of the runes decoded with a declared (header or meta) charset
// are U+FFFD, the sniffed encoding is tried and the result with fewer U+FFFD
// wins. charset is the WHATWG name of the encoding used ("utf-8", "gbk",
// "utf-16le", …). err is non-nil only if a decoder fails outright.
func Decode(body []byte, contentType string) (text string, charset string, err error) {
	mt := MediaType(contentType)
	prescan := mt == "" || mt == "text/html" || mt == "application/xhtml+xml" || mt == "text/xml" ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml")
	return DecodeBody(body, contentType, prescan)
}

// DecodeBody is Decode with the <meta> prescan switched on or off by the
// caller (on for HTML, off for text and feeds whose kind is already known).
func DecodeBody(body []byte, contentType string, prescan bool) (string, string, error) {
	if enc, name, n := bomEncoding(body); enc != nil {
		text, err := decodeWith(enc, body[n:])
		return text, name, err
	}
	var declared encoding.Encoding
	var declaredName string
	if label := headerCharset(contentType); label != "" {
		declared, declaredName = charset.Lookup(label)
	}
	if declared == nil && prescan {
		declared, declaredName = prescanMeta(body)
	}
	if declared != nil && singleByteLegacy[declaredName] && hasMultiByteUTF8(body) && validUTF8Prefix(body) {
		// A deliberate deviation from the HTML Standard (browsers obey the
		// label): a body that is valid UTF-8 and has multi-byte sequences
		// is UTF-8 labelled wrongly (a server default of ISO-8859-1), not
		// legacy text that happens to validate.
		text, err := decodeWith(unicode.UTF8, body)
		return text, "utf-8", err
	}
	if declared != nil {
		text, err := decodeWith(declared, body)
		if err == nil && replacementRatio(text) <= maxReplacementRatio {
			return text, declaredName, nil
		}
		enc, name := sniff(body)
		if name != declaredName {
			if alt, altErr := decodeWith(enc, body); altErr == nil && (err != nil || countReplacement(alt) < countReplacement(text)) {
				return alt, name, nil
			}
		}
		return text, declaredName, err
	}
	enc, name := sniff(body)
	text, err := decodeWith(enc, body)
	return text, name, err
}

// bomEncoding recognises a byte order mark and returns the encoding, its
// WHATWG name and the BOM length.
func bomEncoding(b []byte) (encoding.Encoding, string, int) {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return unicode.UTF8, "utf-8", 3
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), "utf-16le", 2
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), "utf-16be", 2
	}
	return nil, "", 0
}

// headerCharset returns the charset parameter of a Content-Type value, or
// "". A value mime cannot parse (duplicate parameters, stray bytes) is
// searched loosely, like the WHATWG "extract a MIME type" algorithm does.
func headerCharset(contentType string) string {
	if contentType == "" {
		return ""
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		return strings.TrimSpace(params["charset"])
	}
	return charsetFromContent(contentType)
}

// charsetFromContent implements the HTML Standard's "algorithm for
// extracting a character encoding from a meta element" (§2.5.x): find
// "charset", skip white space, require '=', then read a quoted or unquoted
// value. It returns "" when there is none.
func charsetFromContent(s string) string {
	lower := strings.ToLower(s)
	pos := 0
	for {
		i := strings.Index(lower[pos:], "charset")
		if i < 0 {
			return ""
		}
		j := pos + i + len("charset")
		for j < len(s) && isHTMLSpace(s[j]) {
			j++
		}
		if j >= len(s) || s[j] != '=' {
			pos = j
			continue
		}
		j++
		for j < len(s) && isHTMLSpace(s[j]) {
			j++
		}
		if j >= len(s) {
			return ""
		}
		if q := s[j]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[j+1:], q)
			if end < 0 {
				return ""
			}
			return s[j+1 : j+1+end]
		}
		end := j
		for end < len(s) && !isHTMLSpace(s[end]) && s[end] != ';' {
			end++
		}
		return s[j:end]
	}
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// prescanMeta looks for a <meta> encoding declaration in the first 1024
// bytes, following the rules of the HTML Standard's prescan (charset
// attribute, or http-equiv="content-type" with a content charset; first
// declaration that names a known encoding wins). Tokenising uses
// golang.org/x/net/html.
func prescanMeta(body []byte) (encoding.Encoding, string) {
	head := body
	if len(head) > prescanBytes {
		head = head[:prescanBytes]
	}
	z := html.NewTokenizer(bytes.NewReader(head))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return nil, ""
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if string(name) != "meta" || !hasAttr {
			continue
		}
		var gotPragma, needPragma, charsetSet bool
		label := ""
		seen := map[string]bool{}
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
			key := string(k)
			if seen[key] {
				continue
			}
			seen[key] = true
			switch key {
			case "http-equiv":
				if strings.EqualFold(strings.TrimSpace(string(v)), "content-type") {
					gotPragma = true
				}
			case "content":
				if !charsetSet {
					if cs := charsetFromContent(string(v)); cs != "" {
						label, charsetSet, needPragma = cs, true, true
					}
				}
			case "charset":
				if !charsetSet {
					label, charsetSet, needPragma = string(v), true, false
				}
			}
		}
		if !charsetSet || (needPragma && !gotPragma) {
			continue
		}
		enc, encName := charset.Lookup(strings.TrimSpace(label))
		if enc == nil {
			continue
		}
		switch encName {
		case "utf-16be", "utf-16le":
			return unicode.UTF8, "utf-8"
		case "x-user-defined":
			return charmap.Windows1252, "windows-1252"
		}
		return enc, encName
	}
}

// sniff guesses the encoding of an undeclared body: valid UTF-8 (a rune cut
// at the very end is tolerated) is UTF-8; otherwise chardet's best guess if
// it is confident and names a WHATWG encoding other than UTF-16/32;
// otherwise windows-1252 (the WHATWG default for most locales), which
// decodes every byte.
func sniff(body []byte) (encoding.Encoding, string) {
	if validUTF8Prefix(body) {
		return unicode.UTF8, "utf-8"
	}
	sample := body
	if len(sample) > sniffBytes {
		sample = sample[:sniffBytes]
	}
	if r, err := chardet.NewHtmlDetector().DetectBest(sample); err == nil && r != nil {
		label := strings.ToLower(r.Charset)
		enc, name := charset.Lookup(label)
		if enc == nil {
			enc, name = charset.Lookup(strings.ReplaceAll(label, "-", ""))
		}
		// A non-Latin single-byte guess is taken with less confidence
		// when the high bytes form whole words: chardet scores a short
		// Russian windows-1251 page under 50, but Latin text with a few
		// accented letters never has runs of them.
		confident := r.Confidence >= minSniffConfidence ||
			nonLatinSingleByte[name] && r.Confidence >= minNonLatinConfidence && highByteRunShare(sample) >= minHighByteRunShare
		if confident && enc != nil && !strings.HasPrefix(name, "utf-16") && name != "utf-8" && name != "replacement" {
			return enc, name
		}
	}
	return charmap.Windows1252, "windows-1252"
}

// singleByteLegacy holds the WHATWG names of the single-byte legacy
// encodings (Encoding Standard §9): a body labelled with one of them that
// is valid UTF-8 with multi-byte sequences is read as UTF-8 (see Decode).
var singleByteLegacy = map[string]bool{
	"ibm866": true, "iso-8859-2": true, "iso-8859-3": true, "iso-8859-4": true, "iso-8859-5": true,
	"iso-8859-6": true, "iso-8859-7": true, "iso-8859-8": true, "iso-8859-8-i": true, "iso-8859-10": true,
	"iso-8859-13": true, "iso-8859-14": true, "iso-8859-15": true, "iso-8859-16": true, "koi8-r": true,
	"koi8-u": true, "macintosh": true, "windows-874": true, "windows-1250": true, "windows-1251": true,
	"windows-1252": true, "windows-1253": true, "windows-1254": true, "windows-1255": true,
	"windows-1256": true, "windows-1257": true, "windows-1258": true, "x-mac-cyrillic": true,
}

// nonLatinSingleByte holds the single-byte encodings of non-Latin scripts
// (Cyrillic, Greek, Arabic, Hebrew), where text is mostly bytes >= 0x80.
var nonLatinSingleByte = map[string]bool{
	"windows-1251": true, "koi8-r": true, "koi8-u": true, "iso-8859-5": true, "ibm866": true,
	"windows-1253": true, "iso-8859-7": true, "windows-1256": true, "iso-8859-6": true,
	"windows-1255": true, "iso-8859-8": true,
}

const (
	// minNonLatinConfidence is the chardet confidence (0–100) enough for
	// a nonLatinSingleByte guess when highByteRunShare agrees (48 for a
	// one-sentence Russian page).
	minNonLatinConfidence = 20
	// minHighByteRunShare is the share of bytes >= 0x80 that must stand
	// in runs of three or more for a non-Latin guess.
	minHighByteRunShare = 0.6
)

// highByteRunShare is the share of the bytes >= 0x80 in b that stand in
// runs of at least three such bytes: near 1 for Cyrillic or Greek words in
// a single-byte encoding, near 0 for Latin text with accents ("café").
func highByteRunShare(b []byte) float64 {
	total, inRuns, run := 0, 0, 0
	flush := func() {
		if run >= 3 {
			inRuns += run
		}
		run = 0
	}
	for _, c := range b {
		if c >= 0x80 {
			total++
			run++
			continue
		}
		flush()
	}
	flush()
	if total == 0 {
		return 0
	}
	return float64(inRuns) / float64(total)
}

// hasMultiByteUTF8 reports whether b holds a byte >= 0x80 (for valid UTF-8:
// a multi-byte sequence).
func hasMultiByteUTF8(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// validUTF8Prefix reports whether b is valid UTF-8, ignoring an incomplete
// rune in its last three bytes (a body cut at a size limit).
func validUTF8Prefix(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	for cut := 1; cut <= 3 && cut < len(b); cut++ {
		if utf8.RuneStart(b[len(b)-cut]) {
			return utf8.Valid(b[:len(b)-cut]) && !utf8.FullRune(b[len(b)-cut:])
		}
	}
	return false
}

// decodeWith decodes b with enc. UTF-8 input goes through the UTF-8
// decoder so that invalid bytes become U+FFFD (and are counted).
func decodeWith(enc encoding.Encoding, b []byte) (string, error) {
	if enc == encoding.Nop {
		enc = unicode.UTF8
	}
	if enc == unicode.UTF8 && utf8.Valid(b) {
		return string(b), nil
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

func countReplacement(s string) int {
	return strings.Count(s, "\uFFFD")
}

// replacementRatio is the share of runes in s that are U+FFFD.
func replacementRatio(s string) float64 {
	n := countReplacement(s)
	if n == 0 {
		return 0
	}
	return float64(n) / float64(utf8.RuneCountInString(s))
}
