package web

import (
	"log/slog"
	"reflect"

	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/safetext"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// redactRows passes every URL and message of the rows through
// urlsafe.Redact (always: our own metadata never carries a secret, whatever
// security.redact_secrets says), and the page title and content too when
// content is true (security.redact_secrets; spec §A12, default on).
func redactRows(rows []Result, content bool) {
	for i := range rows {
		r := &rows[i]
		// safetext.Escape: a control character in a URL or message
		// (echoed from the caller's input) is shown as an escape, never
		// sent to a terminal raw.
		r.URL = safetext.Escape(urlsafe.Redact(r.URL))
		if r.Error != nil {
			m := safetext.Escape(urlsafe.Redact(*r.Error))
			r.Error = &m
		}
		if b := r.BlockedByPolicy; b != nil {
			c := *b
			c.Host = urlsafe.Redact(c.Host)
			r.BlockedByPolicy = &c
		}
		if m := r.Meta; m != nil {
			redactStrings(reflect.ValueOf(m).Elem())
		}
		for k := range r.Links {
			// A link is judged on its raw URL (judgeLinks: one carrying a
			// secret is not allowed, with its reason); what the caller
			// sees is redacted, like the same link inside content.
			r.Links[k].URL = urlsafe.Redact(r.Links[k].URL)
			r.Links[k].Text = urlsafe.Redact(r.Links[k].Text)
		}
		if content {
			redactContent(r)
		}
	}
}

// redactStrings passes every string of v (a struct, walked through its
// exported fields, embedded structs, slices and pointers) through
// urlsafe.Redact in place, so a meta field added later (description,
// canonical_url, site_name, …) cannot be missed.
func redactStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if r := urlsafe.Redact(v.String()); r != v.String() {
				v.SetString(r)
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				redactStrings(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			redactStrings(v.Index(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			redactStrings(v.Elem())
		}
	}
}

// redactContent redacts the page text of one row (title and markdown). It
// runs before truncate-and-store, so the stored full text is redacted too
// (spec §A10.4).
func redactContent(r *Result) {
	r.Title = urlsafe.Redact(r.Title)
	r.Content = urlsafe.Redact(r.Content)
}

// newRedactLogger returns l with the message and every string (and error,
// and Stringer) attribute passed through urlsafe.RedactLog (spec §A6.7's
// broader log list: also code, sig, key, session and auth values) before l's
// handler sees it: nothing Gatehouse logs carries a secret. Wrapping twice is
// a no-op.
func newRedactLogger(l *slog.Logger) *slog.Logger { return gate.RedactLogger(l) }

// RedactLogger is gate.RedactLogger (kept for the callers of web).
func RedactLogger(l *slog.Logger) *slog.Logger { return gate.RedactLogger(l) }
