// Package evalpolicy reads a browser_console expression before it runs
// (spec §B8.3): the opt-in denylist of sensitive primitives and run-time
// built code (Denied), and the http(s):// literals it names (URLLiterals),
// which the browser's navigation gate judges. It tokenizes JavaScript with
// github.com/tdewolff/parse/v2/js and never runs anything; it is a tripwire,
// not the boundary (the egress proxy judges every request the page makes).
package evalpolicy

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
)

// The eval denylist of spec §B8.3: opt-in (browser.restrict_evaluate), it
// blocks the names of sensitive primitives and code built at run time
// (dynamicCode), not exfiltration itself. It is a tripwire, not a boundary:
// JavaScript reaches any primitive without naming it (pieces joined at run
// time, aliases, prototype walks), so a determined expression gets past it.
// The security boundary is the egress proxy, which judges every request the
// page makes, eval-driven ones included, on the dialed IP.
var (
	directPatterns = []struct {
		re     *lazyregexp.Regexp
		reason string
	}{
		{lazyregexp.New(`(?i)document\s*\.\s*cookie`), "document.cookie"},
		{lazyregexp.New(`(?i)localStorage|sessionStorage`), "web storage"},
		{lazyregexp.New(`(?i)indexedDB`), "IndexedDB"},
		{lazyregexp.New(`(?i)caches\s*\.\s*(open|match|keys)`), "Cache Storage"},
		{lazyregexp.New(`(?i)navigator\s*\.\s*(clipboard|credentials|serviceWorker)`), "navigator sensitive API"},
		{lazyregexp.New(`(?i)\b(fetch|XMLHttpRequest|WebSocket|EventSource)\s*\(`), "network request"},
		{lazyregexp.New(`(?i)navigator\s*\.\s*sendBeacon\s*\(`), "network beacon"},
		{lazyregexp.New(`(?is)document\s*\.\s*forms.*value`), "form value extraction"},
		{lazyregexp.New(`(?is)querySelector(All)?\s*\([^)]*(input|textarea|password).*value`), "form value extraction"},
	}
	tokenReasons = []struct{ token, reason string }{
		{"cookie", "document.cookie"},
		{"localStorage", "web storage"}, {"sessionStorage", "web storage"},
		{"indexedDB", "IndexedDB"},
		{"caches", "Cache Storage"},
		{"clipboard", "navigator sensitive API"}, {"credentials", "navigator sensitive API"}, {"serviceWorker", "navigator sensitive API"},
		{"fetch", "network request"}, {"XMLHttpRequest", "network request"}, {"WebSocket", "network request"}, {"EventSource", "network request"},
		{"sendBeacon", "network beacon"},
	}
	tokenWord = func() map[string]*lazyregexp.Regexp {
		m := map[string]*lazyregexp.Regexp{}
		for _, t := range tokenReasons {
			m[t.token] = lazyregexp.New(`(?i)\b` + t.token + `\b`)
		}
		return m
	}()
)

// Denied applies the eval denylist of spec §B8.3 to expression: "" when
// allowed, else the reason (document.cookie, web storage, IndexedDB, Cache
// Storage, navigator sensitive API, network request, network beacon, form value
// extraction). It is off unless restrict is set, and allowUnsafe overrides it.
// Direct patterns are tried first; then each sensitive token blocks when it
// is a whole word of the expression (case-insensitive) or a substring of the
// lower-cased concatenation of every decoded string literal (so
// document["coo"+"kie"] and "co\x6fkie" are caught); then code built at run
// time ("dynamic code": eval, the Function constructor, string timers;
// dynamicCode), so eval(atob('…')) and Function('…')() are refused whatever
// the decoded text names. It is a tripwire: expressions that assemble a name
// from pieces at run time still get past it (the egress proxy is the
// boundary).
func Denied(expression string, restrict, allowUnsafe bool) string {
	if !restrict || allowUnsafe {
		return ""
	}
	// The raw text and the lexer's normalized token stream (identifier
	// escapes decoded, comments dropped) are both matched.
	_, norm, _ := jsScan(expression)
	texts := []string{expression, norm}
	for _, p := range directPatterns {
		for _, x := range texts {
			if p.re.MatchString(x) {
				return p.reason
			}
		}
	}
	joined := strings.ToLower(strings.Join(StringLiterals(expression), ""))
	for _, t := range tokenReasons {
		if tokenWord[t.token].MatchString(expression) || tokenWord[t.token].MatchString(norm) || strings.Contains(joined, strings.ToLower(t.token)) {
			return t.reason
		}
	}
	if dynamicCode(expression) {
		return "dynamic code (eval, the Function constructor or a string timer)"
	}
	return ""
}

