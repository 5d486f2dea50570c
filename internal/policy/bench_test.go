package policy

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// BenchmarkCheck is the website policy's cost per URL with a small
// blocklist enabled: ExtractHost (a WHATWG parse, urlsafe.Parse) plus the
// rule scan, for a canonical URL that no rule matches.
func BenchmarkCheck(b *testing.B) {
	p, warns := Load(true, []string{"blocked.example", "*.tracking.example", "10.0.0.5", "https://www.evil.test/"}, nil, b.TempDir())
	if len(warns) != 0 {
		b.Fatal(warns)
	}
	const raw = "https://example.com/articles/2024/some-page?utm_source=x&id=42#top"
	b.ReportAllocs()
	for b.Loop() {
		if p.Check(raw) != nil {
			b.Fatal("blocked")
		}
	}
}

// BenchmarkCheckURL is BenchmarkCheck for a URL the caller has already
// parsed (the pipeline's case): the rule scan alone.
func BenchmarkCheckURL(b *testing.B) {
	p, _ := Load(true, []string{"blocked.example", "*.tracking.example", "10.0.0.5", "https://www.evil.test/"}, nil, b.TempDir())
	u, err := urlsafe.Parse("https://example.com/articles/2024/some-page?utm_source=x&id=42#top")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if p.CheckURL(u) != nil {
			b.Fatal("blocked")
		}
	}
}
