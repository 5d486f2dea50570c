// Command gatehouse is the CLI of Gatehouse, the web-access layer for AI agents:
// extract pages to markdown behind SSRF/secret/policy gates, check URLs against
// those gates, and read or change the configuration.
//
// Exit status: 0 success, 1 refused or failed, 2 usage error, 128+signal
// (130 SIGINT, 143 SIGTERM) after an interrupted extract.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gatehouse-dev/gatehouse/internal/content"
)

// usageError marks errors that should exit with status 2.
type usageError struct{ error }

// exitError carries an exit status without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	// A child started to read one PDF under memory and CPU limits
	// (internal/content/pdftext/pdfchild.go) does that and exits here.
	content.ServePDFSubprocessIfAsked()
	if exe, err := os.Executable(); err == nil {
		content.UsePDFSubprocess(exe)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI with args and returns the exit status.
// A usage error or an error with a reason code is printed by printFailure
// ("FAILED [reason]: message" on stderr), or under --json as a JSON error
// object on stdout (errout.go), with the same exit status; any other error
// as "gatehouse: message" on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	logs := newLogs(stderr)
	defer routeStdlibLog(logs)()
	testHookRun()
	root := newRootLogs(stdout, stderr, logs, args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	usage := isUsage(err)
	switch code := failureCode(err, usage); {
	case code == "":
		fmt.Fprintln(stderr, "gatehouse:", err)
	case wantsJSON(args):
		writeErrorJSON(stdout, err, usage)
	default:
		printFailure(stderr, code, failureMessage(err))
	}
	if usage {
		return 2
	}
	return 1
}
