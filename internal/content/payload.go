package content

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// binaryDataByte marks the bytes the WHATWG MIME Sniffing Standard calls
// "binary data bytes" (§3, Terminology): 0x00–0x08, 0x0B, 0x0E–0x1A and
// 0x1C–0x1F. Text never needs them; tab, LF, FF, CR and ESC (ANSI colours
// in logs) are not among them.
var binaryDataByte = func() (t [256]bool) {
	for b := 0x00; b <= 0x1F; b++ {
		t[b] = true
	}
	for _, b := range []byte{'\t', '\n', '\f', '\r', 0x1B} {
		t[b] = false
	}
	return t
}()

// maxBinaryShare is the share of binary data bytes in the decoded text
// above which a body declared as text is refused as binary. Real text has
// none or a stray few; UTF-16 is decoded before this check, so its zero
// bytes do not count.
const maxBinaryShare = 0.10

// maxRawBinaryShare is the same limit on the body's bytes as received,
// before any charset decoding: random or compressed bytes hold about 10.5 %
// binary data bytes (27 of 256 values), and decoding them as UTF-8 turns
// the invalid sequences into three-byte U+FFFD characters that dilute the
// decoded share below maxBinaryShare, so the decoded text alone cannot tell
// them from text. No text encoding but UTF-16 and UTF-32 (excluded) uses
// those bytes: single-byte legacy charsets (windows-1251, ISO-8859-*) and
// the multi-byte ones (Shift_JIS, EUC-*, GB18030, Big5) code their
// characters with bytes from 0x20 up (ISO-2022 adds ESC, which is not a
// binary data byte), so a page with a few stray control bytes stays far
// below it.
const maxRawBinaryShare = 0.03

// binaryText refuses decoded text that is mostly binary data bytes (a body of
// NULs, a memory dump, a binary file without a known magic number served as
// text/*) with reason.BinaryPayload; it returns nil for anything else.
// declared is the media type from the Content-Type ("" when none).
// Texts over 1 MiB are judged on binarySampleWindows evenly spaced windows
// of binarySampleBytes each (256 KiB), so the check stays O(1) on big pages.
func binaryText(text, declared string) error {
	return binaryCheck(text, declared, maxBinaryShare)
}

// binaryBody is binaryText on the body's bytes as received, with the
// maxRawBinaryShare limit; charset is what the body was decoded as, and a
// UTF-16 or UTF-32 body (whose zero bytes are text) is not judged here.
func binaryBody(body []byte, declared, charset string) error {
	if cs := strings.ToLower(charset); strings.HasPrefix(cs, "utf-16") || strings.HasPrefix(cs, "utf-32") {
		return nil
	}
	return binaryCheck(body, declared, maxRawBinaryShare) // (no string copy of the body)
}

// binaryCheck refuses s when more than limit of its bytes (sampled on big
// inputs, see binaryText) are binary data bytes.
func binaryCheck[T string | []byte](text T, declared string, limit float64) error {
	const binarySampleWindows, binarySampleBytes = 16, 16 << 10
	n, seen := 0, 0
	count := func(s T) {
		for i := 0; i < len(s); i++ {
			if binaryDataByte[s[i]] {
				n++
			}
		}
		seen += len(s)
	}
	if len(text) <= 1<<20 {
		count(text)
	} else {
		step := (len(text) - binarySampleBytes) / (binarySampleWindows - 1)
		for w := 0; w < binarySampleWindows; w++ {
			count(text[w*step : w*step+binarySampleBytes])
		}
	}
	if n == 0 || float64(n) <= limit*float64(seen) {
		return nil
	}
	what := "binary data"
	if n == seen && strings.Count(string(text), "\x00") == len(text) {
		what = "nothing but NUL (zero) bytes"
	}
	as := "declared as " + quoteType(declared)
	if declared == "" {
		as = "with no declared type"
	}
	return reason.Newf(reason.BinaryPayload, "",
		"the response body (%d bytes, %s) is %s, not text: about %d%% of its bytes are NUL or other control bytes; nothing to extract (download it with the terminal and inspect it locally if you need it)",
		len(text), as, what, max(1, n*100/seen))
}

// maxHTMLDepth is golang.org/x/net/html's limit on nested elements: Parse
// rejects a document whose stack of open elements exceeds it.
const maxHTMLDepth = 512

// parseError turns an html.Parse error into a *reason.Error whose message
// says what happened.
func parseError(err error) error {
	if isDepthError(err) {
		return reason.Wrap(reason.HTMLTooDeep, "", fmt.Sprintf(
			"the page nests elements more than %d levels deep, the limit of Gatehouse's HTML parser (golang.org/x/net/html), and no text was left once the nesting was cut there; a browser renders it: use the browser tools (browser_navigate, then browser_snapshot) or download it with the terminal", maxHTMLDepth), err)
	}
	return reason.Wrap(reason.EmptyContent, "", "the page could not be parsed as HTML ("+err.Error()+")", err)
}

// isDepthError reports whether err is html.Parse refusing a page nested
// deeper than maxHTMLDepth.
func isDepthError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "open stack of elements exceeds")
}

// keptDepth is how deep flattenDeep lets elements nest: well under
// maxHTMLDepth, as the parser adds elements of its own (html, body, tbody,
// implied <p>s) to those the page writes.
const keptDepth = maxHTMLDepth / 2

// flattenDeep rewrites an HTML page whose elements nest deeper than the
// parser accepts: start and end tags below keptDepth open elements are
// dropped, their text (and everything else) kept in place, so the page's
// content parses as the text of its deepest kept element rather than not
// at all. Depth is counted from the page's tags (void elements, and end
// tags closing the elements they match); the tags of <script>, <style> and
// the like are kept whatever the depth, as the text inside them is raw.
func flattenDeep(page string) string {
	z := html.NewTokenizer(strings.NewReader(page))
	var b strings.Builder
	b.Grow(len(page))
	type open struct {
		name string
		kept bool
	}
	var stack []open
	keptOpen := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := z.Raw()
		switch tt {
		case html.StartTagToken:
			name, _ := z.TagName()
			n := string(name)
			if dom.VoidElements[n] {
				if keptOpen < keptDepth {
					b.Write(raw)
				}
				continue
			}
			kept := keptOpen < keptDepth || rawTextElements[n]
			if kept {
				keptOpen++
				b.Write(raw)
			}
			stack = append(stack, open{n, kept})
		case html.EndTagToken:
			name, _ := z.TagName()
			n := string(name)
			i := len(stack) - 1
			for i >= 0 && stack[i].name != n {
				i--
			}
			if i < 0 {
				continue // closes nothing open: the parser would ignore it too
			}
			for _, o := range stack[i:] {
				if o.kept {
					keptOpen--
				}
			}
			if stack[i].kept {
				b.Write(raw)
			}
			stack = stack[:i]
		case html.SelfClosingTagToken:
			if keptOpen < keptDepth {
				b.Write(raw)
			}
		default:
			b.Write(raw)
		}
	}
	return b.String()
}

// rawTextElements hold raw text the tokenizer reads up to their end tag.
var rawTextElements = map[string]bool{
	"script": true, "style": true, "textarea": true, "title": true, "xmp": true, "iframe": true,
	"noembed": true, "noframes": true, "plaintext": true, "noscript": true,
}
