// Package htmldate is Gatehouse's stand-in for
// github.com/markusmobius/go-htmldate v1.9.1, swapped in by a `replace`
// directive in Gatehouse's go.mod (see README.md next to this file).
//
// go-trafilatura imports go-htmldate for publish-date metadata. The real
// package imports github.com/markusmobius/go-dateparser, whose package
// init builds the locale tables of ~200 languages: about 80 MB and
// 0.2–0.6 s of CPU before main runs, on every Gatehouse start (measured
// with GODEBUG=inittrace=1). Gatehouse never asks for a date: it calls
// go-trafilatura with HtmlDateMode: trafilatura.Disabled, so
// FromDocument is never reached. This package keeps exactly the API
// go-trafilatura v1.12.2 compiles against (Options, Result, FromDocument)
// and no date extraction at all.
package htmldate

import (
	"errors"
	"time"

	"golang.org/x/net/html"
)

// ErrDisabled is returned by FromDocument: date extraction is not built
// into Gatehouse.
var ErrDisabled = errors.New("htmldate: date extraction is not built into Gatehouse (go-htmldate replaced; see third_party/go-htmldate/README.md)")

// Options mirrors go-htmldate v1.9.1's Options, minus DateParserConfig
// (a go-dateparser type, unused by go-trafilatura). Only the fields
// go-trafilatura sets are needed; the rest are kept so that the struct
// reads like the original.
type Options struct {
	// ExtractTime asks for the time of day as well as the date.
	ExtractTime bool
	// UseOriginalDate prefers the publication date over the last update.
	UseOriginalDate bool
	// URL is the page's URL.
	URL string
	// MinDate is the earliest acceptable date.
	MinDate time.Time
	// MaxDate is the latest acceptable date.
	MaxDate time.Time
	// EnableLog turns go-htmldate's logging on.
	EnableLog bool
	// SkipExtensiveSearch skips the pattern search over the text.
	SkipExtensiveSearch bool
	// DeferUrlExtractor uses the URL only as a last resort.
	DeferUrlExtractor bool
}

// Result mirrors go-htmldate v1.9.1's Result.
type Result struct {
	// DateTime is the extracted date and time.
	DateTime time.Time
	// HasTime reports whether DateTime carries a time of day.
	HasTime bool
	// HasTimezone reports whether DateTime carries a time zone.
	HasTimezone bool
	// SrcString is the text the date was read from.
	SrcString string
}

// IsZero reports whether the result holds no date.
func (r Result) IsZero() bool { return r.DateTime.IsZero() }

// Format is DateTime.Format(layout).
func (r Result) Format(layout string) string { return r.DateTime.Format(layout) }

// FromDocument always returns a zero Result and ErrDisabled; go-trafilatura
// then leaves Metadata.Date empty, exactly as with HtmlDateMode Disabled.
func FromDocument(doc *html.Node, opts Options) (Result, error) {
	return Result{}, ErrDisabled
}
