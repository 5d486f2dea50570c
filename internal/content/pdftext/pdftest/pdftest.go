// Package pdftest writes small, valid PDF files by hand for the tests of
// the packages that read PDFs (content, content/pdftext, the gatehouse
// binary). It is imported only by tests.
package pdftest

import (
	"bytes"
	"fmt"
	"strings"
)

// Minimal writes a one-page PDF 1.4 file: catalog, page tree, one page
// whose content stream shows each line with the standard Helvetica font,
// and an information dictionary with title. The xref offsets are computed,
// so the file is valid for strict readers.
func Minimal(title string, lines ...string) []byte {
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
	return Assemble("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", objs, " /Info 6 0 R")
}

// Assemble writes objs (numbered from 1, object 1 the catalog) after
// header, with a correct xref table and a trailer carrying trailerExtra.
func Assemble(header string, objs []string, trailerExtra string) []byte {
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
