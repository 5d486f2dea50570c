package reason

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/reasons.md from the code table")

// renderDoc renders the reason-code table of docs/reasons.md.
func renderDoc() string {
	var b strings.Builder
	b.WriteString("# Reason codes\n\n")
	b.WriteString("Every refusal or failure Gatehouse reports carries exactly one of these stable codes\n")
	b.WriteString("(`reason` in JSON). Codes are never renamed; new ones may be added. Generated from\n")
	b.WriteString("`internal/reason` by `go test ./internal/reason -update`; a test keeps it in sync.\n\n")
	b.WriteString("| code | meaning |\n|---|---|\n")
	for _, c := range All() {
		b.WriteString("| `" + string(c) + "` | " + c.Doc() + " |\n")
	}
	return b.String()
}

func TestDocInSync(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "reasons.md")
	want := renderDoc()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/reason -update)", err)
	}
	if string(got) != want {
		t.Fatal("docs/reasons.md is out of date: run go test ./internal/reason -update")
	}
}
