package browser

import (
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Browser-originated text is force-redacted before it is returned (spec §B2):
// snapshots (and so deltas and stored full snapshots), page URLs and titles,
// console messages, eval results and image lists pass through
// urlsafe.Redact, the secret matcher of the URL gate, whatever
// security.redact_secrets says. The gates always judge the raw URL.

func redactText(s string) string { return urlsafe.Redact(s) }

func redactConsole(msgs []backend.ConsoleMessage) []backend.ConsoleMessage {
	for i := range msgs {
		msgs[i].Text = urlsafe.Redact(msgs[i].Text)
	}
	return msgs
}

func redactImages(imgs []Image) {
	for i := range imgs {
		imgs[i].Src, imgs[i].Alt = urlsafe.Redact(imgs[i].Src), urlsafe.Redact(imgs[i].Alt)
	}
}
