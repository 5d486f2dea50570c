package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

func TestExtractFlagsFromToolSchema(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Local Story</title><meta name="description" content="A flood story."></head><body><article><h1>Local Story</h1>`+
			strings.Repeat("<p>The river rose overnight and the town council met at dawn to plan the response to the flood.</p>", 6)+
			`<p>See <a href="/next">the next story</a> and <a href="http://169.254.169.254/">this</a>.</p></article></body></html>`)
	}))
	defer srv.Close()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  allow_private_urls: true\n"), 0o600)

	code, out, errs := cli(t, home, "extract", "--links", "--render", "never", "--max-age", "0", srv.URL+"/story")
	if code != 0 || !strings.Contains(out, "Links (2):") || !strings.Contains(out, srv.URL+"/next the next story\n") ||
		!strings.Contains(out, "[refused: ssrf_metadata]") {
		t.Fatalf("exit %d\nout %s\nerr %s", code, out, errs)
	}
	code, out, _ = cli(t, home, "extract", "--json", "--links", srv.URL+"/story")
	if code != 0 || !strings.Contains(out, `"description": "A flood story."`) || !strings.Contains(out, `"allowed": false`) {
		t.Fatalf("json: exit %d %s", code, out)
	}
	// A value outside the schema's enum is refused by the registry's
	// validation, before anything is fetched: a usage error (exit 2), also
	// as JSON under --json.
	before := hits
	code, out, errs = cli(t, home, "extract", "--render", "sometimes", srv.URL+"/story")
	if code != 2 || !strings.Contains(out+errs, "render") || hits != before {
		t.Errorf("--render sometimes: exit %d hits %d→%d\n%s%s", code, before, hits, out, errs)
	}
	code, out, _ = cli(t, home, "extract", "--json", "--max-age", "-5", srv.URL+"/story")
	if code != 2 || !strings.Contains(out, `"reason": "usage_error"`) || hits != before {
		t.Errorf("--json --max-age -5: exit %d\n%s", code, out)
	}
	// The help text is the schema's property description.
	_, out, _ = cli(t, home, "extract", "--help")
	for _, p := range []string{"render", "include_links", "max_age_s"} {
		if d := tools.ExtractSchema().Properties[p].Description; d == "" || !strings.Contains(out, d) {
			t.Errorf("help lacks the schema description of %s (%q)", p, d)
		}
	}
}
