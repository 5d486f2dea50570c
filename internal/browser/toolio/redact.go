package toolio

import (
	"bytes"
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// RedactJSON redacts every string (values and object keys) of an eval
// result (urlsafe.Redact, spec §B2), keeping it valid JSON; a value that does not parse is redacted as
// text and returned as a JSON string.
func RedactJSON(raw json.RawMessage) json.RawMessage {
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
