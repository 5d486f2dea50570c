package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestRootLoggerRedacts: the CLI's root logger (newLogger) passes every
// line through the secret redaction, like the MCP server's and the extract
// pipeline's: an API-key-shaped token and a ?token= value in a URL logged at
// debug level, as the message or as an attribute, come out redacted.
func TestRootLoggerRedacts(t *testing.T) {
	t.Setenv("GATEHOUSE_LOG_LEVEL", "debug")
	const key = "sk-proj0123456789abcdefABCDEF" // OpenAI-shaped, fake
	var buf bytes.Buffer
	lg := newLogs(&buf).logger
	lg.Debug("fetching https://x.example/a?k=" + key)
	lg.Debug("fetch", "url", "https://x.example/cb?access_token=s3cr3tvalue", slog.Group("hop", "to", "https://x.example/"+key))
	out := buf.String()
	if strings.Contains(out, "0123456789abcdef") || strings.Contains(out, "s3cr3tvalue") {
		t.Fatalf("secret logged: %s", out)
	}
	if strings.Count(out, "[REDACTED]") != 3 || !strings.Contains(out, "level=DEBUG") {
		t.Fatalf("want three redacted debug values: %s", out)
	}
}
