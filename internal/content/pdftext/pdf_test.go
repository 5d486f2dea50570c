package pdftext

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/content/pdftext/pdftest"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// minimalPDF and assemblePDF write test PDFs (pdftest).
var (
	minimalPDF  = pdftest.Minimal
	assemblePDF = pdftest.Assemble
)

func TestConvertPDFMalformed(t *testing.T) { inBothPDFModes(t, testConvertPDFMalformed) }

func testConvertPDFMalformed(t *testing.T) {
	good := minimalPDF("T", "Hello")
	cases := []struct {
		name string
		body []byte
	}{
		{name: "header only", body: []byte("%PDF-1.7\n")},
		{name: "garbage after header", body: []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF")},
		{name: "truncated", body: good[:len(good)/2]},
		{name: "no text", body: minimalPDF("Scan")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Convert(tc.body)
			if got := reason.Of(err); got != reason.EmptyContent {
				t.Fatalf("reason = %q (err %v), want %q", got, err, reason.EmptyContent)
			}
		})
	}
}

// TestConvertPDFHostile: structures that make the PDF library loop forever
// or allocate without bound are refused quickly, never hang.
func TestConvertPDFHostile(t *testing.T) { inBothPDFModes(t, testConvertPDFHostile) }

func testConvertPDFHostile(t *testing.T) {
	good := string(minimalPDF("T", "Hello"))
	xrefAt := strings.Index(good, "xref\n")
	cases := []struct {
		name string
		body string
	}{
		{name: "page tree that contains itself", body: strings.Replace(good, "/Kids [3 0 R] /Count 1", "/Kids [2 0 R 3 0 R] /Count 5", 1)},
		{name: "page whose parent is itself", body: strings.Replace(good, "/Type /Page /Parent 2 0 R", "/Type /Page /Parent 3 0 R", 1)},
		{name: "huge page count", body: strings.Replace(good, "/Count 1", "/Count 999999999", 1)},
		{name: "xref Prev pointing at itself", body: strings.Replace(good, "/Root 1 0 R", fmt.Sprintf("/Root 1 0 R /Prev %d", xrefAt), 1)},
		{name: "absurd trailer Size", body: strings.Replace(good, "/Size 7", "/Size 99999999999", 1)},
		{name: "absurd xref subsection", body: strings.Replace(good, "xref\n0 7\n", "xref\n4000000000 7\n", 1)},
		{name: "absurd xref stream Index", body: good + "\n9 0 obj << /Type /XRef /Index [0 5000000000] /W [1 2 1] >>\nendobj\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := Convert([]byte(tc.body))
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil && reason.Of(err) != reason.EmptyContent {
					t.Errorf("reason = %q, want %q or success", reason.Of(err), reason.EmptyContent)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Convert hung")
			}
		})
	}
}

func TestPDFPreflightAcceptsRealStructures(t *testing.T) {
	good := minimalPDF("T", "Hello")
	// An outline item's "/Prev 4 0 R" is a reference, not an xref offset.
	withOutline := bytes.Replace(good, []byte("/Producer (gatehouse test)"), []byte("/Producer (x) /Prev 4 0 R /Next 4 0 R /X << /Prev 4 0 R >>"), 1)
	for _, b := range [][]byte{good, withOutline} {
		if err := pdfPreflight(b); err != nil {
			t.Errorf("preflight refused a valid file: %v", err)
		}
	}
}

