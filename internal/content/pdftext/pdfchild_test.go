package pdftext

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestMain lets this test binary serve as the PDF child process, as the
// gatehouse binary does (cmd/gatehouse main).
func TestMain(m *testing.M) {
	ServeSubprocessIfAsked()
	os.Exit(m.Run())
}

// inBothPDFModes runs test with PDFs read in process (an embedding program)
// and in a child process running this test binary (the gatehouse binary).
func inBothPDFModes(t *testing.T, test func(t *testing.T)) {
	t.Run("in-process", test)
	t.Run("subprocess", func(t *testing.T) {
		if !pdfChildLimited {
			t.Skip("PDF child processes are limited on Linux only")
		}
		useTestPDFChild(t)
		test(t)
	})
}

func useTestPDFChild(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	UseSubprocess(exe)
	t.Cleanup(func() { UseSubprocess("") })
}

// glyphHeavyPDF is a one-page PDF whose content stream (compressed, under
// maxPDFPageDecoded decoded) shows some 750,000 glyphs: within every
// stream limit, but the library keeps a positioned glyph of ~100 bytes
// for each, so reading it takes tens of MB.
func glyphHeavyPDF(t *testing.T) []byte {
	t.Helper()
	line := []byte("BT /F1 12 Tf 72 720 Td (glyphs glyphs glyphs glyphs glyphs glyphs glyphs glyphs) Tj ET\n")
	return flateTextPDF(line, func(n int) bool { return n+len(line) < maxPDFPageDecoded-4096 })
}

// TestPDFSubprocessMemoryLimit: the child's address space is limited, so a
// file that passes every stream limit but makes the library allocate more
// than the child may is stopped with a message saying so, and the parent
// (this process) carries on.
func TestPDFSubprocessMemoryLimit(t *testing.T) {
	if !pdfChildLimited {
		t.Skip("Linux only")
	}
	useTestPDFChild(t)
	body := glyphHeavyPDF(t)
	// With the default budget it reads (slow under the race detector,
	// where TestConvertPDF/subprocess shows the default budget suffices).
	if !raceEnabled {
		doc, err := Convert(body)
		if err != nil || !strings.Contains(doc.Markdown, "glyphs glyphs") {
			t.Fatalf("default memory budget: err %v, %d bytes of text", err, len(doc.Markdown))
		}
	}
	old := pdfChildMemory
	pdfChildMemory = 32 << 20
	t.Cleanup(func() { pdfChildMemory = old })
	_, err := Convert(body)
	if reason.Of(err) != reason.EmptyContent || !strings.Contains(err.Error(), "memory") {
		t.Fatalf("err = %v (%v), want empty_content naming the memory limit", err, errors.Unwrap(err))
	}
	// A small file still reads under a limit. Not under 32 MiB: the Go
	// runtime reserves address space in 64 MiB heap arenas (more with the
	// race detector's shadow memory), so whether a small read fits 32 MiB
	// above the child's start depends on when it maps its next arena (this
	// flaked in CI under -race).
	pdfChildMemory = 256 << 20
	if _, err := Convert(minimalPDF("T", "Hello")); err != nil {
		t.Fatalf("small PDF under a 256 MiB budget: %v (%v)", err, errors.Unwrap(err))
	}
}

// TestPDFSubprocessKilledAtDeadline: a child still running at pdfTimeout
// is killed (not abandoned) and the result is extract_timeout.
func TestPDFSubprocessKilledAtDeadline(t *testing.T) {
	if !pdfChildLimited {
		t.Skip("Linux only")
	}
	hang := filepath.Join(t.TempDir(), "hang")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 60\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	UseSubprocess(hang)
	t.Cleanup(func() { UseSubprocess("") })
	old := pdfTimeout
	pdfTimeout = 300 * time.Millisecond
	t.Cleanup(func() { pdfTimeout = old })
	start := time.Now()
	_, err := Convert(minimalPDF("T", "Hello"))
	if reason.Of(err) != reason.ExtractTimeout {
		t.Fatalf("err = %v, want extract_timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v: the child was not killed at the deadline", d)
	}
}

// TestPDFInProcessSizeCap: read in process, a PDF over maxPDFInProcess is
// refused before the library sees it.
func TestPDFInProcessSizeCap(t *testing.T) {
	body := append(minimalPDF("T", "Hello"), bytes.Repeat([]byte("%padding\n"), maxPDFInProcess/9+1)...)
	_, err := Convert(body)
	if reason.Of(err) != reason.EmptyContent || !strings.Contains(err.Error(), "in process") {
		t.Fatalf("err = %v, want empty_content naming the in-process cap", err)
	}
}

// BenchmarkConvertPDF: the cost of the child process per PDF (a start of
// this binary, the PDF over a pipe, the result as JSON) next to reading in
// process.
func BenchmarkConvertPDF(b *testing.B) {
	body := minimalPDF("T", "Hello PDF world", "Second line of text")
	for _, mode := range []string{"in-process", "subprocess"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "subprocess" {
				if !pdfChildLimited {
					b.Skip("Linux only")
				}
				exe, err := os.Executable()
				if err != nil {
					b.Fatal(err)
				}
				UseSubprocess(exe)
				defer UseSubprocess("")
			}
			for b.Loop() {
				if _, err := Convert(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
