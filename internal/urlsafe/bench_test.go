package urlsafe

import "testing"

// BenchmarkGateNoDNS is the per-URL cost of the string gates before DNS:
// Parse + CheckSecrets(extract) + CheckStatic.
func BenchmarkGateNoDNS(b *testing.B) {
	const raw = "https://example.com/articles/2024/some-page?utm_source=x&id=42#top"
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
// canonicalisation (upper case, IDNA, a space), so Parse goes through the
// WHATWG library.
func BenchmarkGateNoDNSLibrary(b *testing.B) {
	const raw = "https://Bücher.example/articles/2024/some page?utm_source=x&id=42#top"
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