// StringLiterals returns the decoded contents of every single-, double- and
// back-quoted string literal in a JavaScript expression, in order. Escapes are
// decoded like Python's unicode-escape (\xHH, \uXXXX, \u{…}, \n, \t, octal,
// …); an undecodable literal is returned raw (spec §B8.3). Literals come from
// a real JavaScript lexer (jsScan: template pieces, regexp literals and
// comments told apart); when it fails on malformed input, the literals of a
// plain quote scan are added too, so a lexer error never hides a literal.
func StringLiterals(expr string) []string {
	lits, _, ok := jsScan(expr)
	if !ok {
		lits = append(lits, plainLiterals(expr)...)
	}
	return lits
}

// plainLiterals is the lexer-free quote scan: every run between matching
// quotes, backslash escapes skipped.
func plainLiterals(expr string) []string {
	var out []string
	for i := 0; i < len(expr); i++ {
		q := expr[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for j < len(expr) && expr[j] != q {
			if expr[j] == '\\' {
				j++
			}
			j++
		}
		end := min(j, len(expr))
		out = append(out, decodeEscapes(expr[i+1:end]))
		i = end
	}
	return out
}

func decodeEscapes(raw string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := raw[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			if i+3 > len(raw) {
				return raw
			}
			n, err := strconv.ParseUint(raw[i+1:i+3], 16, 8)
			if err != nil {
				return raw
			}
			b.WriteRune(rune(n))
			i += 2
		case 'u':
			if i+1 < len(raw) && raw[i+1] == '{' {
				k := strings.IndexByte(raw[i:], '}')
				if k < 0 {
					return raw
				}
				n, err := strconv.ParseUint(raw[i+2:i+k], 16, 32)
				if err != nil || !utf8.ValidRune(rune(n)) {
					return raw
				}
				b.WriteRune(rune(n))
				i += k
				continue
			}
			if i+5 > len(raw) {
				return raw
			}
			n, err := strconv.ParseUint(raw[i+1:i+5], 16, 16)
			if err != nil {
				return raw
			}
			b.WriteRune(rune(n))
			i += 4
		case '0', '1', '2', '3', '4', '5', '6', '7':
			k := i
			for k < len(raw) && k < i+3 && raw[k] >= '0' && raw[k] <= '7' {
				k++
			}
			n, _ := strconv.ParseUint(raw[i:k], 8, 16)
			b.WriteRune(rune(n))
			i = k - 1
		default:
			// \\, \', \", \` and any other escaped character stand for themselves.
			b.WriteByte(e)
		}
	}
	return b.String()
}

// urlLiteralRe finds http(s) URL literals in an expression (spec §B8.3
// pre-screen): up to whitespace, a quote, a backtick, ')', ']', '<' or '>'.
// A Gatehouse fix: a bracketed IPv6 host right after "://" (or after
// userinfo) is part of the literal, so "http://[fd00:ec2::254]/" is read
// whole instead of stopping at its ']' (and then passing as unparseable).
var urlLiteralRe = lazyregexp.New("(?i)https?://(?:[^\\s'\"`)\\]<>/@\\[]*@)?(?:\\[[0-9a-f:.%A-Za-z_~-]*\\])?[^\\s'\"`)\\]<>]*")

// URLLiterals returns every http(s):// literal of expression, with trailing
// '.', ',' and ';' trimmed (spec §B8.3).
func URLLiterals(expression string) []string {
	out := []string{}
	for _, m := range urlLiteralRe.FindAllString(expression, -1) {
		if m = strings.TrimRight(m, ".,;"); m != "" && !strings.HasSuffix(m, "://") {
			out = append(out, m)
		}
	}
	return out
}
