package pdftext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"
)

// streamPDF writes a one-page PDF whose content stream is content, with
// font F1 (Helvetica, no widths) and F2 (Helvetica with a /Widths array of
// 500 for every printable ASCII code, so that glyphs advance).
func streamPDF(content string) []byte {
	widths := strings.TrimSpace(strings.Repeat("500 ", 126-32+1))
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content)+1, content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 32 /LastChar 126 /Widths [" + widths + "] >>",
	}
	return assemblePDF("%PDF-1.4\n", objs, "")
}

// TestRenderPDFLayout: lines, paragraphs and word gaps come from the
// glyphs' positions.
func TestRenderPDFLayout(t *testing.T) {
	for _, tc := range []struct{ name, stream, want string }{
		{"quote operator lines", "BT /F1 12 Tf 72 720 Td 14 TL (Quarterly Report 2024) ' (Revenue grew 12 percent.) ' (Second line.) ' ET",
			"Quarterly Report 2024\nRevenue grew 12 percent.\nSecond line."},
		{"heading then paragraph", "BT /F1 18 Tf 72 720 Td (Heading line) Tj /F1 12 Tf 0 -40 Td (First paragraph words) Tj 0 -14 Td (continue here) Tj 0 -40 Td (Second paragraph.) Tj ET",
			"Heading line\n\nFirst paragraph words\ncontinue here\n\nSecond paragraph."},
		{"Tm positioned lines", "BT /F1 12 Tf 1 0 0 1 72 700 Tm (Tm positioned line) Tj 1 0 0 1 72 686 Tm (another Tm line) Tj ET",
			"Tm positioned line\nanother Tm line"},
		{"word gap by Td", "BT /F2 10 Tf 72 700 Td (alpha) Tj 40 0 Td (beta) Tj ET", "alpha beta"},
		{"no gap when glyphs touch", "BT /F2 10 Tf 72 700 Td (alp) Tj 15 0 Td (ha) Tj ET", "alpha"},
		{"TJ kerning space", "BT /F2 10 Tf 72 700 Td [(word) -600 (next)] TJ ET", "word next"},
		{"TJ small kerning", "BT /F2 10 Tf 72 700 Td [(W) 80 (ave)] TJ ET", "Wave"},
		{"column jump up", "BT /F1 12 Tf 72 700 Td (left column end) Tj 250 100 Td (right column top) Tj ET",
			"left column end\n\nright column top"},
		{"separate text objects", "BT /F1 12 Tf 72 700 Td (one) Tj ET BT /F1 12 Tf 72 686 Td (two) Tj ET", "one\ntwo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Convert(streamPDF(tc.stream))
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if got := strings.TrimSpace(doc.Markdown); got != tc.want {
				t.Errorf("Markdown = %q; want %q", got, tc.want)
			}
		})
	}
}

// TestRenderPDFHelperLines: the existing two-line helper still reads as two
// lines.
func TestRenderPDFHelperLines(t *testing.T) {
	doc, err := Convert(minimalPDF("T", "Hello PDF world", "Second line of text"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(doc.Markdown); got != "Hello PDF world\nSecond line of text" {
		t.Errorf("Markdown = %q", got)
	}
}

func TestRenderLayoutTextEdges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		glyphs []pdf.Text
		want   string
	}{
		{"empty", nil, ""},
		{"blank glyphs", []pdf.Text{{S: ""}, {S: " ", FontSize: 10}}, ""},
		{"zero font size", []pdf.Text{{S: "a", Y: 100}, {S: "b", Y: 100}, {S: "c", Y: 99}, {S: "d", Y: 90}}, "ab\nc\n\nd"},
		{"explicit space kept once", []pdf.Text{{S: "a", X: 0, W: 5, FontSize: 10}, {S: " ", X: 5, W: 3, FontSize: 10}, {S: "b", X: 20, W: 5, FontSize: 10}}, "a b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := layoutText(tc.glyphs); got != tc.want {
				t.Errorf("layoutText = %q; want %q", got, tc.want)
			}
		})
	}
}
