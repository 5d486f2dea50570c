package browser

import (
	_ "embed"
	"sync"
)

// visibilityJS is the one judgement of what a sighted reader of a page would
// not see (visibility.js), shared by render.js (web_extract's render step)
// and page.js (the browser tools' snapshot).
//
//go:embed visibility.js
var visibilityJS string

// renderJS and pageJS are render.js and page.js with visibility.js
// spliced in (withVisibility), built on first use: at package init the
// splice cost every start of the CLI 80 KB (cmd/gatehouse TestStartupBudget).
var (
	renderJS = sync.OnceValue(func() string { return withVisibility(renderJSSource) })
	pageJS   = sync.OnceValue(func() string { return withVisibility(pageJSSource) })
)

// withVisibility returns the in-page function fn (a function expression, as
// Runtime.callFunctionOn takes) wrapped so that its body sees the object
// `visibility` that visibility.js returns; this and the arguments are
// passed through.
func withVisibility(fn string) string {
	return "function (...args) {\nconst visibility = (" + visibilityJS + ")();\nreturn (" + fn + ").apply(this, args);\n}"
}
