package charset

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
)

const chineseText = "中文网页：你好，世界。这是一个用GBK编码的测试页面，内容足够长以便检测编码。"

func mustEncode(t *testing.T, enc encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

func TestDecode(t *testing.T) {
	gbkPage := func(t *testing.T) []byte {
		return mustEncode(t, simplifiedchinese.GBK, "<html><head><title>测试</title></head><body><p>"+chineseText+"</p></body></html>")
	}
	utf16Page := func(t *testing.T, enc encoding.Encoding, bom []byte) []byte {
		return append(bom, mustEncode(t, enc, "<html><body><p>Grüße, 世界</p></body></html>")...)
	}
	latin := func(t *testing.T, s string) []byte { return mustEncode(t, charmap.Windows1252, s) }
	cases := []struct {
		name        string
		body        func(t *testing.T) []byte
		contentType string
		want        string // substring of the decoded text
		charset     string // "" = either of alts
		alts        []string
	}{
		{
			name:        "GBK declared only in the Content-Type header",
			body:        gbkPage,
			contentType: "text/html; charset=GBK",
			want:        chineseText,
			charset:     "gbk",
		},
		{
			name:        "gb2312 label is gbk (WHATWG Encoding Standard)",
			body:        gbkPage,
			contentType: "text/html; charset=gb2312",
			want:        chineseText,
			charset:     "gbk",
		},
		{
			name:        "GBK without any declaration is sniffed, not U+FFFD soup",
			body:        gbkPage,
			contentType: "text/html",
			want:        chineseText,
			alts:        []string{"gbk", "gb18030"},
		},
		{
			name: "UTF-16LE with BOM beats the header",
			body: func(t *testing.T) []byte {
				return utf16Page(t, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), []byte{0xFF, 0xFE})
			},
			contentType: "text/html; charset=iso-8859-1",
			want:        "Grüße, 世界",
			charset:     "utf-16le",
		},
		{
			name: "UTF-16BE with BOM",
			body: func(t *testing.T) []byte {
				return utf16Page(t, unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), []byte{0xFE, 0xFF})
			},
			contentType: "",
			want:        "Grüße, 世界",
			charset:     "utf-16be",
		},
		{
			name:        "UTF-8 BOM beats a wrong header",
			body:        func(t *testing.T) []byte { return append([]byte{0xEF, 0xBB, 0xBF}, "<p>naïve café</p>"...) },
			contentType: "text/html; charset=windows-1252",
			want:        "<p>naïve café</p>",
			charset:     "utf-8",
		},
		{
			name: "windows-1252 declared by <meta charset>",
			body: func(t *testing.T) []byte {
				return latin(t, `<!doctype html><html><head><meta charset="windows-1252"><title>x</title></head><body><p>“Café” — naïve</p></body></html>`)
			},
			want:    "“Café” — naïve",
			charset: "windows-1252",
		},
		{
			name: "meta http-equiv Content-Type (latin1 label is windows-1252)",
			body: func(t *testing.T) []byte {
				return latin(t, `<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"></head><body>Ærøskøbing €5</body></html>`)
			},
			contentType: "text/html",
			want:        "Ærøskøbing €5",
			charset:     "windows-1252",
		},
		{
			name: "meta content charset without http-equiv is ignored (prescan needs the pragma)",
			body: func(t *testing.T) []byte {
				return []byte(`<html><head><meta name="x" content="text/html; charset=koi8-r"></head><body>plain ascii and é</body></html>`)
			},
			want:    "plain ascii and é",
			charset: "utf-8",
		},
		{
			name: "header charset beats meta",
			body: func(t *testing.T) []byte {
				return mustEncode(t, charmap.KOI8R, `<html><head><meta charset="utf-8"></head><body>Привет мир, это тест</body></html>`)
			},
			contentType: "text/html; charset=koi8-r",
			want:        "Привет мир, это тест",
			charset:     "koi8-r",
		},
		{
			name: "meta declaring UTF-16 means UTF-8",
			body: func(t *testing.T) []byte {
				return []byte(`<html><head><meta charset="utf-16"></head><body>Grüße</body></html>`)
			},
			want:    "Grüße",
			charset: "utf-8",
		},
		{
			name:    "no declaration, valid UTF-8 is sniffed as UTF-8",
			body:    func(t *testing.T) []byte { return []byte("<p>Grüße 世界</p>") },
			want:    "Grüße 世界",
			charset: "utf-8",
		},
		{
			name: "no declaration, Latin bytes are not U+FFFD",
			body: func(t *testing.T) []byte {
				return latin(t, "<p>Les élèves étaient déjà là, à côté de l'église.</p>")
			},
			want: "Les élèves étaient déjà là, à côté de l'église.",
			alts: []string{"windows-1252", "iso-8859-2", "iso-8859-15"},
		},
		{
			name: "declared UTF-8 but the bytes are Latin: more than 1% U+FFFD, the sniffed encoding wins",
			body: func(t *testing.T) []byte {
				return latin(t, "<p>Déjà vu: élève, café, naïve, façade, résumé.</p>")
			},
			contentType: "text/html; charset=utf-8",
			want:        "Déjà vu: élève, café, naïve, façade, résumé.",
			alts:        []string{"windows-1252", "iso-8859-2", "iso-8859-15"},
		},
		{
			name: "one stray invalid byte in a long UTF-8 page keeps UTF-8",
			body: func(t *testing.T) []byte {
				return []byte("<p>" + strings.Repeat("Grüße aus Köln. ", 40) + "\xff</p>")
			},
			contentType: "text/html; charset=utf-8",
			want:        "Grüße aus Köln.",
			charset:     "utf-8",
		},
		{
			name:        "malformed header still yields its charset",
			body:        gbkPage,
			contentType: `text/html; charset="gbk"; charset=utf-8`,
			want:        chineseText,
			charset:     "gbk",
		},
		{
			name: "text/plain is not prescanned for <meta>",
			body: func(t *testing.T) []byte {
				return []byte(`<meta charset="windows-1252"> is how HTML declares it; café`)
			},
			contentType: "text/plain",
			want:        "café",
			charset:     "utf-8",
		},
		{
			name:        "unknown header label falls through to meta",
			body:        func(t *testing.T) []byte { return latin(t, `<meta charset="latin1"><p>Öl</p>`) },
			contentType: "text/html; charset=x-nonsense",
			want:        "Öl",
			charset:     "windows-1252",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, cs, err := Decode(tc.body(t), tc.contentType)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("text %q does not contain %q", text, tc.want)
			}
			if strings.Count(text, "\uFFFD") > 1 {
				t.Errorf("text has U+FFFD: %q", text)
			}
			if tc.charset != "" && cs != tc.charset {
				t.Errorf("charset = %q, want %q", cs, tc.charset)
			}
			if tc.alts != nil && !contains(tc.alts, cs) {
				t.Errorf("charset = %q, want one of %q", cs, tc.alts)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
