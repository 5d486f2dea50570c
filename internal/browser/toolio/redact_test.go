package toolio

import (
	"encoding/json"
	"strings"
	"testing"
)

// A secret-shaped token (urlsafe.Redact's matcher).
const leak = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd"

func TestRedactJSONKeepsJSON(t *testing.T) {
	in := json.RawMessage(`{"k":"` + leak + `","n":12345678901234567890,"a":["x ` + leak + `"]}`)
	out := RedactJSON(in)
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil || strings.Contains(string(out), leak) {
		t.Fatalf("%s (%v)", out, err)
	}
	if !strings.Contains(string(out), "12345678901234567890") {
		t.Errorf("number changed: %s", out)
	}
	if clean := json.RawMessage(`{"a":1}`); string(RedactJSON(clean)) != `{"a":1}` {
		t.Error("clean JSON changed")
	}
}
