package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
)

// sdkLogger returns the logger handed to the SDK: l with the value of every
// "session_id" attribute replaced by a short hash. An Mcp-Session-Id is a
// bearer credential for its session; the hash still lets log lines of one
// session be matched (it is the suffix of the session's task id).
func sdkLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(redactHandler{l.Handler()})
}

type redactHandler struct{ h slog.Handler }

func (r redactHandler) Enabled(ctx context.Context, lv slog.Level) bool { return r.h.Enabled(ctx, lv) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, rec.Message, rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(red)}
}

func (r redactHandler) WithGroup(name string) slog.Handler { return redactHandler{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	if a.Key == "session_id" {
		if id := a.Value.String(); id != "" {
			sum := sha256.Sum256([]byte(id))
			return slog.String("session", hex.EncodeToString(sum[:8]))
		}
	}
	return a
}
