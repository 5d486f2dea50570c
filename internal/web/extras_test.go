package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func TestMaxAgeZeroRefetchesAndMaxAgeBounds(t *testing.T) {
	h := newHarness(t)
	s := h.serve("fresh.test", pageHandler(html("Fresh Page", article(5, "tide"))))
	h.open()
	ctx := context.Background()
	get := func(maxAge *int) web.Result {
		t.Helper()
		r := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{s.URL("/p")}, MaxAgeS: maxAge}).Results[0]
		if !r.OK() {
			t.Fatalf("row %+v", r)
		}
		return r
	}
	zero, sixty := 0, 60
	get(nil) // fetched and cached
	h.now = h.now.Add(90 * time.Second)
	if r := get(nil); !r.Meta.Cached || r.Meta.AgeS != 90 || s.hits.Load() != 1 {
		t.Fatalf("default: cached=%v age=%d hits=%d", r.Meta.Cached, r.Meta.AgeS, s.hits.Load())
	}
	// max_age_s 60: the 90 s old page is too old, so it is fetched again.
	if r := get(&sixty); r.Meta.Cached || r.Meta.AgeS != 0 || s.hits.Load() != 2 {
		t.Fatalf("max_age_s 60: cached=%v hits=%d", r.Meta.Cached, s.hits.Load())
	}
	h.now = h.now.Add(10 * time.Second)
	// The refetch was cached: 10 s old now, within 60.
	if r := get(&sixty); !r.Meta.Cached || r.Meta.AgeS != 10 || s.hits.Load() != 2 {
		t.Fatalf("max_age_s 60 after refetch: cached=%v age=%d hits=%d", r.Meta.Cached, r.Meta.AgeS, s.hits.Load())
	}
	// max_age_s 0 always refetches.
	for i := 0; i < 2; i++ {
		if r := get(&zero); r.Meta.Cached || s.hits.Load() != int64(3+i) {
			t.Fatalf("max_age_s 0 #%d: cached=%v hits=%d", i, r.Meta.Cached, s.hits.Load())
		}
	}
}

func TestStalePageNeverWrittenOverFreshOne(t *testing.T) {
	h := newHarness(t)
	version := 0
	s := h.serve("race.test", func(w http.ResponseWriter, r *http.Request) {
		version++
		pageHandler(html(fmt.Sprintf("Version %d", version), article(5, "tide")))(w, r)
	})
	h.open()
	// A page whose fetch began later is kept whatever order the writes come
	// in: the fetch begun at t0+10 s finishes first, the one begun at t0
	// (a slow one) last.
	t0 := h.now
	zero := 0
	ctx := context.Background()
	h.now = t0.Add(10 * time.Second)
	fresh := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{s.URL("/p")}, MaxAgeS: &zero}).Results[0]
	h.now = t0
	stale := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{s.URL("/p")}, MaxAgeS: &zero}).Results[0]
	if fresh.Title != "Version 1" || stale.Title != "Version 2" {
		t.Fatalf("titles %q %q", fresh.Title, stale.Title)
	}
	h.now = t0.Add(20 * time.Second)
	got := h.extract(s.URL("/p")).Results[0]
	if !got.Meta.Cached || got.Title != "Version 1" || got.Meta.AgeS != 10 {
		t.Fatalf("cache holds %q (cached=%v age=%d), want the page fetched later (Version 1, 10 s old)", got.Title, got.Meta.Cached, got.Meta.AgeS)
	}
}

