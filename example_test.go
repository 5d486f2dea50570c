package gatehouse_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse"
)

// exampleHome returns a fresh Gatehouse home. The examples fetch a page from
// a loopback test server, so the config allows private addresses; the
// default configuration refuses them.
func exampleHome(allowPrivate bool) string {
	dir, err := os.MkdirTemp("", "gatehouse-example-")
	if err != nil {
		log.Fatal(err)
	}
	if allowPrivate {
		os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("security:\n  allow_private_urls: true\n"), 0o644)
	}
	return dir
}

// openExample opens a Gatehouse on a fresh home (see exampleHome); done
// closes it and removes the home. Examples that write a config of their own
// call exampleHome and gatehouse.Open themselves.
func openExample(allowPrivate bool) (g *gatehouse.Gatehouse, done func()) {
	home := exampleHome(allowPrivate)
	g, err := gatehouse.Open(home, nil)
	if err != nil {
		log.Fatal(err)
	}
	return g, func() { g.Close(); os.RemoveAll(home) }
}

func examplePage() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Release notes</title></head><body><article>
<h1>Release notes</h1><p>Version 2 reads pages through the gates and returns clean markdown.</p>
</article></body></html>`)
	}))
}

func ExampleOpen() {
	home := exampleHome(false)
	defer os.RemoveAll(home)
	g, err := gatehouse.Open(home, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	fmt.Println(g.Home() == home, len(g.Warnings()))
	// Output: true 0
}

func ExampleGatehouse_Extract() {
	srv := examplePage()
	defer srv.Close()

	g, done := openExample(true)
	defer done()
	res, err := g.Extract(context.Background(), []string{srv.URL + "/notes", "http://169.254.169.254/latest/meta-data/"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range res.Results {
		if p.OK() {
			fmt.Printf("%s: %q (cached %v)\n", p.Title, strings.SplitN(p.Content, "\n", 2)[0], p.Meta.Cached)
		} else {
			fmt.Printf("refused: %s\n", p.Reason)
		}
	}
	// Output:
	// Release notes: "Version 2 reads pages through the gates and returns clean markdown." (cached false)
	// refused: ssrf_metadata
}

func ExampleGatehouse_Extract_refusal() {
	g, done := openExample(false)
	defer done()
	// A credential in any URL refuses the whole call before anything is fetched.
	res, err := g.Extract(context.Background(), []string{
		"https://example.com/a",
		"https://example.com/b?key=sk-proj-abcdefghijklmnopqrstuvwxyz012345",
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Refused(), res.Reason, *res.Index, len(res.Results))
	// Output: true secret_in_url 1 0
}

func ExampleGatehouse_Check() {
	g, done := openExample(false)
	defer done()
	results, err := g.Check(context.Background(), []string{"http://2130706433/", "http://169.254.169.254/", "ftp://10.0.0.1/"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(r.URL, r.Allowed, *r.Gate, *r.Reason)
	}
	// Output:
	// http://2130706433/ false ssrf ssrf_private
	// http://169.254.169.254/ false ssrf ssrf_metadata
	// ftp://10.0.0.1/ false scheme unsupported_scheme
}

func ExampleGatehouse_Tools() {
	g, done := openExample(false)
	defer done()
	usable, unavailable := g.Tools()
	byName := map[string]gatehouse.Tool{}
	for _, t := range usable {
		byName[t.Name] = t
	}
	// Which other tools are listed depends on this machine (a search
	// backend, Chromium); unavailable ones say why.
	for _, name := range []string{"web_extract", "web_read", "web_check"} {
		t := byName[name]
		fmt.Println(t.Name, t.ReadOnly, t.OpenWorld, len(t.InputSchema) > 0)
	}
	for _, u := range unavailable {
		_ = u.Why // e.g. "Chromium not found: …"
	}
	// Output:
	// web_extract true true true
	// web_read true false true
	// web_check true true true
}

func ExampleGatehouse_Call() {
	g, done := openExample(false)
	defer done()
	out, refused, err := g.Call(context.Background(), "web_read", []byte(`{"path":"../../etc/passwd"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(refused, strings.Contains(string(out), `"reason":"read_outside_store"`))
	// Output: true true
}

func ExampleGatehouse_Read() {
	home := exampleHome(true)
	defer os.RemoveAll(home)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>Long</title></head><body><article><h1>Long</h1>")
		for i := 1; i <= 300; i++ {
			fmt.Fprintf(w, "<p>Paragraph %d of a long page, written out as a full sentence.</p>", i)
		}
		fmt.Fprint(w, "</article></body></html>")
	}))
	defer srv.Close()
	g, err := gatehouse.Open(home, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	res, err := g.Extract(context.Background(), []string{srv.URL + "/long"}, &gatehouse.ExtractOptions{CharLimit: 2000})
	if err != nil {
		log.Fatal(err)
	}
	p := res.Results[0]
	fmt.Println(p.Meta.Truncated, p.Meta.StoredPath != "")
	// Read the stored full text from line 5.
	r, err := g.Read(context.Background(), p.Meta.StoredPath, &gatehouse.ReadOptions{Offset: 5, Limit: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Lines, r.NextOffset)
	// Output:
	// true true
	// 3 8
}

func ExampleGatehouse_Search() {
	// A self-hosted SearXNG instance stands in for the search backend.
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"results":[
			{"title":"The Go Programming Language","url":"https://go.dev/","content":"Build simple, secure, scalable systems with Go."},
			{"title":"Internal wiki","url":"http://10.0.0.7/wiki","content":"A result pointing at a private address."}]}`)
	}))
	defer searx.Close()
	home := exampleHome(false)
	defer os.RemoveAll(home)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("web:\n  search_backend: searxng\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".env"), []byte("SEARXNG_URL="+searx.URL+"\n"), 0o600)

	g, err := gatehouse.Open(home, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	res, err := g.Search(context.Background(), "golang", &gatehouse.SearchOptions{Limit: 5})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Success, res.Meta.Provider)
	for _, row := range res.Data.Web {
		flag := ""
		if row.UnsafeURL != nil {
			flag = " (unsafe: " + string(row.UnsafeURL.Reason) + ")"
		}
		fmt.Printf("%d. %s %s%s\n", row.Position, row.Title, row.URL, flag)
	}
	// Output:
	// true searxng
	// 1. The Go Programming Language https://go.dev/
	// 2. Internal wiki http://10.0.0.7/wiki (unsafe: ssrf_private)
}