// TestPDFWordsSetInPiecesJoined: a standard-14 font has no /Widths, so the
// PDF library reports zero glyph widths; words a writer set in pieces (a
// Td to the next piece, or small TJ kerning) must come back whole, and
// real word gaps (a wider Td, a TJ displacement of a space) as one space
// (newcomer review W9).
func TestPDFWordsSetInPiecesJoined(t *testing.T) {
	// Helvetica 12: "Light" is about 0.67+0.28+0.28+0.55+0.28 = 2.06 em
	// = 24.7 pt wide, so the next piece at +24.5 continues the word; the
	// word after "house" starts a space (3.3 pt) past its end.
	content := "BT /F1 12 Tf 72 720 Td (Light) Tj 24.5 0 Td (house) Tj 35.5 0 Td (keepers) Tj ET\n" +
		"BT /F1 12 Tf 72 690 Td [(Kern) 40 (ing) -280 (keeps) -250 (words)] TJ ET\n"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	doc, err := Convert(assemblePDF("%PDF-1.4\n", objs, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Lighthouse keepers", "Kerning keeps words"} {
		if !strings.Contains(doc.Markdown, want) {
			t.Errorf("markdown %q lacks %q", doc.Markdown, want)
		}
	}
}

// bombPDF is a valid one-page PDF whose content stream is FlateDecode of
// inflated bytes of text operators: a small file that decompresses to far
// more than maxPDFDecoded.
func bombPDF(t *testing.T, inflated int) []byte {
	t.Helper()
	bombsMu.Lock()
	defer bombsMu.Unlock()
	if b, ok := bombs[inflated]; ok {
		return b // built once: deflating megabytes is slow under -race
	}
	b := buildBombPDF(inflated)
	bombs[inflated] = b
	return b
}

var (
	bombsMu sync.Mutex
	bombs   = map[int][]byte{}
)

func buildBombPDF(inflated int) []byte {
	line := bytes.Repeat([]byte("BT /F1 12 Tf 72 720 Td (bomb bomb bomb bomb) Tj ET\n"), 1<<14)
	return flateTextPDF(line, func(n int) bool { return n < inflated })
}

// flateTextPDF is a one-page PDF (Helvetica) whose content stream is line
// repeated while more(bytes written so far) holds, stored FlateDecode at
// the best compression.
func flateTextPDF(line []byte, more func(n int) bool) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	for n := 0; more(n); n += len(line) {
		zw.Write(line)
	}
	zw.Close()
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%sendstream", z.Len(), z.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	return assemblePDF("%PDF-1.4\n", objs, "")
}

// TestConvertPDFDecompressionBomb (hostile review session 5, D16): a PDF
// whose content stream inflates to 8 MiB from a few hundred KB stops at
// maxPDFPageDecoded with a message saying so, instead of running for the
// whole timeout (and on after it in a long-lived server). In process and
// in a child process alike: the page's streams are measured before the
// library reads them.
func TestConvertPDFDecompressionBomb(t *testing.T) {
	inBothPDFModes(t, testConvertPDFDecompressionBomb)
}

func testConvertPDFDecompressionBomb(t *testing.T) {
	body := bombPDF(t, 8<<20)
	if len(body) > 2<<20 {
		t.Fatalf("bomb is %d bytes", len(body))
	}
	// (Stopped by the cap, not by the time limit, which would be
	// extract_timeout.)
	_, err := Convert(body)
	if reason.Of(err) != reason.EmptyContent || !strings.Contains(err.Error(), "decompress") {
		t.Fatalf("err = %v, want empty_content naming the decompression", err)
	}
	// A small compressed document still reads.
	doc, err := Convert(bombPDF(t, 1<<10))
	if err != nil || !strings.Contains(doc.Markdown, "bomb bomb") {
		t.Fatalf("small compressed PDF: %v %q", err, doc.Markdown)
	}
}

// TestPDFReaderStops: once the time limit passes, every read of the file
// fails, so an abandoned reader ends at its next read.
func TestPDFReaderStops(t *testing.T) {
	f := &stoppableReaderAt{r: bytes.NewReader([]byte("%PDF-1.4"))}
	p := make([]byte, 4)
	if n, err := f.ReadAt(p, 0); n != 4 || err != nil {
		t.Fatalf("before stop: %d %v", n, err)
	}
	f.stop.Store(true)
	if _, err := f.ReadAt(p, 0); err == nil {
		t.Fatal("read after stop succeeded")
	}
}
