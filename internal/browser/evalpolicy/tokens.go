package evalpolicy

import (
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// jsScan tokenizes a JavaScript expression with the ECMAScript lexer of
// github.com/tdewolff/parse/v2/js (regular-expression literals told apart from
// division by the previous token, comments skipped) and returns:
//
//   - lits: the decoded contents of every string literal and every template
//     piece (`a${`, `}b${`, `}c`), in source order (decodeEscapes semantics);
//   - norm: the expression's significant tokens joined by single spaces, with
//     \u escapes in identifiers decoded (so f\u0065tch( reads "fetch (") and
//     comments dropped, for the denylist's word and direct patterns;
//   - ok: false when the lexer failed (an unterminated literal, a stray
//     character); callers then also apply the plain-text scan, failing closed.
//
// Spec §B8.3: literals are single-, double- and back-quoted strings with
// backslash escapes.
func jsScan(expr string) (lits []string, norm string, ok bool) {
	toks, ok := jsTokens(expr)
	var b strings.Builder
	for _, t := range toks {
		switch t.tt {
		case js.StringToken:
			if len(t.text) >= 2 {
				lits = append(lits, decodeEscapes(t.text[1:len(t.text)-1]))
			}
		case js.TemplateToken, js.TemplateStartToken, js.TemplateMiddleToken, js.TemplateEndToken:
			lits = append(lits, decodeEscapes(templatePiece(t.tt, t.text)))
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return lits, b.String(), ok
}

// jsToken is one significant token of an expression.
type jsToken struct {
	tt   js.TokenType
	text string
}

// jsTokens lexes expr with the ECMAScript lexer: the significant tokens
// (white space and comments dropped), a '/' read as a regular-expression
// literal where one may start (regexpAllowedAfter), \u escapes in
// identifiers decoded. ok is false when the lexer failed; the tokens before
// the failure are returned.
func jsTokens(expr string) (toks []jsToken, ok bool) {
	l := js.NewLexer(parse.NewInputString(expr))
	prev := js.ErrorToken // start of input: a '/' here begins a regexp
	ok = true
	for {
		tt, data := l.Next()
		if tt == js.ErrorToken {
			if err := l.Err(); err != nil && !errors.Is(err, io.EOF) {
				ok = false
			}
			return toks, ok
		}
		switch tt {
		case js.WhitespaceToken, js.LineTerminatorToken, js.CommentToken, js.CommentLineTerminatorToken:
			continue
		case js.DivToken, js.DivEqToken:
			if regexpAllowedAfter(prev) {
				if rt, rd := l.RegExp(); rt == js.RegExpToken {
					tt, data = rt, rd
				} else {
					ok = false
				}
			}
		case js.IdentifierToken, js.PrivateIdentifierToken:
			if strings.Contains(string(data), `\u`) {
				data = []byte(decodeEscapes(string(data)))
			}
		}
		toks = append(toks, jsToken{tt, string(data)})
		prev = tt
	}
}

// templatePiece strips a template token's delimiters: ` or } before, ` or ${
// after.
func templatePiece(tt js.TokenType, s string) string {
	if len(s) > 0 && (s[0] == '`' || s[0] == '}') {
		s = s[1:]
	}
	switch tt {
	case js.TemplateToken, js.TemplateEndToken:
		s = strings.TrimSuffix(s, "`")
	default:
		s = strings.TrimSuffix(s, "${")
	}
	return s
}

// regexpAllowedAfter reports whether a '/' after a token of type tt starts a
// regular-expression literal rather than a division: it does after the start of
// input, an operator or punctuator other than a closing ) ] }, and keywords
// such as return or typeof; it does not after an identifier, a literal, this,
// super or a closing bracket (the standard lexer-level heuristic).
func regexpAllowedAfter(tt js.TokenType) bool {
	switch tt {
	case js.ErrorToken:
		return true
	case js.IdentifierToken, js.PrivateIdentifierToken, js.StringToken, js.RegExpToken,
		js.TemplateToken, js.TemplateEndToken,
		js.CloseParenToken, js.CloseBracketToken, js.CloseBraceToken,
		js.ThisToken, js.SuperToken, js.TrueToken, js.FalseToken, js.NullToken,
		js.IncrToken, js.DecrToken:
		return false
	}
	return !js.IsNumeric(tt)
}

// dynamicCode reports whether expression builds code at run time, the way
// a denylist is walked around: eval in any form (eval(…), (0, eval)(…),
// window.eval, window['eval']), the Function constructor (Function(…),
// new Function, x.constructor(…), x['constructor'](…): what
// [].constructor.constructor('…')() reaches), and a string given to
// setTimeout or setInterval. It looks at tokens, not text, so a string or a
// name that only contains these words (querySelector('#eval'),
// evaluation, function () {…}) does not count. Code assembled from pieces
// ('ev' + 'al') is not seen: the denylist is a tripwire, not a boundary
// (CheckEval). When the lexer fails, a plain-text pattern decides.
func dynamicCode(expression string) bool {
	toks, ok := jsTokens(expression)
	if !ok {
		return dynamicCodeRe.MatchString(expression)
	}
	at := func(i int) jsToken {
		if i < 0 || i >= len(toks) {
			return jsToken{tt: js.ErrorToken}
		}
		return toks[i]
	}
	for i, t := range toks {
		name := ""
		switch t.tt {
		case js.IdentifierToken:
			name = t.text
		case js.StringToken:
			// Only as a computed member name: x['eval'], x["constructor"].
			if at(i-1).tt == js.OpenBracketToken && at(i+1).tt == js.CloseBracketToken && len(t.text) >= 2 {
				name = decodeEscapes(t.text[1 : len(t.text)-1])
			}
		}
		next := at(i + 1)
		if t.tt == js.StringToken {
			next = at(i + 2)
		}
		switch name {
		case "eval":
			return true
		case "Function":
			if next.tt == js.OpenParenToken || at(i-1).tt == js.NewToken {
				return true
			}
		case "constructor":
			if next.tt == js.OpenParenToken {
				return true
			}
		case "setTimeout", "setInterval":
			if next.tt == js.OpenParenToken {
				switch at(i + 2).tt {
				case js.StringToken, js.TemplateToken, js.TemplateStartToken:
					return true
				}
			}
		}
	}
	return false
}

// dynamicCodeRe is dynamicCode's fallback for input the lexer rejects.
var dynamicCodeRe = regexp.MustCompile(`\beval\b|\bFunction\s*\(|\bnew\s+Function\b|\bconstructor\s*\(|['"]constructor['"]\s*\]\s*\(|\bset(Timeout|Interval)\s*\(\s*['"` + "`" + `]`)
