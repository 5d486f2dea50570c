// Command quality runs Gatehouse's content conversion (or the go-trafilatura
// peer) over one of the shared benches and writes one markdown file per page
// for the scorer.
//
// From the module root:
//
//	go run ./bench/quality -shared ../shared -set extraction -out bench/out/quality
//	go run ../shared/bench/score/main.go -gt ../shared/bench/extraction/ground-truth.json \
//	    -drop-title gatehouse=bench/out/quality
//
// -set names the bench folder under <shared>/bench: "extraction" (181
// articles) or "wcxb-dev" (783 pages of seven types). -engine picks what
// converts each page: "gatehouse" (content.Convert) or "trafilatura", the
// peer of docs/benchmarks.md: go-trafilatura with its own fallback on
// (EnableFallback: readability and dom-distiller candidates), links
// kept, its content node converted by html-to-markdown v2 with the
// GFM table and strikethrough plugins. bench/quality.sh runs every tool on
// both sets and scores them per page type.
//
// Each <shared>/bench/<set>/html/<id>.html.gz is converted with
// content.Convert (Content-Type "text/html; charset=utf-8", as the bench
// README says to serve the pages; base = the page's ground-truth URL) and
// written to <out>/<id>.md (empty when conversion fails). It prints
// the throughput (MB/s of uncompressed HTML, pages/s) of the conversion
// alone: reading, decompressing and writing are not timed. The bench pages
// are third-party copies used for evaluation only; the output directory is
// git-ignored. When the shared folder is absent it says so and exits 0.
//
// With -render always, each page is instead served from a loopback HTTP
// server and loaded in the local Chromium by the direct backend's render
// step (browser.Manager.Render: a fresh BrowserContext per page, its
// egress proxy refusing every host but the loopback server, so no request
// leaves the machine), and its rendered DOM is converted with the same base
// URL; the throughput printed then includes the browser (load, quiet-wait,
// serialisation) and is compared with the conversion alone of the same run.
package main

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/content"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

type page struct {
	id   string
	url  *url.URL
	html []byte
}

func main() {
	shared := flag.String("shared", "../shared", "path of the shared reference folder (holds bench/extraction)")
	out := flag.String("out", "bench/out/quality", "directory for <id>.md outputs")
	workers := flag.Int("workers", 1, "pages converted in parallel (1 = sequential; throughput is then per core)")
	rounds := flag.Int("rounds", 1, "times the whole set is converted (for steadier throughput numbers)")
	set := flag.String("set", "extraction", "bench folder under <shared>/bench: extraction or wcxb-dev")
	engine := flag.String("engine", "gatehouse", "gatehouse (content.Convert) or trafilatura (the go-trafilatura peer)")
	render := flag.String("render", "never", "never: convert the saved HTML; always: render each page in the local Chromium first (see the package doc)")
	flag.Parse()

	convert := gatehouseConvert
	switch *engine {
	case "gatehouse":
	case "trafilatura":
		convert = trafilaturaConvert
	default:
		fatalf("unknown -engine %q (gatehouse or trafilatura)", *engine)
	}
	dir := filepath.Join(*shared, "bench", *set)
	gtPath := filepath.Join(dir, "ground-truth.json")
	if _, err := os.Stat(gtPath); errors.Is(err, fs.ErrNotExist) {
		fmt.Printf("quality: %s not found; the extraction bench lives in the shared reference folder, nothing to do\n", gtPath)
		return
	}
	pages, total, err := load(dir, gtPath)
	if err != nil {
		fatalf("%v", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatalf("%v", err)
	}
	if *workers < 1 {
		*workers = 1
	}
	if *rounds < 1 {
		*rounds = 1
	}

	if *render == "always" {
		renderAll(pages, total, *out)
		return
	}
	results := make([]string, len(pages))
	failures := map[reason.Code]int{} // (the peer reports "peer_failed")
	var mu sync.Mutex
	start := time.Now()
	for r := 0; r < *rounds; r++ {
		jobs := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					md, code := convert(pages[i].html, pages[i].url)
					if r > 0 {
						continue
					}
					mu.Lock()
					if code != "" {
						failures[code]++
					}
					results[i] = md
					mu.Unlock()
				}
			}()
		}
		for i := range pages {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
	}
	elapsed := time.Since(start).Seconds()

	for i, p := range pages {
		if err := os.WriteFile(filepath.Join(*out, p.id+".md"), []byte(results[i]), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	n := float64(len(pages) * *rounds)
	mb := float64(total) * float64(*rounds) / 1e6
	fmt.Printf("quality: %d pages, %.1f MB of HTML, %d round(s), %d worker(s), GOMAXPROCS=%d\n",
		len(pages), float64(total)/1e6, *rounds, *workers, runtime.GOMAXPROCS(0))
	fmt.Printf("quality: %.2f s, %.1f MB/s, %.1f pages/s\n", elapsed, mb/elapsed, n/elapsed)
	if len(failures) > 0 {
		var parts []string
		for c, k := range failures {
			parts = append(parts, fmt.Sprintf("%s=%d", c, k))
		}
		sort.Strings(parts)
		fmt.Printf("quality: failed pages: %s\n", strings.Join(parts, " "))
	}
	fmt.Printf("quality: wrote %s/<id>.md; score with:\n  go run %s -gt %s -drop-title gatehouse=%s\n",
		*out, filepath.Join(*shared, "bench", "score", "main.go"), gtPath, *out)
}

// gatehouseConvert is Gatehouse's conversion: the markdown, and the
// reason code when it fails.
func gatehouseConvert(page []byte, u *url.URL) (string, reason.Code) {
	doc, err := content.Convert(page, "text/html; charset=utf-8", u)
	if err != nil {
		return doc.Markdown, reason.Of(err)
	}
	return doc.Markdown, ""
}

// load reads the ground truth and every page it names.
func load(dir, gtPath string) ([]page, int, error) {
	raw, err := os.ReadFile(gtPath)
	if err != nil {
		return nil, 0, err
	}
	var gt map[string]struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &gt); err != nil {
		return nil, 0, fmt.Errorf("%s: %v", gtPath, err)
	}
	ids := make([]string, 0, len(gt))
	for id := range gt {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	pages := make([]page, 0, len(ids))
	total := 0
	for _, id := range ids {
		data, err := readGzip(filepath.Join(dir, "html", id+".html.gz"))
		if err != nil {
			return nil, 0, err
		}
		u, err := url.Parse(gt[id].URL)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: url: %v", id, err)
		}
		pages = append(pages, page{id: id, url: u, html: data})
		total += len(data)
	}
	return pages, total, nil
}

func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return io.ReadAll(zr)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "quality: "+format+"\n", args...)
	os.Exit(1)
}
