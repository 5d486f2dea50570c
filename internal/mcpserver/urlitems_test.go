package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
)

// TestExtractURLItemsMatchSchema: the urls items web_extract accepts are the
// ones the input schema published by tools/list describes: a URL string or
// an object carrying it in url (else href). The schema said strings only
// while objects were fetched (breaker5 D13). An item outside the schema
// costs its own row (invalid_item, spec §A3 step 1), not the call.
func TestExtractURLItemsMatchSchema(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	cs := f.stdio(t, nil)
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema *jsonschema.Schema
	for _, tl := range lt.Tools {
		if tl.Name == "web_extract" {
			b, _ := json.Marshal(tl.InputSchema)
			if err := json.Unmarshal(b, &schema); err != nil {
				t.Fatal(err)
			}
		}
	}
	if schema == nil {
		t.Fatal("tools/list lacks web_extract")
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	valid := func(items ...any) bool {
		var v map[string]any
		b, _ := json.Marshal(map[string]any{"urls": items})
		json.Unmarshal(b, &v)
		return rs.Validate(v) == nil
	}
	accepted := []any{f.site.URL("/a"), map[string]any{"url": f.site.URL("/a")}, map[string]any{"href": f.site.URL("/a"), "text": "A"}}
	for _, it := range accepted {
		if !valid(it) {
			t.Errorf("published schema refuses %v, which web_extract fetches", it)
		}
	}
	for _, it := range []any{5, nil, map[string]any{"x": 1}, map[string]any{"url": 5}, []any{"x"}} {
		if valid(it) {
			t.Errorf("published schema allows %v, which web_extract does not fetch", it)
		}
	}
	res, v := callTool(t, cs, "web_extract", map[string]any{"urls": append(accepted, 5, map[string]any{"x": 1})})
	if res.IsError {
		t.Fatalf("isError: %v", v)
	}
	rows := v["results"].([]any)
	for i, r := range rows {
		row := r.(map[string]any)
		if i < len(accepted) && row["error"] != nil {
			t.Errorf("item %d (%v) not fetched: %v", i, accepted[i], row)
		}
		if i >= len(accepted) && row["reason"] != "invalid_item" {
			t.Errorf("item %d: %v, want an invalid_item row", i, row)
		}
	}
}
