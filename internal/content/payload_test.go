package content

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// A body of NULs (or mostly control bytes) declared as text is refused as
// binary with a message that says so, whatever the declared text type; it
// never reaches the HTML path's "try the browser tools" (issue 6 item 14).
func TestNULPayloadNamed(t *testing.T) {
	nul := bytes.Repeat([]byte{0}, 10<<20)
	for _, ct := range []string{"text/html", "text/html; charset=utf-8", "text/plain", "application/json", "text/markdown", "text/html; charset=utf-16le", "application/xhtml+xml"} {
		d, err := Convert(nul, ct, nil)
		if reason.Of(err) != reason.BinaryPayload {
			t.Errorf("%q: got %v (kind %q, %d chars), want binary_payload", ct, err, d.Kind, len(d.Markdown))
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "NUL") || strings.Contains(msg, "browser") {
			t.Errorf("%q: message should name the NUL payload: %q", ct, msg)
		}
	}
	// Big bodies are sampled: text followed by as many NULs is still caught,
	// and a big text is still text.
	text := []byte(strings.Repeat("Words of a long plain text document.\n", 2<<20/37))
	if _, err := Convert(append(append([]byte{}, text...), bytes.Repeat([]byte{0}, len(text))...), "text/plain", nil); reason.Of(err) != reason.BinaryPayload {
		t.Errorf("text + NULs: %v", err)
	}
	if d, err := Convert(text, "text/plain", nil); err != nil || len(d.Markdown) != len(text) {
		t.Errorf("2 MB text: %v", err)
	}
	// Mostly control bytes with a little markup: binary data too.
	junk := append([]byte("<html><body><p>hi</p>"), bytes.Repeat([]byte{1, 2, 3, 0, 0x1f}, 4000)...)
	if _, err := Convert(junk, "text/html", nil); reason.Of(err) != reason.BinaryPayload || !strings.Contains(err.Error(), "control bytes") {
		t.Errorf("control-byte junk: %v", err)
	}
}

// Text is not mistaken for binary: a stray NUL, tabs and ANSI colours, and
// UTF-16 (with a BOM or a declared charset), whose zero bytes vanish in decoding.
func TestTextWithFewControlBytesKept(t *testing.T) {
	cases := map[string][]byte{
		"text/plain": []byte("line one\tcol\nline two \x1b[31mred\x1b[0m\x00 end of the log line with words\n"),
	}
	u := utf16.Encode([]rune("<html><body><article><p>" + strings.Repeat("Plain words of an article written in UTF-16. ", 20) + "</p></article></body></html>"))
	le := []byte{0xff, 0xfe}
	for _, r := range u {
		le = append(le, byte(r), byte(r>>8))
	}
	cases["text/html"] = le
	cases["text/html; charset=utf-16le"] = le[2:]
	for ct, body := range cases {
		d, err := Convert(body, ct, nil)
		if err != nil || !strings.Contains(d.Markdown, "words") {
			t.Errorf("%q: err %v, markdown %q", ct, err, d.Markdown)
		}
	}
}

// More than 512 nested elements: the message names the parser's nesting
// limit and the tools that can still read the page.
func TestDeepNestingNamed(t *testing.T) {
	deep := "<html><body>" + strings.Repeat("<div>", 600) + "<p>Deep words.</p>" + strings.Repeat("</div>", 600) + "</body></html>"
	_, err := Convert([]byte(deep), "text/html", nil)
	if reason.Of(err) != reason.EmptyContent {
		t.Fatalf("got %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "512") || !strings.Contains(msg, "nest") || strings.Contains(msg, "could not be parsed as HTML") {
		t.Errorf("message should name the nesting limit: %q", msg)
	}
	// 400 levels are fine.
	ok := "<html><body>" + strings.Repeat("<div>", 400) + "<p>" + strings.Repeat("Deep words of a page. ", 20) + "</p>" + strings.Repeat("</div>", 400) + "</body></html>"
	if d, err := Convert([]byte(ok), "text/html", nil); err != nil || !strings.Contains(d.Markdown, "Deep words") {
		t.Errorf("400 levels: %v %q", err, d.Markdown)
	}
}
