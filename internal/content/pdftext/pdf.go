package pdftext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ledongthuc/pdf"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Limits of PDF extraction. github.com/ledongthuc/pdf trusts the file: it
// loops forever on cyclic page trees, /Parent chains or /Prev chains and
// allocates whatever /Size or xref subsection a file claims. These bounds,
// checked before and during reading, keep a hostile file from hanging or
// exhausting the process. In the gatehouse binary the reader also runs in
// a child process with an address-space and CPU limit (pdfchild.go); a
// program that embeds this package without UseSubprocess reads PDFs in
// process, bounded only by these limits and maxPDFInProcess.
const (
	// maxPDFPages caps how many pages are read.
	maxPDFPages = 2000
	// maxPDFTreeNodes caps the page-tree nodes visited to find the pages.
	maxPDFTreeNodes = 20000
	// maxPDFDepth caps page-tree depth and /Parent chain length.
	maxPDFDepth = 64
	// maxPDFDecoded caps the bytes the content streams and font /ToUnicode
	// maps of all pages decode to, and maxPDFPageDecoded those of one page:
	// a 1.5 MB file of FlateDecode streams can inflate to gigabytes, and
	// every glyph it shows costs memory. Each page's streams are decoded
	// once to count them (stopping one byte past the page's budget) before
	// the library reads the page. A dense page of text takes some
	// 10–100 KB of content stream, so 1 MiB is far above any real page and
	// 32 MiB above 300 such pages.
	maxPDFDecoded     = 32 << 20
	maxPDFPageDecoded = 1 << 20
	// maxPDFInProcess caps the size of a PDF read in process (no child
	// process): the file is held in memory with everything the library
	// builds from it, with no limit on the process but this one.
	maxPDFInProcess = 16 << 20
)

// pdfTimeout bounds the whole extraction (a variable for tests). In a
// child process the child is killed when it passes; in process the
// library cannot be interrupted, so every later read of the file fails
// (stoppableReaderAt) and the reader ends at its next read.
var pdfTimeout = 20 * time.Second

const pdfFix = "; download it with the terminal and inspect it locally"

var errPDFMalformed = errors.New("malformed or hostile PDF structure")

// Document is the text of a PDF: its /Title (trimmed, "" when none), its
// text as Markdown (plain paragraphs with page markers, ending in a
// newline) and its page count.
type Document struct {
	Title    string
	Markdown string
	Pages    int
}

// Convert extracts the plain text of a PDF, page by page
// (github.com/ledongthuc/pdf, pure Go; lines and paragraphs from the glyph
// positions, see pageLayoutText), and the /Title of its document
// information. A document of several pages has a marker line
// "--- page N ---" (N counted from 1 in document order) before the text of
// each page that has text; Pages is the page count. Encrypted,
// malformed or hostile files and files with no text layer (scans) give
// reason.EmptyContent, a file still being read at pdfTimeout
// reason.ExtractTimeout. The reading runs in a child process when
// UseSubprocess was called (the gatehouse binary), else in process.
func Convert(body []byte) (Document, error) {
	exe := pdfSubprocess.Load()
	if exe == nil && len(body) > maxPDFInProcess {
		return Document{}, reason.Newf(reason.EmptyContent, "", "the PDF is %d MiB, more than the %d MiB read in process (run the gatehouse binary, which reads PDFs in a memory-limited child process)%s", len(body)>>20, maxPDFInProcess>>20, pdfFix)
	}
	if err := pdfPreflight(body); err != nil {
		return Document{}, reason.Wrap(reason.EmptyContent, "", "the PDF could not be read (malformed)"+pdfFix, err)
	}
	if exe != nil {
		return convertPDFSubprocess(*exe, body)
	}
	return convertPDFInProcess(body)
}

// convertPDFInProcess reads the PDF on a goroutine of this process,
// abandoned (and stopped at its next read of the file) at pdfTimeout.
func convertPDFInProcess(body []byte) (Document, error) {
	type result struct {
		doc Document
		err error
	}
	done := make(chan result, 1)
	f := &stoppableReaderAt{r: bytes.NewReader(body)}
	go func() {
		doc, err := readPDFRecover(f, int64(len(body)))
		done <- result{doc, err}
	}()
	timer := time.NewTimer(pdfTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.doc, r.err
	case <-timer.C:
		f.stop.Store(true) // the reader fails at its next read and ends
		return Document{}, pdfTimeoutError()
	}
}

func pdfTimeoutError() error {
	return reason.Newf(reason.ExtractTimeout, "", "reading the PDF took longer than %v, so it was stopped%s", pdfTimeout, pdfFix)
}

