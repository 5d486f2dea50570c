package content

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
)

// chineseText is a GBK-encodable paragraph long enough for detection.
const chineseText = "中文网页：你好，世界。这是一个用GBK编码的测试页面，内容足够长以便检测编码。"

func mustEncode(t *testing.T, enc encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

// TestConvertGBKHeaderOnly is the case end to end: the page's only
// charset declaration is the HTTP header.
func TestConvertGBKHeaderOnly(t *testing.T) {
	page := "<html><head><title>中文标题</title></head><body><article><h1>中文标题</h1>" +
		strings.Repeat("<p>"+chineseText+"</p>", 3) + "</article></body></html>"
	body := mustEncode(t, simplifiedchinese.GBK, page)
	if bytes.Contains(body, []byte("charset")) {
		t.Fatal("fixture must not declare a charset in the document")
	}
	doc, err := Convert(body, "text/html; charset=gbk", nil)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if doc.Charset != "gbk" || doc.Kind != KindHTML {
		t.Errorf("Charset, Kind = %q, %q", doc.Charset, doc.Kind)
	}
	if doc.Title != "中文标题" {
		t.Errorf("Title = %q", doc.Title)
	}
	if !strings.Contains(doc.Markdown, chineseText) {
		t.Errorf("Markdown %q lacks the text", doc.Markdown)
	}
}

// TestConvertUTF16BOM: a UTF-16LE page with a BOM and no other declaration.
func TestConvertUTF16BOM(t *testing.T) {
	page := "<html><head><title>Grüße</title></head><body><p>Ein Absatz über Grüße aus aller Welt: 世界, мир, κόσμος.</p></body></html>"
	body := append([]byte{0xFF, 0xFE}, mustEncode(t, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), page)...)
	doc, err := Convert(body, "text/html", nil)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if doc.Charset != "utf-16le" {
		t.Errorf("Charset = %q", doc.Charset)
	}
	if !strings.Contains(doc.Markdown, "世界, мир, κόσμος") {
		t.Errorf("Markdown = %q", doc.Markdown)
	}
}
