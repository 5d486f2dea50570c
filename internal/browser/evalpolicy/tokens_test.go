package evalpolicy

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
		if got := Denied(c.expr, true, false); got != c.want {
			t.Errorf("Denied(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

// Code built at run time is refused under browser.restrict_evaluate; normal
// expressions that only contain the words are not (newcomer review S7).
func TestEvalDeniedDynamicCode(t *testing.T) {
	const dyn = "dynamic code (eval, the Function constructor or a string timer)"
	for _, c := range []struct{ expr, want string }{
		{`eval(atob('ZG9jdW1lbnQuY29va2ll'))`, dyn},
		{`(0, eval)("1+1")`, dyn},
		{`window.eval("2")`, dyn},
		{`window['eval']("2")`, dyn},
		{`e\u0076al("2")`, dyn},
		{`Function(atob('cmV0dXJuIDE='))()`, dyn},
		{`new Function("return 1")()`, dyn},
		{`[].constructor.constructor("return 1")()`, dyn},
		{`[]["constructor"]["constructor"]("return 1")()`, dyn},
		{`setTimeout("alert(1)", 0)`, dyn},
		{"setInterval(`x()`, 10)", dyn},
		{`eval(`, dyn}, // lexer error: the plain pattern decides
		// Normal expressions: no false positives.
		{`document.querySelector('#eval').textContent`, ""},
		{`[...document.querySelectorAll('.evaluation')].length`, ""},
		{`(function () { return document.title })()`, ""},
		{`[1, 2].map(function (x) { return x * 2 })`, ""},
		{`document.body.constructor.name`, ""},
		{`setTimeout(() => console.log('done'), 10)`, ""},
		{`atob('aGVsbG8=')`, ""},
		{`JSON.stringify({evaluate: 1, fn: "Function"})`, ""},
		{`document.title.includes("eval")`, ""},
		{`let retrieval = 1; retrieval`, ""},
		{`typeof Function`, ""},
	} {
		if got := Denied(c.expr, true, false); got != c.want {
			t.Errorf("Denied(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
	if got := Denied(`eval("1")`, false, false); got != "" {
		t.Errorf("denylist off: %q", got)
	}
	if got := Denied(`eval("1")`, true, true); got != "" {
		t.Errorf("allow_unsafe_evaluate: %q", got)
	}
}

// The denylist never panics on any input, refuses nothing when it is off,
// and the lexer and the plain scan agree on well-formed literals.
func FuzzEvalDenied(f *testing.F) {
	for _, s := range []string{`eval(atob("ZG9j"))`, `document["coo"+"kie"]`, "`fe${''}tch`", `/"/.test(a)`, `"unterminated`,
		`[].constructor.constructor("x")()`, `setTimeout("x", 1)`, `e\u0076al(1)`, `a / b / c`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if got := Denied(expr, false, false); got != "" {
			t.Fatalf("denylist off refused %q: %s", expr, got)
		}
		Denied(expr, true, false)
		StringLiterals(expr)
	})
}
