package browser

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/config"
)

// TestManagerLoggerRedacts: the browser's logger (every line of the manager,
// its egress proxies and the Chromium launcher) passes through the secret
// redaction: a page URL carrying an API-key-shaped token logged at debug
// level comes out redacted.
func TestManagerLoggerRedacts(t *testing.T) {
	var buf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m, _ := New(Options{Config: config.Default(), Home: t.TempDir(), Logger: lg})
	defer m.Close()
	const key = "sk-proj0123456789abcdefABCDEF" // OpenAI-shaped, fake
	m.logger.Debug("navigate https://x.example/?k="+key, "url", "https://x.example/p?api_key=s3cr3tvalue")
	out := buf.String()
	if strings.Contains(out, "0123456789abcdef") || strings.Contains(out, "s3cr3tvalue") || strings.Count(out, "[REDACTED]") != 2 {
		t.Fatalf("browser log not redacted: %s", out)
	}
}
