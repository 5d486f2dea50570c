package main

import (
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

// wantsJSON reports whether the command line asks for JSON output: a
// "--json" or "--json=BOOL" (true) argument before any "--" terminator. It
// reads the raw arguments, so it also holds when cobra could not parse them
// (a usage error).
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--json="); ok {
			b, err := strconv.ParseBool(v)
			return err == nil && b
		}
	}
	return false
}

// errorJSON is the JSON printed for a failed command under --json: the
// shape of a whole-call refusal of web_extract (web.ExtractResponse):
// {"success": false, "error": MESSAGE, "reason": CODE}.
type errorJSON struct {
	Success bool        `json:"success"`
	Error   string      `json:"error"`
	Reason  reason.Code `json:"reason"`
}

// writeErrorJSON prints err on w as errorJSON; code is reason.UsageError for
// usage errors, else the *reason.Error's code. It reports false (and prints
// nothing) for an error without a code, which run prints as text.
func writeErrorJSON(w io.Writer, err error, usage bool) bool {
	out := errorJSON{Error: err.Error()}
	if usage {
		out.Reason = reason.UsageError
	} else if re := reason.As(err); re != nil {
		out.Reason = re.Code
	} else {
		return false
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out) == nil
}

// routeStdlibLog makes the log package's default logger (which net/http's
// Client and Server, and third-party code calling log.Printf, write to:
// "http: TLS handshake error from …", "RoundTripper returned a response &
// error …") write through a structured slog.TextHandler on stderr instead
// of printing bare lines. An http.Server whose ErrorLog is nil logs there
// too. The returned function restores the previous defaults (run is called
// repeatedly in one process by the tests).
func routeStdlibLog(stderr io.Writer) (restore func()) {
	prev, prevOut, prevFlags, prevPrefix := slog.Default(), log.Writer(), log.Flags(), log.Prefix()
	slog.SetDefault(newLogger(stderr))
	return func() {
		slog.SetDefault(prev)
		log.SetOutput(prevOut)
		log.SetFlags(prevFlags)
		log.SetPrefix(prevPrefix)
	}
}

// testHookRun runs in run once the stdlib log is routed (tests log there).
var testHookRun = func() {}

// isUsage reports whether err is a usage error (exit status 2).
func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command")
}

// argsUsageError turns a tool call the registry refused before its handler
// ran (invalid_arguments: a flag value outside the tool's input schema, such
// as --render sometimes or --max-age -5) into a usage error: exit status 2
// and, under --json, {"success": false, "error": …, "reason": "usage_error"}
// (docs/reasons.md). Any other refusal keeps its own code and exit status 1.
func argsUsageError(res *tools.Result) error {
	o, ok := res.Value.(tools.Outcome)
	if !ok {
		return exitError{1}
	}
	if o.Reason == reason.InvalidArguments {
		return usageError{errors.New(o.Error)}
	}
	return reason.New(o.Reason, "", o.Error)
}
