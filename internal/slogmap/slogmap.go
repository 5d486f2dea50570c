// Package slogmap wraps a slog.Handler so that every record's message and
// every attribute (those of the record and those added with WithAttrs) are
// rewritten before the wrapped handler sees them. Gatehouse uses it to keep
// secrets (internal/web: urlsafe.Redact) and MCP session ids
// (internal/mcpserver: a short hash) out of logs.
package slogmap

import (
	"context"
	"log/slog"
)

// Handler is the rewriting slog.Handler. The zero value is not usable: make
// one with New.
type Handler struct {
	h    slog.Handler
	name string
	msg  func(string) string
	attr func(slog.Attr) slog.Attr
}

// New returns a Handler over h. name identifies the rewrite (see Wraps); msg
// rewrites the message (nil keeps it); attr rewrites one attribute (nil keeps
// it).
func New(h slog.Handler, name string, msg func(string) string, attr func(slog.Attr) slog.Attr) Handler {
	return Handler{h: h, name: name, msg: msg, attr: attr}
}

// Wraps reports whether h is a Handler made by New with this name, so a
// caller can avoid wrapping the same rewrite twice.
func Wraps(h slog.Handler, name string) bool {
	m, ok := h.(Handler)
	return ok && m.name == name
}

func (m Handler) Enabled(ctx context.Context, l slog.Level) bool { return m.h.Enabled(ctx, l) }

func (m Handler) Handle(ctx context.Context, rec slog.Record) error {
	msg := rec.Message
	if m.msg != nil {
		msg = m.msg(msg)
	}
	out := slog.NewRecord(rec.Time, rec.Level, msg, rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(m.rewrite(a))
		return true
	})
	return m.h.Handle(ctx, out)
}

func (m Handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = m.rewrite(a)
	}
	m.h = m.h.WithAttrs(red)
	return m
}

func (m Handler) WithGroup(name string) slog.Handler {
	m.h = m.h.WithGroup(name)
	return m
}

func (m Handler) rewrite(a slog.Attr) slog.Attr {
	if m.attr == nil {
		return a
	}
	return m.attr(a)
}
