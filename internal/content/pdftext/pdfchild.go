package pdftext

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// PDFs in a child process. The PDF library can be driven by a hostile file
// to allocate far more than the file's size or to spin; in process the
// only bounds are the page and stream limits of pdf.go and a deadline
// after which the reading goroutine is abandoned (it stops at its next
// read of the file). A program that calls UseSubprocess reads each PDF
// in a new process instead, running its own executable with
// pdfSubprocessEnv set: the child limits its own address space
// (RLIMIT_AS, pdfChildMemory above what it had at start) and CPU time
// (RLIMIT_CPU), reads the PDF from stdin and writes the result as JSON to
// stdout; the parent kills it at pdfTimeout. The gatehouse binary does
// this (cmd/gatehouse main).

// pdfSubprocessEnv marks a child started to read one PDF; its value is
// "MEMORY_BYTES:CPU_SECONDS".
const pdfSubprocessEnv = "GATEHOUSE_PDF_CHILD"

var (
	// pdfSubprocess is the executable UseSubprocess named, nil for in
	// process.
	pdfSubprocess atomic.Pointer[string]
	// pdfChildMemory is the address space the child may add to what it
	// has at start; pdfChildCPU its CPU seconds. Variables for tests.
	pdfChildMemory int64 = 1 << 30
	pdfChildCPU          = 30
	// maxPDFChildOutput caps the child's stdout (the extracted text).
	maxPDFChildOutput = 64 << 20
)

// UseSubprocess makes Convert read every PDF in a child process running
// exe (normally os.Executable()), which must call ServeSubprocessIfAsked
// first thing in main. exe "" goes back to reading in process, as does
// any exe where the child cannot limit itself (not Linux). Safe for
// concurrent use.
func UseSubprocess(exe string) {
	if exe == "" || !pdfChildLimited {
		pdfSubprocess.Store(nil)
		return
	}
	pdfSubprocess.Store(&exe)
}

// ServeSubprocessIfAsked returns at once unless this process was started
// by UseSubprocess's Convert to read a PDF. Then it limits its address
// space and CPU time, reads the PDF from stdin, writes the result to stdout
// and exits the process (status 0 for a result or a refusal, 1 when it
// cannot read its input or set its limits).
func ServeSubprocessIfAsked() {
	spec, ok := os.LookupEnv(pdfSubprocessEnv)
	if !ok {
		return
	}
	os.Exit(servePDFChild(spec, os.Stdin, os.Stdout))
}

// pdfChildResult is the child's stdout.
type pdfChildResult struct {
	Title    string      `json:"title,omitempty"`
	Markdown string      `json:"markdown,omitempty"`
	Pages    int         `json:"pages,omitempty"`
	Code     reason.Code `json:"code,omitempty"`
	Message  string      `json:"message,omitempty"`
}

func servePDFChild(spec string, in io.Reader, out io.Writer) int {
	memStr, cpuStr, _ := strings.Cut(spec, ":")
	mem, err1 := strconv.ParseInt(memStr, 10, 64)
	cpu, err2 := strconv.Atoi(cpuStr)
	if err1 != nil || err2 != nil || mem <= 0 || cpu <= 0 {
		fmt.Fprintf(os.Stderr, "gatehouse: %s=%q: want MEMORY_BYTES:CPU_SECONDS\n", pdfSubprocessEnv, spec)
		return 1
	}
	if err := limitSelf(mem, cpu); err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse: PDF child:", err)
		return 1
	}
	// Collect garbage harder as the heap nears the address-space limit
	// (the Go heap and its GC's headroom live in that space).
	debug.SetMemoryLimit(mem / 2)
	body, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse: PDF child: reading stdin:", err)
		return 1
	}
	doc, err := readPDFRecover(bytes.NewReader(body), int64(len(body)))
	res := pdfChildResult{Title: doc.Title, Markdown: doc.Markdown, Pages: doc.Pages}
	if err != nil {
		res = pdfChildResult{Code: reason.Of(err), Message: err.Error()}
		var re *reason.Error
		if errors.As(err, &re) {
			res.Message = re.Message
		}
		if res.Code == "" {
			res.Code = reason.EmptyContent
		}
	}
	if err := json.NewEncoder(out).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse: PDF child: writing stdout:", err)
		return 1
	}
	return 0
}

// convertPDFSubprocess reads body in a child process running exe (see
// UseSubprocess). A child killed at pdfTimeout or by its CPU limit
// gives reason.ExtractTimeout, one out of memory reason.EmptyContent.
func convertPDFSubprocess(exe string, body []byte) (Document, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pdfTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%d", pdfSubprocessEnv, pdfChildMemory, pdfChildCPU))
	cmd.Stdin = bytes.NewReader(body)
	stdout := &capWriter{max: maxPDFChildOutput}
	stderr := &capWriter{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return Document{}, pdfTimeoutError()
	}
	if err == nil && !stdout.over {
		var res pdfChildResult
		if jerr := json.Unmarshal(stdout.b.Bytes(), &res); jerr == nil {
			if res.Code != "" {
				return Document{}, reason.New(res.Code, "", res.Message)
			}
			return Document{Title: res.Title, Markdown: res.Markdown, Pages: res.Pages}, nil
		}
	}
	msg := stderr.b.String()
	switch {
	case stdout.over:
		return Document{}, reason.Newf(reason.EmptyContent, "", "the PDF's text is longer than %d MiB, so it was not read%s", maxPDFChildOutput>>20, pdfFix)
	case strings.Contains(msg, "out of memory") || strings.Contains(msg, "cannot allocate memory") ||
		strings.Contains(msg, "pthread_create failed") || // a thread's stack is address space too
		strings.Contains(msg, "too many address space collisions"): // the race detector's heap
		return Document{}, reason.Newf(reason.EmptyContent, "", "reading the PDF needed more than %d MiB of memory (a hostile file?), so it was stopped%s", pdfChildMemory>>20, pdfFix)
	case strings.Contains(msg, "SIGXCPU") || exitedBySignal(err, "killed") || exitedBySignal(err, "CPU time limit exceeded"):
		return Document{}, reason.Newf(reason.ExtractTimeout, "", "reading the PDF used more than %d s of CPU time, so it was stopped%s", pdfChildCPU, pdfFix)
	}
	return Document{}, reason.Wrap(reason.EmptyContent, "", "the PDF could not be read (the reader failed)"+pdfFix, fmt.Errorf("PDF child: %v: %s", err, firstLine(msg)))
}

func exitedBySignal(err error, sig string) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && strings.Contains(ee.Error(), "signal: "+sig)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// capWriter keeps the first max bytes written to it and notes whether
// more came.
type capWriter struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); len(p) > room {
		w.b.Write(p[:max(room, 0)])
		w.over = true
		return len(p), nil
	}
	return w.b.Write(p)
}
