package slogmap

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestRewritesMessageRecordAndWithAttrs(t *testing.T) {
	var buf bytes.Buffer
	up := func(s string) string { return strings.ReplaceAll(s, "secret", "[X]") }
	h := New(slog.NewTextHandler(&buf, nil), "t", up, func(a slog.Attr) slog.Attr {
		return slog.String(a.Key, up(a.Value.String()))
	})
	l := slog.New(h).With("pre", "secret-1").WithGroup("g")
	l.Info("a secret message", "k", "secret-2")
	out := buf.String()
	if strings.Contains(out, "secret") || !strings.Contains(out, "a [X] message") || !strings.Contains(out, "g.k=[X]-2") || !strings.Contains(out, "pre=[X]-1") {
		t.Fatalf("not rewritten: %s", out)
	}
	if !Wraps(l.Handler(), "t") || Wraps(l.Handler(), "other") || Wraps(slog.NewTextHandler(&buf, nil), "t") {
		t.Error("Wraps does not tell the rewrite by name")
	}
}
