// Package pdftext extracts the plain text of a PDF for internal/content
// (Convert: page by page, laid out from the glyphs' positions), bounded
// against hostile files by page, tree and decoded-size limits and a
// deadline, and, in the gatehouse binary, read in a child process with an
// address-space and CPU limit (UseSubprocess, ServeSubprocessIfAsked).
package pdftext