// readPDFRecover is readPDF with the library's panics (it panics on many
// malformed files) turned into reason.EmptyContent.
func readPDFRecover(f io.ReaderAt, size int64) (doc Document, err error) {
	defer func() {
		if x := recover(); x != nil {
			doc, err = Document{}, reason.New(reason.EmptyContent, "", "the PDF could not be read (malformed or encrypted)"+pdfFix)
		}
	}()
	return readPDF(f, size)
}

// stoppableReaderAt is the PDF file as the reader sees it: once stop is
// set every read fails, so that a reader abandoned at pdfTimeout stops
// working (and allocating) at its next read instead of running on.
type stoppableReaderAt struct {
	r    *bytes.Reader
	stop atomic.Bool
}

func (s *stoppableReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if s.stop.Load() {
		return 0, errPDFStopped
	}
	return s.r.ReadAt(p, off)
}

var errPDFStopped = errors.New("pdf: reading stopped at the time limit")

// readPDF reads the document in f (size bytes). It panics where the
// library does (readPDFRecover).
func readPDF(f io.ReaderAt, size int64) (Document, error) {
	r, err := pdf.NewReader(f, size)
	if err != nil {
		return Document{}, reason.Wrap(reason.EmptyContent, "", "the PDF could not be read (malformed or encrypted)"+pdfFix, err)
	}
	// The document's streams may decode to maxPDFDecoded bytes in all, a
	// page's to maxPDFPageDecoded: a page over it is skipped (a vector
	// drawing can be that large; a page of text never is), the document
	// over it is refused.
	left := int64(maxPDFDecoded)
	bomb := func() error {
		return reason.Newf(reason.EmptyContent, "", "the PDF's text streams decompress to more than %d MiB in all or %d MiB on one page (a decompression bomb?), so it was not read%s", maxPDFDecoded>>20, maxPDFPageDecoded>>20, pdfFix)
	}
	var b strings.Builder
	fonts := map[string]*pdf.Font{}
	pages := pdfPages(r.Trailer().Key("Root").Key("Pages"))
	skipped := 0
	for i, p := range pages {
		if left <= 0 {
			return Document{}, bomb()
		}
		budget := min(int64(maxPDFPageDecoded), left)
		n := pageDecodedLen(p, fonts, budget)
		left -= n
		var text string
		switch {
		case n > maxPDFPageDecoded:
			skipped++
			text = fmt.Sprintf("[page skipped: its content decompresses to more than %d MiB]", maxPDFPageDecoded>>20)
		case n > budget:
			return Document{}, bomb()
		default:
			text = pdfPageText(p, fonts)
		}
		if text = strings.TrimSpace(text); text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		// In a document of several pages, a marker line before each page's
		// text, numbered by the page's place in the document (pages
		// without text have no marker).
		if len(pages) > 1 {
			b.WriteString(pageMarker(i + 1))
		}
		b.WriteString(text)
	}
	md := strings.TrimSpace(b.String())
	if skipped == len(pages) && skipped > 0 {
		return Document{}, reason.Newf(reason.EmptyContent, "", "the PDF's pages decompress to more than %d MiB each (a decompression bomb?), so none was read%s", maxPDFPageDecoded>>20, pdfFix)
	}
	if md == "" {
		return Document{}, reason.New(reason.EmptyContent, "", "the PDF has no text layer (a scan?); download it and run OCR locally")
	}
	title := strings.TrimSpace(r.Trailer().Key("Info").Key("Title").Text())
	return Document{Title: title, Markdown: md + "\n", Pages: len(pages)}, nil
}

// pageDecodedLen returns the bytes page p's content streams and the
// /ToUnicode maps of its fonts not yet in fonts decode to, counting at
// most limit+1 (a page over its budget need not be decoded further). It
// decodes with the library's own filters (pdf.Value.Reader), the ones the
// page's reading then uses.
func pageDecodedLen(p pdf.Page, fonts map[string]*pdf.Font, limit int64) int64 {
	n := streamDecodedLen(p.V.Key("Contents"), limit+1)
	res := p.Resources().Key("Font")
	for _, name := range p.Fonts() {
		if _, ok := fonts[name]; !ok && n <= limit {
			n += streamDecodedLen(res.Key(name).Key("ToUnicode"), limit+1-n)
		}
	}
	return n
}

