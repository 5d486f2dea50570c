package content

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	trafilatura "github.com/markusmobius/go-trafilatura"
)

var variantsOut = flag.String("variants", "", "write the shared bench's outputs of each main-content variant to DIR/<variant>/<id>.md")

// TestWriteVariants writes, for every page of the shared extraction bench,
// the markdown of each main-content variant, so they can be scored side by
// side:
//
//	go test -run TestWriteVariants ./internal/content -args -variants=$PWD/bench/out/variants
//	go run ../shared/bench/score/main.go -gt ../shared/bench/extraction/ground-truth.json \
//	    -drop-title $(ls -d bench/out/variants/*)
//
// It is skipped unless -variants is given (and when ../shared is absent).
func TestWriteVariants(t *testing.T) {
	if *variantsOut == "" {
		t.Skip("set -variants DIR to write the variants")
	}
	pages := loadBenchPages(t)
	variants := map[string]extractOptions{
		"merge":                 defaultExtract,
		"merge-balanced":        {focus: trafilatura.Balanced},
		"merge-trafilatura-img": {focus: trafilatura.FavorRecall, images: true},
		"trafilatura-recall":    {focus: trafilatura.FavorRecall, readabilityOff: true},
		"trafilatura-balanced":  {focus: trafilatura.Balanced, readabilityOff: true},
		"trafilatura-precision": {focus: trafilatura.FavorPrecision, readabilityOff: true},
		"trafilatura-img":       {focus: trafilatura.Balanced, images: true, readabilityOff: true},
		"readability":           {trafOff: true},
		"pick-one":              {focus: trafilatura.FavorRecall, noMerge: true},
		"merge-no-direct":       {focus: trafilatura.FavorRecall, directOff: true},
		"merge-byline":          {focus: trafilatura.FavorRecall, byline: true},
		"merge-byline-captions": {focus: trafilatura.FavorRecall, byline: true, allCaptions: true},
	}
	for name := range variants {
		if err := os.MkdirAll(filepath.Join(*variantsOut, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pages {
		for name, o := range variants {
			doc, _ := htmlToMarkdown(string(p.html), p.url, o)
			if err := os.WriteFile(filepath.Join(*variantsOut, name, p.id+".md"), []byte(doc.Markdown), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
