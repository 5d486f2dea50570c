package content

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"

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

// More than 512 nested elements: the text is kept (the nesting is cut at
// keptDepth, flattenDeep) instead of the page being refused as
// empty_content; a page with no text above the cut is refused as
// html_too_deep, whose message names the parser's nesting limit and the
// tools that can still read the page.
func TestDeepNestingNamed(t *testing.T) {
	words := strings.Repeat("Deep words of a page that nests far too deep. ", 10)
	deep := "<html><body><p>Top words.</p>" + strings.Repeat("<div>", 600) + "<p>" + words + "</p><script>var s = '<div><div>';</script>" + strings.Repeat("</div>", 600) + "<p>After the nest.</p></body></html>"
	d, err := Convert([]byte(deep), "text/html", nil)
	if err != nil || !strings.Contains(d.Markdown, "Deep words of a page") || strings.Contains(d.Markdown, "var s") {
		t.Fatalf("600 levels: %v %q", err, d.Markdown)
	}
	empty := "<html><body>" + strings.Repeat("<div>", 600) + strings.Repeat("</div>", 600) + "</body></html>"
	_, err = Convert([]byte(empty), "text/html", nil)
	if reason.Of(err) != reason.HTMLTooDeep {
		t.Fatalf("600 empty levels: got %v, want html_too_deep", err)
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

// TestRandomBytesRefusedWhateverTheHeader: random bytes (a compressed or
// encrypted file, an image without a known magic number) served as text are
// refused as binary_payload, judged on the bytes as received; decoding them
// first used to turn them into mojibake that passed as text (newcomer
// review W3). Pages in legacy multi-byte and single-byte charsets, and a
// page with a few stray control bytes, still convert.
func TestRandomBytesRefusedWhateverTheHeader(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 3))
	for _, size := range []int{2 << 10, 64 << 10, 3 << 20} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		for _, ct := range []string{"text/html", "text/html; charset=utf-8", "text/plain", "text/html; charset=windows-1251", "application/json"} {
			d, err := Convert(body, ct, nil)
			if reason.Of(err) != reason.BinaryPayload {
				t.Errorf("%d random bytes as %q: got %v (%d chars of markdown), want binary_payload", size, ct, err, len(d.Markdown))
			}
		}
	}
	para := func(s string) string { return strings.Repeat("<p>"+s+"</p>", 30) }
	legacy := []struct {
		name, text, label string
		enc               encoding.Encoding
	}{
		{"windows-1251", "Маяк на северном мысу светил кораблям двести лет, и смотритель записывал каждое судно.", "windows-1251", charmap.Windows1251},
		{"Shift_JIS", "灯台守は二百年のあいだ北の岬で灯をともし、夜ごと通る船をすべて日誌に記した。", "shift_jis", japanese.ShiftJIS},
		{"EUC-JP", "灯台守は二百年のあいだ北の岬で灯をともし、夜ごと通る船をすべて日誌に記した。", "euc-jp", japanese.EUCJP},
		{"GB18030", "灯塔看守人在北方海角守了两百年的灯，记录每一艘夜里经过的船。𠀀", "gb18030", simplifiedchinese.GB18030},
		{"Big5", "燈塔看守人在北方海角守了兩百年的燈，記錄每一艘夜裡經過的船。", "big5", traditionalchinese.Big5},
		{"EUC-KR", "등대지기는 북쪽 곶에서 이백 년 동안 불을 밝히고 밤마다 지나가는 배를 기록했다.", "euc-kr", korean.EUCKR},
		{"ISO-2022-JP", "灯台守は二百年のあいだ北の岬で灯をともし、夜ごと通る船をすべて日誌に記した。", "iso-2022-jp", japanese.ISO2022JP},
	}
	for _, l := range legacy {
		page := "<html><head><title>Lighthouse</title></head><body><article><h1>Lighthouse</h1>" + para(l.text) + "</article></body></html>"
		body, err := l.enc.NewEncoder().Bytes([]byte(page))
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		for _, ct := range []string{"text/html; charset=" + l.label, "text/html"} {
			b := body
			if ct == "text/html" { // the label only in the page: <meta charset>
				b = append([]byte(`<meta charset="`+l.label+`">`), body...)
			}
			d, err := Convert(b, ct, nil)
			first := []rune(l.text)[:4]
			if err != nil || !strings.Contains(d.Markdown, string(first)) {
				t.Errorf("%s as %q: err %v, markdown %.200q", l.name, ct, err, d.Markdown)
			}
		}
	}
	// A real page with a few odd bytes (stray control characters pasted
	// into the text) is text.
	var b strings.Builder
	b.WriteString("<html><body><article><h1>Notes</h1>")
	for i := 0; i < 200; i++ {
		b.WriteString("<p>A paragraph of notes copied from an old terminal session")
		if i%10 == 0 {
			b.WriteString("\x01\x08\x00\x1f")
		}
		b.WriteString(", with words enough to read as prose.</p>")
	}
	b.WriteString("</article></body></html>")
	if d, err := Convert([]byte(b.String()), "text/html", nil); err != nil || !strings.Contains(d.Markdown, "old terminal session") {
		t.Errorf("page with a few odd bytes: %v", err)
	}
}
