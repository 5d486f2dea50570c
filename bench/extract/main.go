// Command extract runs Gatehouse's real web_extract pipeline over the shared
// extraction bench (181 real article pages with ground truth), served from a
// local HTTP server, writes one markdown file per page and scores them with the
// shared scorer (F1, precision, recall, accuracy; scored with -drop-title).
//
//	go run ./bench/extract [-shared ../shared] [-out bench/out/extract]
//
// It exits 0 with a message when the shared folder is absent (the pages are
// third-party text and are never copied into this repository).
package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func main() {
	shared := flag.String("shared", "../shared", "path of the shared reference folder")
	out := flag.String("out", "bench/out/extract", "where to write <id>.md")
	score := flag.Bool("score", true, "run the shared scorer on the output")
	flag.Parse()
	if err := run(*shared, *out, *score); err != nil {
		fmt.Fprintln(os.Stderr, "bench/extract:", err)
		os.Exit(1)
	}
}

type page struct {
	id, url string
	html    []byte
}

func load(shared string) ([]page, error) {
	gtPath := filepath.Join(shared, "bench", "extraction", "ground-truth.json")
	b, err := os.ReadFile(gtPath)
	if err != nil {
		return nil, err
	}
	var gt map[string]struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(b, &gt); err != nil {
		return nil, err
	}
	var pages []page
	for id, v := range gt {
		f, err := os.Open(filepath.Join(shared, "bench", "extraction", "html", id+".html.gz"))
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		h, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			return nil, err
		}
		pages = append(pages, page{id: id, url: v.URL, html: h})
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].id < pages[j].id })
	return pages, nil
}

func run(shared, out string, score bool) error {
	if _, err := os.Stat(filepath.Join(shared, "bench", "extraction", "ground-truth.json")); err != nil {
		fmt.Printf("bench/extract: %s/bench not found; skipping (the bench pages are read at run time, never copied here)\n", shared)
		return nil
	}
	pages, err := load(shared)
	if err != nil {
		return err
	}
	byID := map[string]page{}
	for _, p := range pages {
		byID[p.id] = p
	}
	// A local server serves each page at /<id>; the page's real URL is not used
	// for fetching (no internet), only the local one.
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := byID[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(p.html)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go srv.Serve(ln)
	defer srv.Close()

	home, err := os.MkdirTemp("", "gatehouse-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	cfg := config.Default()
	cfg.Security.AllowPrivateURLs = true // the local page server is on loopback
	cfg.Web.ExtractTimeout = 0
	svc, _ := web.Open(web.Env{Home: home, Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	base := "http://" + ln.Addr().String() + "/"
	var htmlBytes int64
	empty, failed := 0, 0
	start := time.Now()
	for i := 0; i < len(pages); i += web.MaxURLs {
		batch := pages[i:min(i+web.MaxURLs, len(pages))]
		var urls []any
		for _, p := range batch {
			urls = append(urls, base+p.id)
			htmlBytes += int64(len(p.html))
		}
		resp := svc.Extract(context.Background(), web.ExtractRequest{URLs: urls, CharLimit: 500000})
		for k, r := range resp.Results {
			content := r.Content
			if !r.OK() {
				failed++
				fmt.Fprintf(os.Stderr, "%s: %s: %s\n", batch[k].id, r.Reason, *r.Error)
				content = ""
			}
			if strings.TrimSpace(content) == "" {
				empty++
			}
			if err := os.WriteFile(filepath.Join(out, batch[k].id+".md"), []byte(content), 0o644); err != nil {
				return err
			}
		}
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("pipeline: %d pages, %.1f MB HTML in %.2f s: %.2f MB/s, %.1f pages/s; %d failed, %d empty\n",
		len(pages), float64(htmlBytes)/1e6, secs, float64(htmlBytes)/1e6/secs, float64(len(pages))/secs, failed, empty)
	if !score {
		return nil
	}
	cmd := exec.Command("go", "run", filepath.Join(shared, "bench", "score", "main.go"),
		"-gt", filepath.Join(shared, "bench", "extraction", "ground-truth.json"), "-drop-title", "gatehouse="+out)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
