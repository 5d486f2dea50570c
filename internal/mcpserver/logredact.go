package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"

	"github.com/gatehouse-dev/gatehouse/internal/slogmap"
)

// sdkLogger returns the logger handed to the SDK: l with the value of every
// "session_id" attribute replaced by a short hash. An Mcp-Session-Id is a
// bearer credential for its session; the hash still lets log lines of one
// session be matched (it is the suffix of the session's task id).
func sdkLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(slogmap.New(l.Handler(), "session_id", nil, redactAttr))
}

func redactAttr(a slog.Attr) slog.Attr {
	if a.Key == "session_id" {
		if id := a.Value.String(); id != "" {
			sum := sha256.Sum256([]byte(id))
			return slog.String("session", hex.EncodeToString(sum[:8]))
		}
	}
	return a
}
