// Gatehouse patch (third_party/README.md): package-level regexps compile on
// first use instead of in package init, which Go runs on every start of every
// program that links this package. Modelled on the Go distribution's
// internal/lazyregexp; the compiled *regexp.Regexp and so every match are
// the same as before.

package pagination

import (
	"regexp"
	"sync"
)

// lazyRegexp is a *regexp.Regexp compiled on first use.
type lazyRegexp struct {
	expr string
	once sync.Once
	rx   *regexp.Regexp
}

// lazyMustCompile is regexp.MustCompile deferred to the first use; an
// invalid expression panics there instead of in package init.
func lazyMustCompile(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (r *lazyRegexp) re() *regexp.Regexp {
	r.once.Do(func() { r.rx = regexp.MustCompile(r.expr) })
	return r.rx
}

func (r *lazyRegexp) String() string                       { return r.expr }
func (r *lazyRegexp) Match(b []byte) bool                  { return r.re().Match(b) }
func (r *lazyRegexp) MatchString(s string) bool            { return r.re().MatchString(s) }
func (r *lazyRegexp) FindString(s string) string           { return r.re().FindString(s) }
func (r *lazyRegexp) FindStringIndex(s string) []int       { return r.re().FindStringIndex(s) }
func (r *lazyRegexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }
func (r *lazyRegexp) FindAllString(s string, n int) []string {
	return r.re().FindAllString(s, n)
}
func (r *lazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return r.re().FindAllStringIndex(s, n)
}
func (r *lazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}
func (r *lazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.re().FindAllStringSubmatchIndex(s, n)
}
func (r *lazyRegexp) ReplaceAllString(src, repl string) string {
	return r.re().ReplaceAllString(src, repl)
}
func (r *lazyRegexp) ReplaceAllLiteralString(src, repl string) string {
	return r.re().ReplaceAllLiteralString(src, repl)
}
func (r *lazyRegexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.re().ReplaceAllStringFunc(src, repl)
}
func (r *lazyRegexp) Split(s string, n int) []string { return r.re().Split(s, n) }
func (r *lazyRegexp) SubexpNames() []string          { return r.re().SubexpNames() }
