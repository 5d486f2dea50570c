package browser

import (
	"errors"
	"io"
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
	l := js.NewLexer(parse.NewInputString(expr))
	var b strings.Builder
	prev := js.ErrorToken // start of input: a '/' here begins a regexp
	ok = true
	for {
		tt, data := l.Next()
		if tt == js.ErrorToken {
			if err := l.Err(); err != nil && !errors.Is(err, io.EOF) {
				ok = false
			}
			break
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
		case js.StringToken:
			if len(data) >= 2 {
				lits = append(lits, decodeEscapes(string(data[1:len(data)-1])))
			}
		case js.TemplateToken, js.TemplateStartToken, js.TemplateMiddleToken, js.TemplateEndToken:
			lits = append(lits, decodeEscapes(templatePiece(tt, string(data))))
		case js.IdentifierToken, js.PrivateIdentifierToken:
			if strings.Contains(string(data), `\u`) {
				data = []byte(decodeEscapes(string(data)))
			}
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.Write(data)
		prev = tt
	}
	return lits, b.String(), ok
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
	if js.IsNumeric(tt) {
		return false
	}
	return true
}
