package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/content"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
)

// benchHost is the name the loopback page server is reached by.
const benchHost = "bench.invalid"

// loopbackOnly resolves benchHost to loopback and nothing else, so the
// pages' third-party sub-resources fail in DNS inside the egress proxy.
type loopbackOnly struct{}

func (loopbackOnly) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == benchHost {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host (bench: no network)", Name: host, IsNotFound: true}
}

// renderAll renders every page through the local Chromium and writes
// <out>/<id>.md; it prints the rendered throughput next to the conversion
// alone of the same pages in the same process.
func renderAll(pages []page, total int, out string) {
	byPath := map[string][]byte{}
	for _, p := range pages {
		byPath["/"+p.id] = p.html
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := byPath[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
	defer srv.Close()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	cfg := config.Default()
	home, err := os.MkdirTemp("", "gatehouse-bench-render-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(home)
	m, _ := browser.New(browser.Options{Config: cfg, Home: home, Resolver: loopbackOnly{}})
	defer m.Close()
	if err := m.Available(); err != nil {
		fatalf("%v", err)
	}
	guard, _ := web.NewGuard(cfg, loopbackOnly{}, []netip.AddrPort{ap})
	ctx := context.Background()

	// Conversion alone, for the side-by-side figure.
	start := time.Now()
	for _, p := range pages {
		content.Convert(p.html, "text/html", p.url)
	}
	plain := time.Since(start).Seconds()

	failures := map[reason.Code]int{}
	fallbacks := map[reason.Code]int{}
	discarded := map[reason.Code]int{}
	var renderTime time.Duration
	start = time.Now()
	for _, p := range pages {
		u := fmt.Sprintf("http://%s:%d/%s", benchHost, ap.Port(), p.id)
		t0 := time.Now()
		r, err := m.Render(ctx, u, guard, &direct.Fetched{URL: u, Status: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: p.html})
		renderTime += time.Since(t0)
		md := ""
		if e := reason.As(err); e != nil && e.Gate == "" && e.Code != reason.ChromiumMissing {
			// What the direct backend does when a page cannot be rendered
			// (navigation_failed, command_timeout): the fetched page.
			fallbacks[e.Code]++
			fmt.Fprintf(os.Stderr, "quality: %s not rendered, shown as fetched: %s: %s\n", p.id[:12], e.Code, e.Message)
			doc, _ := content.Convert(p.html, "text/html", p.url)
			md = doc.Markdown
		} else if err != nil {
			failures[reason.Of(err)]++
		} else {
			// The rendered DOM keeps attributes as written: converted with
			// the page's own URL, links come out as in the plain path. The
			// direct backend's choice between it and the fetched page's
			// conversion (direct.PreferFetched) applies.
			doc, cerr := content.Convert([]byte(r.HTML), "text/html; charset=utf-8", p.url)
			fdoc, ferr := content.Convert(p.html, "text/html; charset=utf-8", p.url)
			if r.Done != nil {
				r.Done()
			}
			if code, _ := direct.PreferFetched(fdoc, ferr, doc, cerr); code != "" {
				discarded[reason.Code(code)]++
				fmt.Fprintf(os.Stderr, "quality: %s rendered, shown as fetched: %s\n", p.id[:12], code)
				doc, cerr = fdoc, ferr
			}
			if cerr != nil {
				failures[reason.Of(cerr)]++
			}
			md = doc.Markdown
		}
		if err := os.WriteFile(filepath.Join(out, p.id+".md"), []byte(md), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	rendered := time.Since(start).Seconds()
	n := float64(len(pages))
	fmt.Printf("quality: %d pages, %.1f MB of HTML, rendered in the local Chromium (render always)\n", len(pages), float64(total)/1e6)
	fmt.Printf("quality: rendered %.2f s (%.1f pages/s; browser %.2f s of it), conversion alone %.2f s (%.1f pages/s): rendered/plain throughput = %.3f\n",
		rendered, n/rendered, renderTime.Seconds(), plain, n/plain, plain/rendered)
	for what, m := range map[string]map[reason.Code]int{"failed pages": failures, "not rendered, shown as fetched": fallbacks,
		"rendered, but shown as fetched (render_discarded)": discarded} {
		if len(m) == 0 {
			continue
		}
		var parts []string
		for c, k := range m {
			parts = append(parts, fmt.Sprintf("%s=%d", c, k))
		}
		sort.Strings(parts)
		fmt.Printf("quality: %s: %s\n", what, strings.Join(parts, " "))
	}
}
