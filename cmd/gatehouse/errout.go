package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

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
	out := errorJSON{Error: failureMessage(err)}
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
func routeStdlibLog(l *logs) (restore func()) {
	prev, prevOut, prevFlags, prevPrefix := slog.Default(), log.Writer(), log.Flags(), log.Prefix()
	slog.SetDefault(l.std)
	// A dependency's log.Printf is usually a failure ("http: TLS handshake
	// error"): it is logged at warn, so the default level keeps it.
	prevLevel := slog.SetLogLoggerLevel(slog.LevelWarn)
	return func() {
		slog.SetLogLoggerLevel(prevLevel)
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

// failureCode returns the reason code a failed command reports: usage_error
// for a usage error, the code of a *reason.Error in err's chain, else ""
// (an error without a code, such as a listener that cannot bind).
func failureCode(err error, usage bool) reason.Code {
	if usage {
		return reason.UsageError
	}
	if re := reason.As(err); re != nil {
		return re.Code
	}
	return ""
}

// failureMessage is the message printed for err: a *reason.Error's own
// message (never its wrapped cause), else err's text.
func failureMessage(err error) string {
	var ue usageError
	if errors.As(err, &ue) {
		return ue.Error()
	}
	if re := reason.As(err); re != nil && re.Message != "" {
		return re.Message
	}
	return err.Error()
}

// printFailure is the one text-mode printer of a failed command, whichever
// command failed and however (a refusal with a reason code, a tool result
// refused as a whole, a usage error): one line "FAILED [reason]: message"
// on w (stderr), continued by any further lines of the message (a usage
// line). Under --json the same facts are printed as errorJSON instead.
func printFailure(w io.Writer, code reason.Code, msg string) {
	fmt.Fprintf(w, "FAILED [%s]: %s\n", code, msg)
}

// refusal returns the code and message of a tool result that refuses the
// whole call: every tool's refusal has the shape {"success": false,
// "error": MESSAGE, "reason": CODE} (tools.Outcome, DESIGN §4), whether the
// registry refused the call before its handler ran or the handler did.
func refusal(res *tools.Result) (reason.Code, string) {
	var o tools.Outcome
	if b, err := json.Marshal(res.Value); err == nil {
		_ = json.Unmarshal(b, &o)
	}
	if o.Reason == "" {
		o.Reason = reason.ToolFailed
	}
	return o.Reason, o.Error
}

// cliNames maps the input properties of each tool the CLI calls to the
// flag or argument a person types for it, so that a refusal of an argument
// names what to change on the command line ("--render"), not a schema
// property ("render") or a Go type.
var cliNames = map[string]map[string]string{
	tools.WebExtract:      {"urls": "URL", "char_limit": "--char-limit", "render": "--render", "include_links": "--links", "max_age_s": "--max-age"},
	tools.WebSearch:       {"query": "QUERY", "limit": "--limit"},
	tools.WebRead:         {"path": "PATH", "offset": "--offset", "limit": "--limit"},
	tools.WebCheck:        {"urls": "URL", "for": "--for", "backend": "--backend"},
	tools.BrowserNavigate: {"url": "URL"},
}

// invalidArgsText matches the message of an invalid_arguments refusal
// (tools.invalidArgs): the tool, the property (with an array index
// "urls/2"), the validator's words and the schema hint meant for a model.
var invalidArgsText = regexp.MustCompile(`^Invalid arguments for ([a-z_]+): ([a-z_]+)(?:/\d+)?: (.*?)(?:\. Check the tool's input schema\.)?$`)

// cliArgsMessage rewrites an invalid_arguments message of tool for the
// command line: "--render: sometimes is not one of [auto always never]"
// and a pointer to the command's help, instead of the property name and
// the hint to read the tool's input schema. A message naming no property
// of cliNames is returned with only the hint replaced.
func cliArgsMessage(tool, msg, cmdPath string) string {
	help := fmt.Sprintf("Run '%s --help' for usage.", cmdPath)
	if m := invalidArgsText.FindStringSubmatch(msg); m != nil {
		if name, ok := cliNames[tool][m[2]]; ok && m[1] == tool {
			return fmt.Sprintf("%s: %s\n%s", name, m[3], help)
		}
	}
	return strings.TrimSuffix(msg, " Check the tool's input schema.") + "\n" + help
}

// toolFailure turns a tool result refused as a whole into the error the
// command returns (run prints it with printFailure, or as errorJSON under
// --json): an invalid_arguments refusal (a flag value outside the tool's
// input schema, such as --render sometimes or --max-age -5) is a usage
// error (exit status 2) whose message names the flag (cliArgsMessage); any
// other refusal keeps its own code (exit status 1).
func toolFailure(tool string, res *tools.Result, cmdPath string) error {
	code, msg := refusal(res)
	if code == reason.InvalidArguments {
		return usageError{errors.New(cliArgsMessage(tool, msg, cmdPath))}
	}
	return reason.New(code, "", msg)
}

// flagErrorText describes a flag the command line could not parse in the
// flag's terms: pflag reports a bad value with the Go parser's words
// (`invalid argument "abc" for "--char-limit" flag: strconv.ParseInt:
// parsing "abc": invalid syntax`); this says `--char-limit "abc": want an
// integer`. Other flag errors (unknown flag, missing value) are kept.
func flagErrorText(err error) string {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) || ive.GetFlag() == nil {
		return err.Error()
	}
	f := ive.GetFlag()
	return fmt.Sprintf("--%s %q: want %s", f.Name, ive.GetValue(), flagKind(f.Value.Type()))
}

// flagKind names what a flag of pflag type typ accepts.
func flagKind(typ string) string {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "true or false (or the flag alone for true)"
	case "duration":
		return "a duration such as 30s, 5m or 1h"
	}
	return "a value of type " + typ
}
