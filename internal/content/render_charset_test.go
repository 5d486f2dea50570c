package content

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/charset"
	"golang.org/x/text/encoding/charmap"
)

// TestRenderWrongLegacyLabel: valid UTF-8 labelled with a single-byte
// legacy charset is read as UTF-8 (a deliberate deviation, see Decode).
func TestRenderWrongLegacyLabel(t *testing.T) {
	const utf8Page = `<html><head><title>Café guide</title></head><body><p>Le café crème et la crème brûlée — “quotes” and € euro.</p></body></html>`
	latin := mustEncode(t, charmap.Windows1252, `<html><head><title>Café guide</title></head><body><p>Le café crème et la crème brûlée — “quotes” and € euro.</p></body></html>`)
	for _, tc := range []struct {
		name, contentType string
		body              []byte
		charset           string
	}{
		{"header iso-8859-1", "text/html; charset=iso-8859-1", []byte(utf8Page), "utf-8"},
		{"header windows-1252", "text/html; charset=windows-1252", []byte(utf8Page), "utf-8"},
		{"header windows-1251", "text/html; charset=windows-1251", []byte(utf8Page), "utf-8"},
		{"meta latin1", "text/html", []byte(`<meta charset="latin1">` + utf8Page), "utf-8"},
		{"meta http-equiv iso-8859-15", "", []byte(`<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-15">` + utf8Page), "utf-8"},
		{"real latin1 keeps its label", "text/html; charset=iso-8859-1", latin, "windows-1252"},
		{"real latin1 by meta", "text/html", append([]byte(`<meta charset="windows-1252">`), latin...), "windows-1252"},
		{"utf-8 label", "text/html; charset=utf-8", []byte(utf8Page), "utf-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, cs, err := charset.Decode(tc.body, tc.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if cs != tc.charset {
				t.Errorf("charset = %q; want %q", cs, tc.charset)
			}
			for _, want := range []string{"Café guide", "crème brûlée — “quotes” and € euro"} {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q: %q", want, text)
				}
			}
		})
	}
	// ASCII-only bodies keep the declared label (nothing to decide).
	if _, cs, _ := charset.Decode([]byte("<p>plain</p>"), "text/html; charset=iso-8859-1"); cs != "windows-1252" {
		t.Errorf("ASCII body: charset = %q", cs)
	}
	doc, err := Convert([]byte(utf8Page), "text/html; charset=iso-8859-1", nil)
	if err != nil || doc.Title != "Café guide" || !strings.Contains(doc.Markdown, "crème brûlée") {
		t.Errorf("Convert = %q %q %v", doc.Title, doc.Markdown, err)
	}
}

// TestRenderSniffCyrillic: an undeclared windows-1251 page is recognised;
// Latin pages with accents still fall back to windows-1252.
func TestRenderSniffCyrillic(t *testing.T) {
	const ru = "Это страница в кодировке windows-1251 без объявления кодировки вообще, длинный абзац текста."
	for _, tc := range []struct {
		name    string
		body    []byte
		want    string
		charset []string
	}{
		{"cp1251 short", mustEncode(t, charmap.Windows1251, `<html><head><title>Привет</title></head><body><article><p>`+ru+`</p></article></body></html>`), "Привет", []string{"windows-1251"}},
		{"cp1251 long", mustEncode(t, charmap.Windows1251, "<p>"+strings.Repeat(ru+" Съешь же ещё этих мягких французских булок, да выпей чаю. ", 20)+"</p>"), "мягких французских булок", []string{"windows-1251"}},
		{"cp1251 title only", mustEncode(t, charmap.Windows1251, `<title>Новости дня</title><p>Главная страница сайта</p>`), "Новости дня", []string{"windows-1251"}},
		{"latin1 french", mustEncode(t, charmap.Windows1252, "<p>Les élèves étaient déjà là, à côté de l'église.</p>"), "élèves étaient déjà", []string{"windows-1252", "iso-8859-2", "iso-8859-15"}},
		{"latin1 german", mustEncode(t, charmap.Windows1252, "<p>Größere Straßen führen über die Brücke; Öl und Äpfel.</p>"), "Größere Straßen", []string{"windows-1252", "iso-8859-15"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, cs, err := charset.Decode(tc.body, "text/html")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(tc.charset, cs) || !strings.Contains(text, tc.want) {
				t.Errorf("Decode = %q, %q; want %v and %q", cs, text, tc.charset, tc.want)
			}
		})
	}
}
