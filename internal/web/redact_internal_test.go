package web

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestLoggerRedacts: the Service's logger redacts the message, string,
// error and grouped attributes, including attributes bound with With.
func TestLoggerRedacts(t *testing.T) {
	const key = "ghp_AAAAAAAAAAAAAAAAAAAAAAAA"
	var buf bytes.Buffer
	s := New(Deps{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	l := s.d.Logger.With("bound", "https://x.example/?token="+key)
	l.Info("fetched https://x.example/"+key,
		"url", "https://u:pw@x.example/",
		"err", errors.New("server said "+key),
		slog.Group("g", "inner", key))
	out := buf.String()
	if strings.Contains(out, key) || strings.Contains(out, ":pw@") {
		t.Fatalf("log carries a secret: %s", out)
	}
	if !strings.Contains(out, "[REDACTED]") {
		t.Fatalf("nothing redacted: %s", out)
	}
}
