package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/webtest"
)

// TestInvalidArgumentsRedactedAndVerbatim: an invalid_arguments message
// echoes the caller's value through the one redaction function (no pasted
// key or password comes back; breaker6 D3) and otherwise verbatim (its
// numbers are not rewritten: 127.0.0.1 stays 127.0.0.1; breaker6 D4).
func TestInvalidArgumentsRedactedAndVerbatim(t *testing.T) {
	w := webtest.New(t)
	r, _ := tools.Default(tools.Env{Web: w.Env()})
	for _, c := range []struct{ name, args, secret, keep string }{
		{tools.WebCheck, `{"urls":"see http://127.0.0.1:8701/noctype and sk-abcdefghijklmnopqrstuvwxyz12"}`, "abcdefghijklmnopqrstuvwxyz12", "http://127.0.0.1:8701/noctype"},
		{tools.WebExtract, `{"urls":"https://x.test/?q=sk-abcdefghijklmnopqrstuvwxyz12"}`, "abcdefghijklmnopqrstuvwxyz12", "sk-[REDACTED]"},
		{tools.WebExtract, `{"urls":"https://u:hunter2pw@10.0.0.1/2.0/1"}`, "hunter2pw", "10.0.0.1"},
	} {
		res := call(t, r, c.name, c.args, tools.Options{})
		b, _ := res.JSON(false)
		if !res.Refused || reasonOf(t, res) != reason.InvalidArguments {
			t.Fatalf("%s %s: %s, want invalid_arguments", c.name, c.args, b)
		}
		if strings.Contains(string(b), c.secret) || !strings.Contains(string(b), c.keep) {
			t.Errorf("%s %s:\n%s\nwant %q gone and %q kept", c.name, c.args, b, c.secret, c.keep)
		}
	}
}

// TestInvalidItemSaysWhatItWas: an item that is no URL reaches the web
// layer as it was sent, so its invalid_item row names its shape instead of
// "a blank string" (breaker6 D5).
func TestInvalidItemSaysWhatItWas(t *testing.T) {
	w := webtest.New(t)
	r, _ := tools.Default(tools.Env{Web: w.Env()})
	res := call(t, r, tools.WebExtract, `{"urls":[1,null,{"url":5},""]}`, tools.Options{})
	out, ok := res.Value.(*tools.ExtractOutput)
	if !ok || res.Refused || len(out.Results) != 4 {
		b, _ := res.JSON(false)
		t.Fatalf("%s", b)
	}
	for i, want := range []string{"it is a number", "it is null", "an object whose url and href are blank or not strings", "a blank string"} {
		row := out.Results[i]
		if row.Reason != reason.InvalidItem || row.Error == nil || !strings.Contains(*row.Error, want) {
			t.Errorf("row %d: %+v, want invalid_item saying %q", i, row, want)
		}
	}
}

// TestInvalidArgumentsShowJSON (breaker7 D18): an invalid_arguments message
// shows the offending value as JSON, never as Go prints it (map[a:1],
// [a b]), still redacted.
func TestInvalidArgumentsShowJSON(t *testing.T) {
	w := webtest.New(t)
	r, _ := tools.Default(tools.Env{Web: w.Env()})
	for _, c := range []struct{ name, args, want string }{
		{tools.WebExtract, `{"urls":5}`, `urls: 5 has JSON type "integer", want "array"`},
		{tools.BrowserClick, `{"ref":{"a":1}}`, `ref: {"a":1} has JSON type "object", want "string"`},
		{tools.WebCheck, `{"urls":{"k":"sk-abcdefghijklmnopqrstuvwxyz12"}}`, `urls: {"k":"sk-[REDACTED]"} has JSON type "object"`},
		{tools.WebSearch, `{"query":["a","b"]}`, `query: ["a","b"] has JSON type "array", want "string"`},
	} {
		res := call(t, r, c.name, c.args, tools.Options{})
		b, _ := res.JSON(false)
		if !res.Refused || reasonOf(t, res) != reason.InvalidArguments {
			t.Fatalf("%s %s: %s, want invalid_arguments", c.name, c.args, b)
		}
		var o struct{ Error string }
		json.Unmarshal(b, &o)
		if !strings.Contains(o.Error, c.want) || strings.Contains(o.Error, "map[") {
			t.Errorf("%s %s: %q, want %q", c.name, c.args, o.Error, c.want)
		}
	}
}
