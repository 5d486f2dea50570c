package browser

import (
	"slices"
	"testing"
)

func TestStringLiteralsLexer(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`document["coo" + "kie"]`, []string{"coo", "kie"}},
		{"`a${x}b${y}c`", []string{"a", "b", "c"}},
		{"`fe${''}tch`", []string{"fe", "", "tch"}},
		{`/"/.test(a) || d["coo"+"kie"]`, []string{"coo", "kie"}}, // regexp literal, not a string
		{`a / 2 / b + "x"`, []string{"x"}},                        // divisions
		{`// "not" a literal` + "\n'yes'", []string{"yes"}},       // comments skipped
		{`'\x63\u006f\u{6f}kie'`, []string{"cookie"}},
		{`"unterminated`, []string{"unterminated"}}, // lexer error → plain scan added
	} {
		if got := StringLiterals(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("StringLiterals(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestEvalDeniedDecodedIdentifiersAndTemplates(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{`f\u0065tch('/x')`, "network request"},           // escaped identifier is still fetch
		{`document.c\u006fokie`, "document.cookie"},       // escaped property name
		{"window[`fe${''}tch`]('/x')", "network request"}, // template pieces joined
		{`/"/.test(a) || document["coo"+"kie"]`, "document.cookie"},
		{`document /* cookie? no */ .title`, "document.cookie"}, // raw text still matched whole-word (spec)
		{`/'/.test(location.hash)`, ""},
		{`a / b / c`, ""},
	} {
		if got := EvalDenied(c.expr, true, false); got != c.want {
			t.Errorf("EvalDenied(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}
