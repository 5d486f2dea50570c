// Package archtest holds architecture tests: import direction, purity of the gate
// packages, "exactly one place dials" (STYLE.md house style 1 and 2), and
// the package size budget (issue 17 item 3).
package archtest

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

const mod = "github.com/gatehouse-dev/gatehouse"

func root(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

type pkg struct {
	ImportPath   string
	Dir          string
	GoFiles      []string // non-test files of this platform's build
	CgoFiles     []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// Pure packages make no network connections, touch no files and read no
// environment: their verdicts are functions of their inputs.
func TestPurePackagesImportNoIO(t *testing.T) {
	pure := map[string][]string{
		mod + "/internal/urlsafe": {"net/http", "os", "os/exec", "log/slog", "io/ioutil"},
		mod + "/internal/reason":  {"net", "net/http", "os"},
	}
	for _, p := range listPackages(t) {
		forbidden, ok := pure[p.ImportPath]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			for _, f := range forbidden {
				if imp == f {
					t.Errorf("%s imports %s; it must stay pure", p.ImportPath, imp)
				}
			}
		}
	}
}

// Lower packages never import higher ones: data flows tool → web → gates → egress.
func TestImportDirection(t *testing.T) {
	higher := map[string][]string{
		mod + "/internal/urlsafe":   {"/internal/egress", "/internal/web", "/internal/config", "/cmd/"},
		mod + "/internal/egress":    {"/internal/web", "/internal/config", "/cmd/"},
		mod + "/internal/policy":    {"/internal/web", "/internal/egress", "/cmd/"},
		mod + "/internal/cache":     {"/internal/web", "/internal/egress", "/cmd/"},
		mod + "/internal/truncate":  {"/internal/web", "/internal/egress", "/cmd/"},
		mod + "/internal/content":   {"/internal/web", "/internal/egress", "/cmd/"},
		mod + "/internal/config":    {"/internal/web", "/internal/egress", "/cmd/"},
		mod + "/internal/gate":      {"/internal/web", "/internal/browser", "/internal/tools", "/internal/mcpserver", "/cmd/"},
		mod + "/internal/render":    {"/internal/web", "/internal/browser", "/internal/tools", "/internal/mcpserver", "/cmd/"},
		mod + "/internal/web":       {"/internal/browser", "/internal/tools", "/internal/mcpserver", "/cmd/"},
		mod + "/internal/tools":     {"/internal/mcpserver", "/cmd/"},
		mod + "/internal/mcpserver": {"/cmd/"},
	}
	// The browser tools sit beside the web tools, not above them: what both
	// need (gate options, website policy, the one-URL verdict, the redacting
	// logger, the render step's contract) lives below both, in internal/gate
	// and internal/render. Every package under internal/browser is held to it.
	browserHigher := []string{"/internal/web", "/internal/tools", "/internal/mcpserver", "/cmd/"}
	for _, p := range listPackages(t) {
		rules := higher[p.ImportPath]
		if p.ImportPath == mod+"/internal/browser" || strings.HasPrefix(p.ImportPath, mod+"/internal/browser/") {
			rules = browserHigher
		}
		for _, imp := range p.Imports {
			for _, h := range rules {
				if strings.HasPrefix(imp, mod+h) {
					t.Errorf("%s imports %s (a higher layer)", p.ImportPath, imp)
				}
			}
		}
	}
}

// Exactly one place dials: only internal/egress builds a net.Dialer or an
// http.Transport, and nobody uses the default client or transport (which honour
// proxy environment variables and have no SSRF guard). This is the quick
// check on our source text; TestNoDialBypassesEgress checks the compiled
// program, dependencies included.
func TestOnlyEgressDials(t *testing.T) {
	bad := regexp.MustCompile(`net\.Dialer\{|http\.Transport\{|http\.DefaultClient|http\.DefaultTransport|http\.Get\(|http\.Post\(|http\.Head\(|net\.Dial\(|net\.DialTimeout\(`)
	r := root(t)
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(r, path)
		if d.IsDir() && rel == "bench" {
			// The benchmarks' harnesses play the agent, its load balancer
			// and its sites (bench/fleet dials replicas and HAProxy with
			// its own transport): they are never linked into gatehouse or
			// the public package, which is what this rule guards.
			return filepath.SkipDir
		}
		if d.IsDir() && rel == "third_party" {
			// The go-htmldate stub (third_party/README.md) stands in for a
			// module and is judged like the module cache: dials inside
			// dependencies are TestNoDialBypassesEgress's (dials_test.go).
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if strings.HasPrefix(rel, filepath.Join("internal", "egress")+string(filepath.Separator)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if bad.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d dials outside internal/egress: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// chromedp (github.com/chromedp/...: the CDP driver and its protocol types)
// is imported only inside internal/browser/backend: every other package talks
// to Chromium through backend's API, so the CDP surface (and every raw CDP
// error) has one home. Test files are held to it too, with the listed
// exceptions.
func TestChromedpOnlyInBackend(t *testing.T) {
	const home = mod + "/internal/browser/backend"
	testOK := map[string]string{
		// profile_test.go drives a stand-alone Chromium to write a cookie
		// into a profile directory before the Manager opens it.
		mod + "/internal/browser": "profile_test.go",
	}
	for _, p := range listPackages(t) {
		if p.ImportPath == home || strings.HasPrefix(p.ImportPath, home+"/") {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/chromedp/") {
				t.Errorf("%s imports %s; chromedp stays inside internal/browser/backend", p.ImportPath, imp)
			}
		}
		if _, ok := testOK[p.ImportPath]; ok {
			continue
		}
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			if strings.HasPrefix(imp, "github.com/chromedp/") {
				t.Errorf("%s (tests) imports %s; chromedp stays inside internal/browser/backend", p.ImportPath, imp)
			}
		}
	}
}

// The parts split out of internal/browser (issue 17 item 3) each keep one job
// and drive no browser: they never import the Manager's package, the
// Chromium backend or the cloud providers, so a reader learns each without
// the rest, and the seam cannot grow back into a cycle. The Camofox client
// is in the list: it speaks Camofox's REST API and nothing else. Two parts
// use the Chromium backend but never the Manager or a cloud provider:
// toolio (the tools' JSON shapes name backend's dialog, download and console
// types) and navsettle (it waits on a backend.Tab). navgate, the URL gates,
// judges URLs and builds the egress guards: neither the Manager nor any
// backend. camofoxmode drives Camofox (through the camofox client) and no
// other backend; it reaches the Manager only through its Host interface.
// backendsel reads the configuration (and asks the cloud selection) but
// starts nothing. standby runs the standby duty over Redis and reaches the
// Manager's attach only through its Options functions.
func TestBrowserPartsDriveNoBrowser(t *testing.T) {
	// A pattern ending in /... forbids the package and every one below it.
	noBrowser := []string{mod + "/internal/browser/..."}
	noManager := []string{mod + "/internal/browser", mod + "/internal/browser/cloud/..."}
	noBackend := append([]string{mod + "/internal/browser/backend/..."}, noManager...)
	parts := map[string][]string{"evalpolicy": noBrowser, "sessionkey": noBrowser, "snapshot": noBrowser,
		"realprofile": noBrowser, "camofox": noBrowser, "toolio": noManager, "navsettle": noManager,
		"navgate": append([]string{mod + "/internal/browser/camofox"}, noBackend...), "camofoxmode": noBackend,
		"backendsel": {mod + "/internal/browser", mod + "/internal/browser/backend/..."}, "standby": noBackend}
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		for part, forbidden := range parts {
			if p.ImportPath != mod+"/internal/browser/"+part {
				continue
			}
			seen[part] = true
			for _, imp := range p.Imports {
				for _, f := range forbidden {
					base, tree := strings.CutSuffix(f, "/...")
					if imp == base || tree && strings.HasPrefix(imp, base+"/") {
						t.Errorf("%s imports %s; it must not drive a browser or reach the Manager", p.ImportPath, imp)
					}
				}
			}
		}
	}
	for part := range parts {
		if !seen[part] {
			t.Errorf("internal/browser/%s is gone: update this test's list", part)
		}
	}
}

// maxPackageLines is the size past which a package splits (issue 17 item 3,
// "a house a newcomer reads in an hour"): no package has more physical
// lines in its non-test .go files. A package near it moves a whole concern
// into a sub-package of one job (docs/layout.md), never a file elsewhere.
const maxPackageLines = 5000

func TestPackageLineBudget(t *testing.T) {
	for _, p := range listPackages(t) {
		n := 0
		for _, f := range append(p.GoFiles, p.CgoFiles...) {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			n += bytes.Count(b, []byte("\n"))
		}
		if n > maxPackageLines {
			t.Errorf("%s has %d non-test lines, over the budget of %d: split a concern into a sub-package (docs/layout.md)", p.ImportPath, n, maxPackageLines)
		}
	}
}
