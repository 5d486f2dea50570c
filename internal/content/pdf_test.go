package content

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/pdftext/pdftest"
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

// minimalPDF and assemblePDF write test PDFs (pdftest).
var (
	minimalPDF  = pdftest.Minimal
	assemblePDF = pdftest.Assemble
)

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
