package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"
)

// LoadEnv reads <home>/.env, the API-key file, into a map.
//
// Format, one entry per line: KEY=VALUE. Blank lines and lines starting with
// "#" are skipped; an "export " prefix is allowed; keys must look like shell
// variable names ([A-Za-z_][A-Za-z0-9_]*). Values are trimmed. A value in
// double quotes may use the escapes \n \t \r \" \\ (other escapes are kept
// as written); a value in single quotes is literal; after the closing quote
// only a "# comment" may follow. An unquoted value ends at " #" (an inline
// comment). A later line overrides an earlier one. A UTF-8 BOM and CRLF line
// ends are tolerated.
//
// A malformed line (no "=", bad key name, unterminated quote, text after a
// closing quote) is skipped with a Warning carrying its line. A file that
// others can read and that holds secrets (secretEnvNames: API keys, tokens,
// passwords) gives a Warning naming those variables and chmod 600 (not on
// Windows); one holding only endpoints and settings does not. Values are
// never put in warnings.
//
// A missing file gives an empty map and no error; an unreadable file, or one
// over 1 MiB, is an error. The returned map is never nil.
func LoadEnv(home string) (map[string]string, []Warning, error) {
	path := EnvPath(home)
	env := map[string]string{}
	data, err := readLimited(path)
	if errors.Is(err, fs.ErrNotExist) {
		return env, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var warns []Warning
	text := strings.TrimPrefix(string(data), "\ufeff")
	for i, line := range strings.Split(text, "\n") {
		key, val, msg := parseEnvLine(line)
		if msg != "" {
			warns = append(warns, Warning{File: path, Line: i + 1, Column: 1, Key: key, Message: msg})
			continue
		}
		if key != "" {
			env[key] = val
		}
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			if names := secretEnvNames(env); len(names) > 0 {
				warns = append([]Warning{{File: path, Message: fmt.Sprintf(
					"file holds secrets (%s) but is readable by other users (mode %04o); run chmod 600 %s",
					strings.Join(names, ", "), fi.Mode().Perm(), path)}}, warns...)
			}
		}
	}
	return env, warns, nil
}

// secretEnvNames returns, sorted, the names of the variables of env whose
// value is a secret: a non-empty value of a variable named like a
// credential (…KEY, …TOKEN, …SECRET, …PASSWORD, …AUTH…, …CREDENTIAL…,
// which covers every vendor key variable: TAVILY_API_KEY,
// BRAVE_SEARCH_API_KEY, GATEHOUSE_MCP_TOKEN), or a URL carrying a password
// in its userinfo (SEARXNG_URL=https://user:pass@host). A file holding
// only endpoints and settings holds nothing to hide, and gets no
// permission warning. Only names are returned, never values.
func secretEnvNames(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if v == "" {
			continue
		}
		u := strings.ToUpper(k)
		named := strings.HasSuffix(u, "KEY") || strings.Contains(u, "TOKEN") || strings.Contains(u, "SECRET") ||
			strings.Contains(u, "PASSWORD") || strings.Contains(u, "PASSWD") || strings.Contains(u, "AUTH") || strings.Contains(u, "CREDENTIAL")
		if named || urlHasPassword(v) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// urlHasPassword reports whether v looks like "scheme://user:password@host…".
func urlHasPassword(v string) bool {
	_, rest, ok := strings.Cut(v, "://")
	if !ok {
		return false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	return at >= 0 && strings.Contains(rest[:at], ":")
}

// parseEnvLine parses one .env line. It returns key "" for a blank or
// comment line, and a non-empty msg for a malformed one.
func parseEnvLine(line string) (key, val, msg string) {
	s := strings.TrimSpace(strings.TrimSuffix(line, "\r"))
	if s == "" || strings.HasPrefix(s, "#") {
		return "", "", ""
	}
	if rest, ok := strings.CutPrefix(s, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		s = strings.TrimSpace(rest)
	}
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", `not a KEY=VALUE line; skipped`
	}
	key = strings.TrimSpace(k)
	if !validEnvName(key) {
		return "", "", fmt.Sprintf("%q is not a valid variable name; line skipped", key)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return key, "", ""
	}
	switch q := v[0]; q {
	case '"', '\'':
		body, rest, closed := scanQuoted(v[1:], q)
		if !closed {
			return key, "", "unterminated quoted value; line skipped (multi-line values are not supported)"
		}
		rest = strings.TrimSpace(rest)
		if rest != "" && !strings.HasPrefix(rest, "#") {
			return key, "", "unexpected text after the closing quote; line skipped"
		}
		return key, strings.TrimSpace(body), ""
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	} else if i := strings.Index(v, "\t#"); i >= 0 {
		v = v[:i]
	}
	return key, strings.TrimSpace(v), ""
}

// scanQuoted reads up to the closing quote q; for double quotes it decodes
// the usual escapes.
func scanQuoted(s string, q byte) (body, rest string, closed bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == q {
			return b.String(), s[i+1:], true
		}
		if q == '"' && c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(s[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(c)
	}
	return "", "", false
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Lookup returns the value of key, trimmed: from env (the map from
// [LoadEnv]) when it holds a non-empty value there, else from the process
// environment (spec §A4.1: the config-aware layer first, then os.Getenv).
// "" means unset. env may be nil.
//
// Lookup is for credentials and endpoints (API keys, base URLs); no gate
// reads a toggle through it.
func Lookup(env map[string]string, key string) string {
	if v := strings.TrimSpace(env[key]); v != "" {
		return v
	}
	return strings.TrimSpace(os.Getenv(key))
}
