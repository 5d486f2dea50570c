package browser

import (
	"bytes"
	"encoding/json"

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

// redactJSON redacts every string (values and object keys) of an eval
// result, keeping it valid JSON; a value that does not parse is redacted as
// text and returned as a JSON string.
func redactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || urlsafe.Redact(string(raw)) == string(raw) {
		return raw // clean: unchanged (the common case, one scan)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		b, _ := json.Marshal(urlsafe.Redact(string(raw)))
		return b
	}
	b, err := json.Marshal(redactValue(v))
	if err != nil {
		b, _ = json.Marshal(urlsafe.Redact(string(raw)))
	}
	return b
}

func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return urlsafe.Redact(x)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[urlsafe.Redact(k)] = redactValue(e)
		}
		return out
	}
	return v
}
