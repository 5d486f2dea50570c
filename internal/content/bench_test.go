package content

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// benchDir is the shared extraction bench, read at run time and never
// copied into the repository (third-party pages): ../shared next to the
// module root, or the folder GATEHOUSE_BENCH names (a bench set such as
// <shared>/bench/wcxb-dev, holding ground-truth.json and html/).
var benchDir = func() string {
	if d := os.Getenv("GATEHOUSE_BENCH"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "bench", "extraction")
}()

type benchPage struct {
	id   string
	url  *url.URL
	html []byte
}

// loadBenchPages reads every page of the shared bench, or skips the test
// when the shared folder is absent.
func loadBenchPages(tb testing.TB) []benchPage {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(benchDir, "ground-truth.json"))
	if err != nil {
		tb.Skipf("shared bench not available: %v", err)
	}
	var gt map[string]struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &gt); err != nil {
		tb.Fatal(err)
	}
	ids := make([]string, 0, len(gt))
	for id := range gt {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	pages := make([]benchPage, 0, len(ids))
	for _, id := range ids {
		f, err := os.Open(filepath.Join(benchDir, "html", id+".html.gz"))
		if err != nil {
			tb.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			tb.Fatal(err)
		}
		u, err := url.Parse(gt[id].URL)
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, benchPage{id: id, url: u, html: data})
	}
	return pages
}

// BenchmarkConvertBench converts all pages of the shared extraction bench
// (181 pages) per iteration; MB/s is of uncompressed HTML. It skips when
// ../shared/bench is absent.
func BenchmarkConvertBench(b *testing.B) {
	pages := loadBenchPages(b)
	total := 0
	for _, p := range pages {
		total += len(p.html)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range pages {
			// (A page with no readable content is an answer too:
			// wcxb-dev has two.)
			if _, err := Convert(p.html, "text/html; charset=utf-8", p.url); err != nil && reason.Of(err) != reason.EmptyContent {
				b.Fatalf("%s: %v", p.id, err)
			}
		}
	}
	b.ReportMetric(float64(len(pages)*b.N)/b.Elapsed().Seconds(), "pages/s")
}
