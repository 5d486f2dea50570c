package content

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestMain lets this test binary serve as the PDF child process, as the
// gatehouse binary does (cmd/gatehouse main).
func TestMain(m *testing.M) {
	ServePDFSubprocessIfAsked()
	os.Exit(m.Run())
}

// pdfChildOn is set while inBothPDFModes reads PDFs in a child process.
var pdfChildOn bool

// inBothPDFModes runs test with PDFs read in process (an embedding program)
// and in a child process running this test binary (the gatehouse binary).
func inBothPDFModes(t *testing.T, test func(t *testing.T)) {
	t.Run("in-process", test)
	t.Run("subprocess", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("PDF child processes are limited on Linux only")
		}
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		UsePDFSubprocess(exe)
		pdfChildOn = true
		t.Cleanup(func() { UsePDFSubprocess(""); pdfChildOn = false })
		test(t)
	})
}

// minimalPDF writes a one-page PDF 1.4 file by hand: catalog, page tree,
// one page whose content stream shows each line with the standard
// Helvetica font, and an information dictionary with a title. The xref
// offsets are computed, so the file is valid for strict readers.
func minimalPDF(title string, lines ...string) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 18 Tf 72 720 Td 22 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", l)
	}
	content.WriteString("ET\n")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Title (%s) /Producer (gatehouse test) >>", title),
	}
	return assemblePDF("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", objs, " /Info 6 0 R")
}

// assemblePDF writes objs (numbered from 1, object 1 the catalog) after
// header, with a correct xref table and a trailer carrying trailerExtra.
func assemblePDF(header string, objs []string, trailerExtra string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, trailerExtra, xref)
	return b.Bytes()
}

func TestConvertPDF(t *testing.T) { inBothPDFModes(t, testConvertPDF) }

func testConvertPDF(t *testing.T) {
	pdf := minimalPDF("Quarterly report", "Hello PDF world", "Second line of text")
	cts := []string{"application/pdf", "", "application/octet-stream", "text/html"}
	if pdfChildOn {
		cts = cts[:1] // the child sees the same bytes whatever the type said
	}
	for _, ct := range cts {
		t.Run("content-type="+ct, func(t *testing.T) {
			doc, err := Convert(pdf, ct, nil)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if doc.Kind != KindPDF || doc.Charset != "" {
				t.Errorf("Kind, Charset = %q, %q; want pdf, empty", doc.Kind, doc.Charset)
			}
			if doc.Title != "Quarterly report" {
				t.Errorf("Title = %q", doc.Title)
			}
			for _, want := range []string{"Hello PDF world", "Second line of text"} {
				if !strings.Contains(doc.Markdown, want) {
					t.Errorf("Markdown %q lacks %q", doc.Markdown, want)
				}
			}
		})
	}
}

func TestConvertDeclaredPDFThatIsNot(t *testing.T) {
	_, err := Convert([]byte("<html><body>not a pdf</body></html>"), "application/pdf", nil)
	if got := reason.Of(err); got != reason.UnsupportedContentType {
		t.Fatalf("reason = %q, want %q", got, reason.UnsupportedContentType)
	}
}
