package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// KeyError is returned by [Load] when config.yaml parses but says something
// that would silently switch a protection off: a problem inside
// security.website_blocklist (an unknown key such as "domain", a value of
// the wrong type, a dropped entry, the block not being a mapping), a
// security block that is not a mapping, a security key written in the
// wrong place ("website_blocklist" at the top level or under web, or in a
// later YAML document, which is never read), or an unknown key under
// security that looks like a misspelt website_blocklist. Fix names
// what to do. The web tools refuse to run on such a file (fail closed, see
// [Invalid]).
type KeyError struct {
	File         string
	Line, Column int
	Key          string // dotted key where the problem is
	Message      string
	Fix          string
}

// Error returns "file:line:col: key: message".
func (e *KeyError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Column, e.Key, e.Message)
}

// guardKey reports whether a problem at key can weaken the website policy
// or the SSRF gate: the security block itself, anything inside
// security.website_blocklist, and security.fake_ip_ranges (an entry that
// does not parse would be dropped, leaving that range's answers judged as
// something other than what the file declares).
func guardKey(key string) bool {
	return key == "security" || key == "security.website_blocklist" || strings.HasPrefix(key, "security.website_blocklist.") || key == "security.fake_ip_ranges"
}

// securityHome maps a security key name to where it belongs, for keys found
// in the wrong place ("" when name is no such key).
func securityHome(name string) string {
	switch name {
	case "security":
		return "security (a top-level block)"
	case "website_blocklist":
		return "security.website_blocklist"
	case "domains", "shared_files":
		return "security.website_blocklist." + name
	case "fake_ip_ranges", "redact_secrets":
		return "security." + name
	}
	return ""
}

// fail records the first fail-closed problem of a load, and marks key so
// that the warning written for the same problem ("… ignored", "… those
// entries were dropped") is not printed next to the refusal that
// contradicts it (failedKeys, see parseConfig).
func (l *loader) fail(line, col int, key, msg, fix string) {
	if l.failedKeys == nil {
		l.failedKeys = map[string]bool{}
	}
	l.failedKeys[key] = true
	if l.fatal == nil {
		l.fatal = &KeyError{File: l.file, Line: line, Column: col, Key: key, Message: msg, Fix: fix}
	}
}

// Invalid turns an error of [Load] into the refusal every web tool returns
// while config.yaml is broken (reason config_invalid): it names the file,
// the line:column when known, what is wrong and the fix. Gatehouse fails
// closed here on purpose, a departure from the described system (spec §A8,
// which falls back to defaults so that a typo cannot disable the tools):
// falling back would silently drop a configured website blocklist. The
// message is redacted (urlsafe.Redact). It returns nil for a nil err.
func Invalid(path string, err error) *reason.Error {
	if err == nil {
		return nil
	}
	const stay = " Every web tool refuses to run until then, so a broken file can never silently switch your website blocklist off (`gatehouse doctor` shows the problem; moving the file away runs on built-in defaults)."
	var se *SyntaxError
	var ke *KeyError
	switch {
	case errors.As(err, &se):
		return invalid(fmt.Sprintf(
			"Configuration error: %s:%d:%d is not valid YAML (%s). Fix the file at that line and column.%s",
			se.File, se.Line, se.Column, se.Message, stay), err)
	case errors.As(err, &ke):
		return invalid(fmt.Sprintf(
			"Configuration error: %s:%d:%d: %s: %s. %s%s", ke.File, ke.Line, ke.Column, ke.Key, ke.Message, ke.Fix, stay), err)
	case errors.Is(err, fs.ErrPermission):
		return invalid(fmt.Sprintf(
			"Configuration error: %s cannot be read (permission denied). Make it readable by this user (chmod 600 %s).%s", path, path, stay), err)
	}
	if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
		return invalid(fmt.Sprintf(
			"Configuration error: %s is a directory, not a file. Remove it or replace it with a config.yaml file.%s", path, stay), err)
	}
	return invalid(fmt.Sprintf(
		"Configuration error: %s cannot be read (%s). Fix or replace the file.%s", path, trimPath(err.Error(), path), stay), err)
}

// invalid is the config_invalid refusal with message msg, passed through
// urlsafe.Redact: the YAML parser quotes the text it stumbled on (a
// duplicate key, an unterminated scalar), and a key pasted into the wrong
// line of config.yaml must not be printed back.
func invalid(msg string, err error) *reason.Error {
	return reason.Wrap(reason.ConfigInvalid, "", urlsafe.Redact(msg), err)
}

func trimPath(msg, path string) string {
	msg = strings.TrimPrefix(msg, "config: ")
	return strings.ReplaceAll(msg, path+": ", "")
}
