package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content/pdftext/pdftest"
)

// onePagePDF is a valid one-page PDF showing text, padded with comment
// lines to at least pad bytes.
func onePagePDF(text string, pad int) []byte {
	content := fmt.Sprintf("BT /F1 18 Tf 72 720 Td (%s) Tj ET\n", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var header strings.Builder
	header.WriteString("%PDF-1.4\n")
	for header.Len() < pad {
		header.WriteString("% padding padding padding padding padding padding padding padding\n")
	}
	return pdftest.Assemble(header.String(), objs, "")
}

// TestExtractPDFInChildProcess (issue 17 item 1): the gatehouse binary reads
// a PDF in a child process of itself (internal/content/pdftext/pdfchild.go). A
// 17 MiB file is over the in-process cap (16 MiB, for programs that embed
// the package), so it reads only through the child.
func TestExtractPDFInChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := gatehouseBinary(t)
	small := onePagePDF("Small PDF through the gates", 0)
	big := onePagePDF("Big PDF through the gates", 17<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		if r.URL.Path == "/big.pdf" {
			w.Write(big)
			return
		}
		w.Write(small)
	}))
	defer srv.Close()
	home := t.TempDir()
	cfg := "security:\n  allow_private_urls: true\nweb:\n  direct:\n    max_body_bytes: 33554432\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/small.pdf", "Small PDF through the gates"},
		{"/big.pdf", "Big PDF through the gates"},
	} {
		cmd := exec.Command(bin, "extract", "--json", srv.URL+tc.path)
		cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+home)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("gatehouse extract %s: %v\n%s\n%s", tc.path, err, out, stderr.String())
		}
	}
}
