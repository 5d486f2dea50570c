//go:build !linux

package pdftext

import "errors"

// pdfChildLimited: limitSelf does not work here.
const pdfChildLimited = false

// limitSelf: address-space and CPU limits are set on Linux only; elsewhere
// the child process runs unlimited (still killed at pdfTimeout), so
// UseSubprocess refuses to serve there.
func limitSelf(mem int64, cpu int) error {
	return errors.New("PDF child processes are limited on Linux only")
}
