// Package lazyregexp is a thin wrapper over regexp that compiles a
// package-level expression on first use instead of in package init. Go runs
// every linked package's init before main on every start, so a program's
// global regexps cost every command, even `gatehouse --version`
// (docs/benchmarks.md, start-up cost; issue 6 item 13). Modelled on the Go
// distribution's internal/lazyregexp. An invalid expression panics on first
// use instead of at init: every expression must be exercised by a test.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a *regexp.Regexp compiled on first use; its methods are those of
// *regexp.Regexp, with the same results.
type Regexp struct {
	expr string
	once sync.Once
	rx   *regexp.Regexp
}

// Regexp returns the compiled expression, compiling it on the first call.
// It panics if the expression does not compile (as regexp.MustCompile).
func (r *Regexp) Regexp() *regexp.Regexp {
	r.once.Do(func() { r.rx = regexp.MustCompile(r.expr) })
	return r.rx
}

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.expr }

// MatchString is (*regexp.Regexp).MatchString.
func (r *Regexp) MatchString(s string) bool { return r.Regexp().MatchString(s) }

// Match is (*regexp.Regexp).Match.
func (r *Regexp) Match(b []byte) bool { return r.Regexp().Match(b) }

// FindString is (*regexp.Regexp).FindString.
func (r *Regexp) FindString(s string) string { return r.Regexp().FindString(s) }

// FindStringIndex is (*regexp.Regexp).FindStringIndex.
func (r *Regexp) FindStringIndex(s string) []int { return r.Regexp().FindStringIndex(s) }

// FindStringSubmatch is (*regexp.Regexp).FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Regexp().FindStringSubmatch(s) }

// FindStringSubmatchIndex is (*regexp.Regexp).FindStringSubmatchIndex.
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.Regexp().FindStringSubmatchIndex(s)
}

// FindSubmatch is (*regexp.Regexp).FindSubmatch.
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.Regexp().FindSubmatch(b) }

// FindAllString is (*regexp.Regexp).FindAllString.
func (r *Regexp) FindAllString(s string, n int) []string { return r.Regexp().FindAllString(s, n) }

// FindAllStringIndex is (*regexp.Regexp).FindAllStringIndex.
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringIndex(s, n)
}

// FindAllStringSubmatch is (*regexp.Regexp).FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Regexp().FindAllStringSubmatch(s, n)
}

// FindAllStringSubmatchIndex is (*regexp.Regexp).FindAllStringSubmatchIndex.
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringSubmatchIndex(s, n)
}

// FindAllSubmatch is (*regexp.Regexp).FindAllSubmatch.
func (r *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte {
	return r.Regexp().FindAllSubmatch(b, n)
}

// FindAllSubmatchIndex is (*regexp.Regexp).FindAllSubmatchIndex.
func (r *Regexp) FindAllSubmatchIndex(b []byte, n int) [][]int {
	return r.Regexp().FindAllSubmatchIndex(b, n)
}

// ReplaceAllString is (*regexp.Regexp).ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Regexp().ReplaceAllString(src, repl)
}

// ReplaceAllLiteralString is (*regexp.Regexp).ReplaceAllLiteralString.
func (r *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return r.Regexp().ReplaceAllLiteralString(src, repl)
}

// ReplaceAllStringFunc is (*regexp.Regexp).ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Regexp().ReplaceAllStringFunc(src, repl)
}

// Split is (*regexp.Regexp).Split.
func (r *Regexp) Split(s string, n int) []string { return r.Regexp().Split(s, n) }

// SubexpNames is (*regexp.Regexp).SubexpNames.
func (r *Regexp) SubexpNames() []string { return r.Regexp().SubexpNames() }

// New returns a Regexp for expr, compiled on first use. An invalid expr
// panics then, as regexp.MustCompile.
func New(expr string) *Regexp { return &Regexp{expr: expr} }
