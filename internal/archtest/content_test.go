package archtest

import (
	"strings"
	"testing"
)

// The content packages are one layer: internal/content orchestrates its
// sub-packages (charset, dom, feed, markdown, metadata, pdftext,
// visibility, …), which never import it back and, like it, never reach up
// to the pipelines, the dialer, the browser, the tool layer or the CLI.
func TestContentSubpackagesStayBelow(t *testing.T) {
	content := mod + "/internal/content"
	higher := []string{"/internal/web", "/internal/egress", "/internal/browser", "/internal/tools", "/internal/mcpserver", "/cmd/"}
	seen := 0
	for _, p := range listPackages(t) {
		if !strings.HasPrefix(p.ImportPath, content+"/") {
			continue
		}
		seen++
		for _, imp := range p.Imports {
			if imp == content {
				t.Errorf("%s imports %s, which orchestrates it", p.ImportPath, imp)
			}
			for _, h := range higher {
				if strings.HasPrefix(imp, mod+h) {
					t.Errorf("%s imports %s (a higher layer)", p.ImportPath, imp)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatalf("no package under %s listed", content)
	}
}
