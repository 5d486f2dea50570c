package browser

import _ "embed"

// visibilityJS is the one judgement of what a sighted reader of a page would
// not see (visibility.js), shared by render.js (web_extract's render step)
// and page.js (the browser tools' snapshot).
//
//go:embed visibility.js
var visibilityJS string

func init() {
	renderJS = withVisibility(renderJS)
	pageJS = withVisibility(pageJS)
}

// withVisibility returns the in-page function fn (a function expression, as
// Runtime.callFunctionOn takes) wrapped so that its body sees the object
// `visibility` that visibility.js returns; this and the arguments are
// passed through.
func withVisibility(fn string) string {
	return "function (...args) {\nconst visibility = (" + visibilityJS + ")();\nreturn (" + fn + ").apply(this, args);\n}"
}
