package mcpserver_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
)

var update = flag.Bool("update", false, "rewrite testdata/web_tools.golden.json")

// TestWebToolsGolden pins what a client sees of the web tools in tools/list
// (names, descriptions, schemas, annotations): a change to a model-facing
// text or schema shows up in review as a diff of the golden file.
// Regenerate with: go test ./internal/mcpserver -run WebToolsGolden -update
func TestWebToolsGolden(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	cs := f.stdio(t, nil)
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var web []any
	for _, tl := range lt.Tools {
		if strings.HasPrefix(tl.Name, "web_") && tl.Name != "web_search" {
			web = append(web, tl)
		}
	}
	got, err := json.MarshalIndent(map[string]any{"tools": web}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "web_tools.golden.json")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("tools/list of the web tools changed; review and run go test ./internal/mcpserver -run WebToolsGolden -update\ngot:\n%s", got)
	}
}