func TestIncludeLinksJudgedByGates(t *testing.T) {
	h := newHarness(t)
	h.cfg.Security.WebsiteBlocklist.Enabled = true
	h.cfg.Security.WebsiteBlocklist.Domains = []string{"blocked.test"}
	h.res.set("private.test", "10.0.0.7")
	h.res.set("ok.test", "93.184.216.34")
	h.res.set("blocked.test", "93.184.216.35")
	var list strings.Builder
	list.WriteString("<p>A list of links for the harbour archive, kept by the harbour master, with every link the archive holds.</p><ul>")
	targets := []string{
		"/local-page", "http://ok.test/a", "https://ok.test/b?x=1", "http://blocked.test/c", "http://private.test/d",
		"http://169.254.169.254/latest/meta-data/", "http://nxdomain.test/e", "http://ok.test/f?api_key=sk-live-0123456789abcdef0123",
	}
	for i, u := range targets {
		fmt.Fprintf(&list, `<li><a href="%s">Link %d</a></li>`, u, i)
	}
	list.WriteString(`<li><a href="http://ok.test/a#again">Again</a></li><li><a href="ftp://ok.test/x">ftp</a></li></ul>`)
	s := h.serve("links.test", pageHandler(html("Link list", list.String())))
	h.open()
	ctx := context.Background()
	resp := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{s.URL("/list")}, IncludeLinks: true})
	r := resp.Results[0]
	if !r.OK() {
		t.Fatalf("row %+v", r)
	}
	want := map[string]reason.Code{
		s.URL("/local-page"):                       "",
		"http://ok.test/a":                         "",
		"https://ok.test/b?x=1":                    "",
		"http://blocked.test/c":                    reason.PolicyBlocked,
		"http://private.test/d":                    reason.SSRFPrivate,
		"http://169.254.169.254/latest/meta-data/": reason.SSRFMetadata,
		"http://nxdomain.test/e":                   reason.DNSUnresolvable,
	}
	got := map[string]web.Link{}
	for _, l := range r.Links {
		got[l.URL] = l
	}
	for u, code := range want {
		l, ok := got[u]
		if !ok {
			t.Errorf("link %s missing (links %+v)", u, r.Links)
			continue
		}
		if l.Allowed != (code == "") || l.Reason != code {
			t.Errorf("link %s: allowed=%v reason=%q, want reason %q", u, l.Allowed, l.Reason, code)
		}
	}
	// The secret-bearing link is listed as refused, never allowed.
	secret := 0
	for _, l := range r.Links {
		if strings.Contains(l.URL, "api_key") {
			secret++
			if l.Allowed || l.Gate != reason.GateSecret {
				t.Errorf("secret link judged %+v", l)
			}
			// Judged on the raw URL, shown redacted (like content).
			if strings.Contains(l.URL, "sk-live-0123456789abcdef0123") || !strings.Contains(l.URL, "[REDACTED]") {
				t.Errorf("secret link not redacted: %+v", l)
			}
		}
	}
	if secret != 1 || len(r.Links) != len(targets) {
		t.Errorf("got %d links (want %d, distinct, ftp dropped), secret %d", len(r.Links), len(targets), secret)
	}
	if r.Links[0].URL != s.URL("/local-page") || r.Links[0].Text != "Link 0" || !r.Links[0].Main {
		t.Errorf("first link %+v", r.Links[0])
	}
	// Without include_links, no links; from the cache, the same links.
	if plain := h.extract(s.URL("/list")).Results[0]; plain.Links != nil || !plain.Meta.Cached {
		t.Errorf("without include_links: links=%v cached=%v", plain.Links, plain.Meta.Cached)
	}
	again := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{s.URL("/list")}, IncludeLinks: true}).Results[0]
	a, _ := json.Marshal(again.Links)
	b, _ := json.Marshal(r.Links)
	if !again.Meta.Cached || string(a) != string(b) {
		t.Errorf("cached links differ:\n%s\n%s", a, b)
	}
}

