package gatehouse_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideMain is the program TestOutsideModule builds in a module of its
// own: it opens a home that allows private URLs, checks a metadata URL and
// the loopback page, and extracts the page.
const outsideMain = `package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse"
)

func main() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><html><head><title>Outside notes</title></head><body><article><h1>Outside notes</h1><p>A program in another module reads this page through the gates.</p></article></body></html>")
	}))
	defer srv.Close()
	home := os.Args[1]
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("security:\n  allow_private_urls: true\n"), 0o600); err != nil {
		panic(err)
	}
	g, err := gatehouse.Open(home, nil)
	if err != nil {
		panic(err)
	}
	defer g.Close()
	ctx := context.Background()
	checks, err := g.Check(ctx, []string{"http://169.254.169.254/latest/meta-data/", srv.URL}, nil)
	if err != nil {
		panic(err)
	}
	for _, c := range checks {
		r := ""
		if c.Reason != nil {
			r = string(*c.Reason)
		}
		fmt.Printf("check allowed=%v reason=%s\n", c.Allowed, r)
	}
	res, err := g.Extract(ctx, []string{srv.URL + "/notes"}, &gatehouse.ExtractOptions{CharLimit: 5000})
	if err != nil {
		panic(err)
	}
	for _, p := range res.Results {
		fmt.Printf("extract ok=%v title=%q first=%q\n", p.OK(), p.Title, strings.SplitN(p.Content, "\n", 2)[0])
	}
}
`

// TestOutsideModule (issue 17 item 2): the public package builds and runs
// from a module of its own that requires Gatehouse through one replace line
// to this checkout, as an embedding program does. A replace line of
// Gatehouse's own go.mod does not apply there, so a patched copy Gatehouse
// relied on would fail this build. Two variants: the plain one (upstream
// go-htmldate, whose go-dateparser is not in Gatehouse's module graph, so
// it is fetched with GOPROXY as the environment has it, and the variant is
// skipped when that is off or unreachable), and the one the README's "From
// Go" section suggests (plus the go-htmldate stub's replace line), which
// needs only the modules Gatehouse's go.sum names.
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program in a module of its own")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	root, err := os.Getwd() // the module root: this is the root package's test
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(gomod)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		name    string
		replace string
		network bool
	}{
		{name: "stub", replace: "replace github.com/markusmobius/go-htmldate => " + filepath.Join(root, "third_party", "go-htmldate") + "\n"},
		{name: "plain", network: true},
	} {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			mod := "module example.com/outside\n\n" + string(goLine) + "\n\nrequire github.com/gatehouse-dev/gatehouse v0.0.0\n\n" +
				"replace github.com/gatehouse-dev/gatehouse => " + root + "\n" + v.replace
			write := func(name string, b []byte) {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("go.mod", []byte(mod))
			write("go.sum", gosum) // checksums known; new ones (plain variant) are added
			write("main.go", []byte(outsideMain))
			bin := filepath.Join(dir, "outside")
			cmd := exec.Command(goBin, "build", "-o", bin, ".")
			cmd.Dir = dir
			// The same module cache and proxy settings as this build;
			// -mod=mod lets the go command complete go.mod's requirements.
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
			if out, err := cmd.CombinedOutput(); err != nil {
				if v.network && isDownloadFailure(out) {
					t.Skipf("upstream go-htmldate's modules cannot be downloaded here (GOPROXY=%q): %s", os.Getenv("GOPROXY"), firstLines(out, 3))
				}
				t.Fatalf("go build of a module requiring Gatehouse: %v\n%s\ngo.mod:\n%s", err, out, mod)
			}
			run := exec.Command(bin, t.TempDir())
			var stderr bytes.Buffer
			run.Stderr = &stderr
			out, err := run.Output()
			if err != nil {
				t.Fatalf("outside program: %v\n%s\n%s", err, out, stderr.String())
			}
			want := "check allowed=false reason=ssrf_metadata\ncheck allowed=true reason=\n" +
				"extract ok=true title=\"Outside notes\" first=\"A program in another module reads this page through the gates.\"\n"
			if string(out) != want {
				t.Errorf("outside program printed\n%s\nwant\n%s", out, want)
			}
		})
	}
}

// isDownloadFailure reports whether go build failed fetching a module
// (offline, GOPROXY=off, proxy unreachable) rather than compiling.
func isDownloadFailure(out []byte) bool {
	s := string(out)
	for _, m := range []string{"GOPROXY=off", "module lookup disabled", "dial tcp", "no such host", "connection refused", "i/o timeout", "proxyconnect", "TLS handshake timeout"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], " | ")
}
