package urlsafe

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkGateNoDNS is the per-URL cost of the string gates before DNS:
// Parse + CheckSecrets(extract) + CheckStatic.
func BenchmarkGateNoDNS(b *testing.B) {
	benchGate(b, "https://example.com/articles/2024/some-page?utm_source=x&id=42#top")
}

// benchGate measures Parse + CheckSecrets(extract) + CheckStatic on raw,
// which must pass every gate.
func benchGate(b *testing.B, raw string) {
	o := Options{}
	b.ReportAllocs()
	for b.Loop() {
		u, err := Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := CheckSecrets(raw, u, true); err != nil {
			b.Fatal(err)
		}
		if err := o.CheckStatic(u); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Parse("https://example.com/articles/2024/some-page?utm_source=x&id=42#top")
	}
}

func BenchmarkCheckSecrets(b *testing.B) {
	const raw = "https://example.com/articles/2024/some-page?utm_source=x&id=42#top"
	u, _ := Parse(raw)
	b.ReportAllocs()
	for b.Loop() {
		_ = CheckSecrets(raw, u, true)
	}
}

// BenchmarkGateNoDNSLibrary is the same gate for a URL that needs real
// canonicalisation (upper case, IDNA, a space). Every URL goes through the
// WHATWG library (there is no fast path since issue 17); this one makes it
// do the most work.
func BenchmarkGateNoDNSLibrary(b *testing.B) {
	benchGate(b, "https://Bücher.example/articles/2024/some page?utm_source=x&id=42#top")
}

// BenchmarkGateBenchURLs runs the gate over the 181 real article URLs of the
// shared extraction bench (ns/op is per URL). It skips when ../shared is absent.
func BenchmarkGateBenchURLs(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "bench", "extraction", "ground-truth.json"))
	if err != nil {
		b.Skip("../shared/bench not present")
	}
	var gt map[string]struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(data, &gt); err != nil {
		b.Fatal(err)
	}
	var urls []string
	for _, v := range gt {
		urls = append(urls, v.URL)
	}
	o := Options{}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		raw := urls[i%len(urls)]
		i++
		u, err := Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		_ = CheckSecrets(raw, u, true)
		_ = o.CheckStatic(u)
	}
}

// BenchmarkRedactPageNested: Redact over page-sized markdown (about 120 KB
// of prose and links whose parameters carry nested, percent-encoded URLs, no
// secret): the case the nested-parameter scan reads through.
func BenchmarkRedactPageNested(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 120<<10; i++ {
		fmt.Fprintf(&sb, "Paragraph %d of the article says something about the river and the town, with a "+
			"[link](https://example.com/articles/%d?utm_source=feed&page=%d&next=%%2Fdashboard%%3Ftab%%3D2) and "+
			"a search for `q=a+b` at https://search.example/?q=rivers+and+towns&lang=en.\n\n", i, i, i%7)
	}
	page := sb.String()
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	for range b.N {
		if Redact(page) != page {
			b.Fatal("clean page changed")
		}
	}
}

// BenchmarkClassifyAddr is the per-answer cost of the SSRF classification
// (registry table, beyondRegistry, metadata floor) for a public IPv4 and IPv6
// address, the common case: no entry holds them, so every row is looked at.
func BenchmarkClassifyAddr(b *testing.B) {
	v4, v6 := netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("2606:2800:220:1:248:1893:25c8:1946")
	b.ReportAllocs()
	for b.Loop() {
		if ClassifyAddr(v4) != ClassPublic || ClassifyAddr(v6) != ClassPublic {
			b.Fatal("not public")
		}
	}
}