// streamDecodedLen returns the decoded length of stream v, or of the
// streams of array v, reading at most max bytes. A stream the library
// cannot decode counts what it gave before failing.
func streamDecodedLen(v pdf.Value, max int64) (n int64) {
	defer func() {
		if recover() != nil {
			n = min(n, max)
		}
	}()
	switch v.Kind() {
	case pdf.Stream:
		rc := v.Reader()
		defer rc.Close()
		n, _ = io.Copy(io.Discard, io.LimitReader(rc, max))
	case pdf.Array:
		for i := 0; i < v.Len() && n < max; i++ {
			n += streamDecodedLen(v.Index(i), max-n)
		}
	}
	return n
}

// pdfPageText returns the text of page p (see pageLayoutText, with the
// library's plain-text reading as the fallback). The library's panics go
// on up.
func pdfPageText(p pdf.Page, fonts map[string]*pdf.Font) string {
	for _, name := range p.Fonts() {
		if _, ok := fonts[name]; !ok {
			f := p.Font(name)
			fonts[name] = &f
		}
	}
	text, layout := pageLayoutText(p)
	if !layout {
		var err error
		if text, err = p.GetPlainText(fonts); err != nil {
			return ""
		}
	}
	return text
}

// pageMarker is the line that starts page n (1-based) of a PDF's text,
// followed by a blank line.
func pageMarker(n int) string { return "--- page " + strconv.Itoa(n) + " ---\n\n" }

// pdfPages walks the page tree depth-first within the limits above,
// skipping any page whose /Parent chain does not end (a cycle would hang
// the library's inherited-attribute lookup).
func pdfPages(root pdf.Value) []pdf.Page {
	var pages []pdf.Page
	visits := 0
	var walk func(v pdf.Value, depth int)
	walk = func(v pdf.Value, depth int) {
		if visits++; visits > maxPDFTreeNodes || depth > maxPDFDepth || len(pages) >= maxPDFPages || v.IsNull() {
			return
		}
		switch v.Key("Type").Name() {
		case "Pages":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len() && visits <= maxPDFTreeNodes; i++ {
				walk(kids.Index(i), depth+1)
			}
		case "Page":
			if parentChainEnds(v) {
				pages = append(pages, pdf.Page{V: v})
			}
		}
	}
	walk(root, 0)
	return pages
}

func parentChainEnds(v pdf.Value) bool {
	for i := 0; i <= maxPDFDepth; i++ {
		if v.IsNull() {
			return true
		}
		v = v.Key("Parent")
	}
	return false
}

var (
	rePDFSize      = lazyregexp.New(`/Size\s+(\d+)`)
	rePDFIndex     = lazyregexp.New(`/Index\s*\[([\d\s]*)\]`)
	rePDFXref      = lazyregexp.New(`(?s)(?:^|[\r\n])xref\s*[\r\n](.*?)trailer`)
	rePDFSubsect   = lazyregexp.New(`(?m)^\s*(\d+)[ \t]+(\d+)[ \t]*\r?$`)
	rePDFPrev      = lazyregexp.New(`/Prev\s+(\d+)(\s+\d+\s+R)?`)
	rePDFStartXref = lazyregexp.New(`startxref\s+(\d+)`)
)

// pdfPreflight rejects files whose cross-reference data would make the
// library allocate without bound or loop forever: an object count (/Size,
// /Index, xref subsection) larger than the file itself, or a /Prev chain
// that revisits a section.
func pdfPreflight(body []byte) error {
	limit := int64(len(body))
	tooBig := func(nums ...[]byte) bool {
		var sum int64
		for _, n := range nums {
			v, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || v > limit {
				return true
			}
			sum += v
		}
		return sum > limit
	}
	for _, m := range rePDFSize.FindAllSubmatch(body, -1) {
		if tooBig(m[1]) {
			return errPDFMalformed
		}
	}
	for _, m := range rePDFIndex.FindAllSubmatch(body, -1) {
		f := bytes.Fields(m[1])
		for i := 0; i+1 < len(f); i += 2 {
			if tooBig(f[i], f[i+1]) {
				return errPDFMalformed
			}
		}
	}
	for _, x := range rePDFXref.FindAllSubmatch(body, -1) {
		for _, m := range rePDFSubsect.FindAllSubmatch(x[1], -1) {
			if tooBig(m[1], m[2]) {
				return errPDFMalformed
			}
		}
	}
	seen := map[int64]bool{}
	if m := rePDFStartXref.FindAllSubmatch(body, -1); len(m) > 0 {
		if off, err := strconv.ParseInt(string(m[len(m)-1][1]), 10, 64); err == nil {
			seen[off] = true
		}
	}
	for _, m := range rePDFPrev.FindAllSubmatch(body, -1) {
		if len(m[2]) > 0 {
			continue // "/Prev 12 0 R": an outline item, not an xref offset
		}
		off, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil || seen[off] {
			return errPDFMalformed
		}
		seen[off] = true
	}
	return nil
}

