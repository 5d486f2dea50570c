package gate

import (
	"log/slog"

	"github.com/gatehouse-dev/gatehouse/internal/slogmap"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// RedactLogger returns l with the message and every string, error and
// Stringer attribute passed through urlsafe.RedactLog before l's handler
// sees it (the rule of every Gatehouse log: the CLI's root logger, the
// browser's, the extract pipeline's, the MCP server's). Wrapping twice is
// a no-op; nil stays nil.
func RedactLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	if slogmap.Wraps(l.Handler(), "redact") {
		return l
	}
	return slog.New(slogmap.New(l.Handler(), "redact", urlsafe.RedactLog, redactAttr))
}

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, urlsafe.RedactLog(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, x := range g {
			out[i] = redactAttr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, urlsafe.RedactLog(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, urlsafe.RedactLog(x.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