// A page's links choose the hosts Gatehouse resolves: links to hosts whose
// name server never answers cost the call its web.extract_timeout deadline
// (plus linkJudgeFloor), not a lookup per link; each is reported dns_timeout
// (not judged, so not allowed), the rows and their other links are kept, and
// a host linked from both rows is looked up once (breaker5 D25: 200 such
// links stalled one extract for 4 minutes).
func TestIncludeLinksBoundedWhenDNSNeverAnswers(t *testing.T) {
	h := newHarness(t)
	h.cfg.Web.ExtractTimeout = 3 * time.Second
	h.res.set("ok.test", "93.184.216.34")
	h.res.set("private.test", "10.0.0.7")
	h.res.hang = func(host string) bool { return strings.HasPrefix(host, "slowdns") }
	var list strings.Builder
	list.WriteString("<p>A list of links for the harbour archive, kept by the harbour master, with every link the archive holds.</p><ul>")
	list.WriteString(`<li><a href="http://ok.test/a">Good</a></li><li><a href="http://private.test/b">Private</a></li><li><a href="http://93.184.216.34/lit">Literal</a></li>`)
	const slow = 150
	for i := range slow {
		fmt.Fprintf(&list, `<li><a href="http://slowdns%d.test/">Slow %d</a></li>`, i, i)
	}
	list.WriteString(`<li><a href="http://slowdns0.test/again">Slow again</a></li></ul>`)
	s := h.serve("links.test", pageHandler(html("Link list", list.String())))
	h.open()
	done := make(chan *web.ExtractResponse, 1)
	start := time.Now()
	go func() {
		done <- h.svc.Extract(context.Background(), web.ExtractRequest{URLs: []any{s.URL("/one"), s.URL("/two")}, IncludeLinks: true})
	}()
	var resp *web.ExtractResponse
	select {
	case resp = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("web_extract with include_links has not returned after 60 s (web.extract_timeout 3 s)")
	}
	took := time.Since(start)
	if took > 3*time.Second+2*time.Second+5*time.Second { // deadline + floor + a loaded machine's slack
		t.Errorf("the call took %v with web.extract_timeout 3 s", took)
	}
	t.Logf("call took %v", took)
	for _, r := range resp.Results {
		if !r.OK() || !strings.Contains(r.Content, "harbour master") {
			t.Fatalf("row lost: %+v", r)
		}
		if len(r.Links) != slow+4 {
			t.Fatalf("%s: %d links, want %d", r.URL, len(r.Links), slow+4)
		}
		timedOut := 0
		for _, l := range r.Links {
			switch {
			case l.URL == "http://ok.test/a" || l.URL == "http://93.184.216.34/lit":
				if !l.Allowed || l.Reason != "" {
					t.Errorf("%s judged %+v, want allowed", l.URL, l)
				}
			case l.URL == "http://private.test/b":
				if l.Allowed || l.Reason != reason.SSRFPrivate {
					t.Errorf("%s judged %+v, want ssrf_private", l.URL, l)
				}
			case strings.HasPrefix(l.URL, "http://slowdns"):
				if l.Allowed || l.Reason != reason.DNSTimeout || l.Gate != reason.GateSSRF {
					t.Errorf("%s judged %+v, want dns_timeout, not allowed", l.URL, l)
				}
				timedOut++
			default:
				t.Errorf("unexpected link %+v", l)
			}
		}
		if timedOut != slow+1 {
			t.Errorf("%d dns_timeout links, want %d", timedOut, slow+1)
		}
	}
	if n := h.res.lookupsOf("ok.test"); n != 1 {
		t.Errorf("ok.test looked up %d times for two rows, want once", n)
	}
	if n := h.res.lookupsOf("slowdns0.test"); n > 1 {
		t.Errorf("slowdns0.test looked up %d times, want at most once", n)
	}
}

func TestPageMetadataInMeta(t *testing.T) {
	h := newHarness(t)
	page := `<!doctype html><html lang="de"><head><meta charset=utf-8><title>Hafen</title>
<meta name="description" content="Der Hafen bei Nacht."><meta name="author" content="Anna Wächter">
<meta property="og:site_name" content="Küstenblatt"><link rel="canonical" href="/hafen">
<script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2024-02-01T08:00:00Z"}</script>
</head><body><article><h1>Hafen</h1>` + article(5, "tide") + `</article></body></html>`
	s := h.serve("meta.test", pageHandler(page))
	h.open()
	for _, cached := range []bool{false, true} {
		r := h.extract(s.URL("/hafen?ref=x")).Results[0]
		if !r.OK() || r.Meta.Cached != cached {
			t.Fatalf("row %+v", r)
		}
		m := r.Meta
		if m.Description != "Der Hafen bei Nacht." || m.Author != "Anna Wächter" || m.SiteName != "Küstenblatt" ||
			m.Language != "de" || m.CanonicalURL != s.URL("/hafen") || m.Published != "2024-02-01T08:00:00Z" {
			t.Errorf("cached=%v meta %+v", cached, m.PageMeta)
		}
		b, _ := json.Marshal(r)
		if !strings.Contains(string(b), `"canonical_url":`) || strings.Contains(string(b), `"links"`) {
			t.Errorf("row JSON %s", b)
		}
	}
}