// runAdvance estimates the advance of s in ems (multiples of the font
// size) for a glyph run whose widths the PDF does not give, from the
// widths of Helvetica (the Adobe AFM metrics, which Times and Arial are
// close to) by class of character: narrow letters and punctuation about
// 0.28 em, wide letters 0.83, capitals 0.67, digits and other letters 0.55.
func runAdvance(s string) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune("iljtfrI.,:;!|'` ", r):
			w += 0.28
		case strings.ContainsRune("mwMW", r):
			w += 0.83
		case r >= 'A' && r <= 'Z':
			w += 0.67
		default:
			w += 0.55
		}
	}
	return w
}

// Layout thresholds for pageLayoutText, as multiples of the font size.
const (
	// pdfNewLine: a baseline move larger than this starts a new line.
	pdfNewLine = 0.5
	// pdfParagraph: a downward baseline move larger than this (a line is
	// usually 1.2 apart) starts a new paragraph, as does any move up.
	pdfParagraph = 1.7
	// pdfWordGap: a horizontal gap wider than this between two glyphs on
	// a line is a word space.
	pdfWordGap = 0.2
)

// pageLayoutText rebuilds the text of page p from its positioned glyphs:
// a newline where the baseline moves, a blank line (a paragraph break)
// where it moves down by more than pdfParagraph times the font size or
// moves up (a new column or block), and a space where glyphs on a line are
// further apart than pdfWordGap times the font size. Glyphs are taken in
// content-stream order, the order the page was written in. GetPlainText
// ignores positions and runs lines and words together. ok is false when
// the library fails (it panics on some malformed content streams); the
// caller then falls back to GetPlainText.
func pageLayoutText(p pdf.Page) (text string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			text, ok = "", false
		}
	}()
	return layoutText(p.Content().Text), true
}

// layoutText is pageLayoutText's layout of glyphs (see there).
//
// ledongthuc/pdf knows glyph widths only from a font's /Widths array: for a
// font without one (the standard 14 fonts, Helvetica and Times, which PDF
// writers need not describe) every glyph has W 0 and the glyphs of one
// string share its start X; a TJ displacement moves the next glyph from
// there, a Td or Tm sets its position outright. The end of such a run is
// then estimated from its characters (runAdvance): a glyph placed inside
// that extent was moved by a TJ displacement (the gap itself), one placed
// beyond it by Td or Tm (the gap is the distance to the estimated end), so
// that a word set in pieces ("Hel" Tj, then "lo" at the next x) is joined
// rather than split by a space.
func layoutText(glyphs []pdf.Text) string {
	var b strings.Builder
	var prev *pdf.Text
	// runX and runW: the start X and the estimated advance (in text space
	// units) of the current run of zero-width glyphs.
	var runX, runW float64
	for i := range glyphs {
		g := &glyphs[i]
		if g.S == "" {
			continue
		}
		sameRun := false
		if prev != nil {
			size := max(g.FontSize, prev.FontSize, 1)
			dy := prev.Y - g.Y // positive when moving down the page
			switch {
			case dy > pdfParagraph*size || -dy > pdfNewLine*size:
				b.WriteString("\n\n")
			case dy > pdfNewLine*size:
				b.WriteString("\n")
			default:
				end := prev.X + prev.W
				switch {
				case prev.W > 0:
				case g.W == 0 && g.X == prev.X:
					sameRun, end = true, g.X // the library did not advance
				case g.X < runX+runW/2:
					// Inside the run's estimated extent: the library
					// moved only by a TJ displacement, which is the
					// gap itself (positive: apart).
					end = runX
				default:
					// A position set by Td or Tm, absolute: the run
					// ends where its characters would.
					end = runX + runW
				}
				gap := g.X - end
				if gap > pdfWordGap*size && !strings.HasSuffix(prev.S, " ") && !strings.HasPrefix(g.S, " ") {
					b.WriteByte(' ')
				}
			}
		}
		if g.W == 0 {
			if !sameRun {
				runX, runW = g.X, 0
			}
			runW += runAdvance(g.S) * max(g.FontSize, 1)
		}
		b.WriteString(g.S)
		prev = g
	}
	// Trim each line, and keep at most one blank line in a row.
	lines := strings.Split(b.String(), "\n")
	out := lines[:0]
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
