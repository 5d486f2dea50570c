package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// article returns a realistic article body of n paragraphs.
func article(n int, word string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d about %s. The %s committee met on Tuesday to discuss the annual report, and members agreed that the findings deserve careful study before any decision is made.</p>\n", i, word, word)
	}
	return b.String()
}

func rowReason(t *testing.T, r web.Result) reason.Code {
	t.Helper()
	if r.OK() {
		return ""
	}
	return r.Reason
}

func TestMixedBatchKeepsOrderAndCostsOnlyBadEntries(t *testing.T) {
	h := newHarness(t)
	good := h.serve("news.test", pageHandler(html("Good News", article(6, "harbour"))))
	blocked := h.serve("ads.blocked.test", pageHandler(html("Ads", article(3, "ads"))))
	h.cfg.Security.WebsiteBlocklist.Enabled = true
	h.cfg.Security.WebsiteBlocklist.Domains = []string{"blocked.test"}
	h.open()

	resp := h.extract(
		blocked.URL("/x"),                 // policy
		"http://10.0.0.5/admin",           // SSRF (private literal)
		42,                                // invalid item
		good.URL("/story"),                // fetched
		map[string]any{"href": "ftp://x"}, // unsupported scheme
		"http://never-resolves.test/",     // DNS failure
	)
	if resp.Success != nil {
		t.Fatalf("whole call refused: %+v", resp)
	}
	if len(resp.Results) != 5 {
		t.Fatalf("got %d rows, want 5 (only the first 5 items are processed)", len(resp.Results))
	}
	want := []reason.Code{reason.PolicyBlocked, reason.SSRFPrivate, reason.InvalidItem, "", reason.UnsupportedScheme}
	for i, w := range want {
		if got := rowReason(t, resp.Results[i]); got != w {
			t.Errorf("row %d reason = %q, want %q (%+v)", i, got, w, resp.Results[i])
		}
	}
	pb := resp.Results[0].BlockedByPolicy
	if pb == nil || pb.Rule != "blocked.test" || pb.Source != "config" || pb.Host != "ads.blocked.test" {
		t.Errorf("blocked_by_policy = %+v", pb)
	}
	if resp.Results[2].URL != "" {
		t.Errorf("invalid item url = %q, want empty", resp.Results[2].URL)
	}
	ok := resp.Results[3]
	if ok.Title != "Good News" || !strings.Contains(ok.Content, "harbour committee") {
		t.Errorf("fetched row: title %q content %.200q", ok.Title, ok.Content)
	}
	if ok.Meta == nil || ok.Meta.Provider != "direct" || ok.Meta.Cached {
		t.Errorf("meta = %+v", ok.Meta)
	}
	if blocked.hits.Load() != 0 {
		t.Errorf("policy-blocked site was contacted %d times", blocked.hits.Load())
	}
	// The private address is never shown back to the agent in the message.
	for _, r := range resp.Results {
		if r.Error != nil && strings.Contains(*r.Error, "127.0.0.1") {
			t.Errorf("message reveals a resolved private IP: %q", *r.Error)
		}
	}
}

func TestDNSFailureIsNotCalledSSRF(t *testing.T) {
	h := newHarness(t)
	h.open()
	resp := h.extract("http://definitely-not-a-real-host-9f3k.example/private")
	r := resp.Results[0]
	if r.Reason != reason.DNSUnresolvable || !strings.Contains(*r.Error, "could not be resolved") {
		t.Fatalf("got %+v", r)
	}
}

func TestSecretInOneURLRefusesWholeCall(t *testing.T) {
	h := newHarness(t)
	s := h.serve("news.test", pageHandler(html("A", article(4, "x"))))
	h.open()
	for _, bad := range []string{
		"https://evil.test/steal?key=sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"https://evil.test/x?t=sk%2Daaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		s.URL("/?token=abc123"),
	} {
		resp := h.extract(s.URL("/one"), bad)
		if resp.Success == nil || *resp.Success || len(resp.Results) != 0 {
			t.Fatalf("%s: not refused: %+v", bad, resp)
		}
		if resp.Reason != reason.SecretInURL && resp.Reason != reason.SensitiveQueryParam {
			t.Fatalf("%s: reason %q", bad, resp.Reason)
		}
		if strings.Contains(resp.Error, "aaaaaaaaaa") || strings.Contains(resp.Error, "abc123") {
			t.Fatalf("refusal echoes the secret: %q", resp.Error)
		}
		b, _ := json.Marshal(resp)
		if !bytes.HasPrefix(b, []byte(`{"success":false,"error":`)) {
			t.Fatalf("shape: %s", b)
		}
	}
	if s.hits.Load() != 0 {
		t.Fatalf("server saw %d requests, want 0", s.hits.Load())
	}
}

func TestRedirectToPrivateAddressRefused(t *testing.T) {
	h := newHarness(t)
	// The private target is a real loopback server with NO allowance: only the
	// guard stands between the redirect and it.
	var innerHits atomic.Int64
	innerSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { innerHits.Add(1) }))
	defer innerSrv.Close()
	inner := struct{ ap netip.AddrPort }{netip.MustParseAddrPort(innerSrv.Listener.Addr().String())}
	hop := h.serve("hop.test", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+itoa(int(inner.ap.Port()))+"/admin", http.StatusFound)
	})
	meta := h.serve("meta.test", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
	})
	h.open()
	resp := h.extract(hop.URL("/go"), meta.URL("/go"))
	if got := resp.Results[0].Reason; got != reason.SSRFPrivate {
		t.Errorf("redirect to loopback: %q %v", got, resp.Results[0].Error)
	}
	if got := resp.Results[1].Reason; got != reason.SSRFMetadata {
		t.Errorf("redirect to metadata: %q", got)
	}
	if innerHits.Load() != 0 {
		t.Errorf("private target reached %d times", innerHits.Load())
	}
}

func TestTruncationFooterAndReadAtOffset(t *testing.T) {
	h := newHarness(t)
	var body strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&body, "<p>Line %04d of the long report: the quick brown fox jumps over the lazy dog.</p>\n", i)
	}
	s := h.serve("long.test", pageHandler(html("Long Report", body.String())))
	h.open()
	resp := h.svc.Extract(context.Background(), web.ExtractRequest{URLs: []any{s.URL("/r")}, CharLimit: 2000})
	r := resp.Results[0]
	if !r.OK() || !r.Meta.Truncated {
		t.Fatalf("not truncated: %+v", r)
	}
	for _, sub := range []string{"[TRUNCATED]", "Full text saved to:", "read_file"} {
		if !strings.Contains(r.Content, sub) {
			t.Fatalf("footer lacks %q:\n%s", sub, r.Content)
		}
	}
	var path string
	var offset int
	for _, line := range strings.Split(r.Content, "\n") {
		if strings.HasPrefix(line, "To read the omitted middle") || strings.Contains(line, "read_file path=") {
			if _, err := fmt.Sscanf(line[strings.Index(line, "path="):], "path=%q offset=%d", &path, &offset); err != nil {
				t.Fatalf("cannot parse read_file hint %q: %v", line, err)
			}
		}
	}
	if path == "" || offset < 2 {
		t.Fatalf("no read_file hint in:\n%s", r.Content)
	}
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(full), "\n")
	firstOmitted := lines[offset-1] // read_file offsets are 1-based line numbers
	head := r.Content[:strings.Index(r.Content, "\n\n[")]
	if strings.Contains(head, firstOmitted) {
		t.Fatalf("line at offset %d (%q) was already shown in the head", offset, firstOmitted)
	}
	headLines := strings.Split(head, "\n")
	lastShown := headLines[len(headLines)-1]
	if lines[offset-2] != lastShown && lines[offset-3] != lastShown {
		t.Fatalf("offset %d does not follow the head: last shown %q, file has %q / %q", offset, lastShown, lines[offset-3], lines[offset-2])
	}
	if r.Meta.OriginalChars != utf8.RuneCountInString(strings.TrimRight(string(full), "\n")) && r.Meta.OriginalChars != utf8.RuneCount(full) {
		t.Fatalf("original_chars %d vs stored %d", r.Meta.OriginalChars, utf8.RuneCount(full))
	}
}

func TestCacheHitServedWithoutRequestAndVisible(t *testing.T) {
	h := newHarness(t)
	s := h.serve("cached.test", pageHandler(html("Cached Page", article(5, "tide"))))
	h.open()
	first := h.extract(s.URL("/p"))
	if !first.Results[0].OK() || first.Results[0].Meta.Cached {
		t.Fatalf("first: %+v", first.Results[0])
	}
	h.now = h.now.Add(90 * time.Second)
	second := h.extract(s.URL("/p"))
	r := second.Results[0]
	if !r.OK() || r.Meta == nil || !r.Meta.Cached || r.Meta.AgeS != 90 {
		t.Fatalf("second: %+v meta %+v", r, r.Meta)
	}
	if r.Content != first.Results[0].Content || r.Title != "Cached Page" {
		t.Fatal("cached content differs")
	}
	if s.hits.Load() != 1 {
		t.Fatalf("server hits = %d, want 1", s.hits.Load())
	}
	// Past the TTL (20 min default) the page is fetched again.
	h.now = h.now.Add(21 * time.Minute)
	third := h.extract(s.URL("/p"))
	if third.Results[0].Meta.Cached || s.hits.Load() != 2 {
		t.Fatalf("after TTL: cached=%v hits=%d", third.Results[0].Meta.Cached, s.hits.Load())
	}
}

func TestPrivateAllowedURLsAreNeverCached(t *testing.T) {
	h := newHarness(t)
	h.cfg.Security.AllowPrivateURLs = true
	srv := h.serve("intranet.test", pageHandler(html("Intranet", article(4, "payroll"))))
	h.sites = nil // reach it through allow_private_urls, not the test allowance
	h.open()
	for i := 0; i < 2; i++ {
		r := h.extract(srv.URL("/"))
		if !r.Results[0].OK() || r.Results[0].Meta.Cached {
			t.Fatalf("call %d: %+v", i, r.Results[0])
		}
	}
	if srv.hits.Load() != 2 {
		t.Fatalf("hits = %d, want 2 (never cached)", srv.hits.Load())
	}
}

func TestGBKDeclaredOnlyInHeader(t *testing.T) {
	h := newHarness(t)
	text := "<html><head><title>新闻标题</title></head><body><article><h1>新闻标题</h1>" +
		strings.Repeat("<p>今天天气很好，我们在公园里散步，讨论了很多有趣的话题，大家都很开心。</p>", 8) + "</article></body></html>"
	enc, err := simplifiedchinese.GBK.NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	s := h.serve("gbk.test", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=GBK")
		_, _ = w.Write([]byte(enc))
	})
	h.open()
	r := h.extract(s.URL("/")).Results[0]
	if !r.OK() || !strings.Contains(r.Content, "今天天气很好") || strings.ContainsRune(r.Content, utf8.RuneError) {
		t.Fatalf("GBK page: %+v", r)
	}
}

func TestUTF16WithBOM(t *testing.T) {
	h := newHarness(t)
	text := html("Grüße aus Köln", article(5, "Köln"))
	enc, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	s := h.serve("utf16.test", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(enc))
	})
	h.open()
	r := h.extract(s.URL("/")).Results[0]
	if !r.OK() || r.Title != "Grüße aus Köln" || !strings.Contains(r.Content, "Köln committee") {
		t.Fatalf("UTF-16 page: title %q %+v", r.Title, r)
	}
}

func TestTwentyMegabytePageCappedCleanly(t *testing.T) {
	h := newHarness(t)
	// Distinct paragraphs: a paragraph repeated word for word is given once
	// (content.dropRepeatedBlocks), and this test is about the body cap.
	var b strings.Builder
	b.WriteString("<html><head><title>Huge</title></head><body><article>")
	for i := 0; b.Len() < 20<<20; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d. %s</p>\n", i, strings.Repeat("Ünïcödé text that fills the page. ", 30))
	}
	b.WriteString("</article></body></html>")
	big := b.String()
	s := h.serve("huge.test", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(big))
	})
	h.open()
	r := h.extract(s.URL("/")).Results[0]
	if !r.OK() {
		t.Fatalf("huge page failed: %v", *r.Error)
	}
	if !utf8.ValidString(r.Content) || strings.ContainsRune(r.Content, utf8.RuneError) {
		t.Fatal("content not clean UTF-8")
	}
	if !r.Meta.Truncated || len(r.Meta.Notes) == 0 || !strings.Contains(r.Meta.Notes[0], "capped") {
		t.Fatalf("meta = %+v", r.Meta)
	}
}

func TestServerThatNeverAnswersTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accept and never answer
		}
	}()
	h := newHarness(t)
	h.cfg.Web.Direct.Timeout = 1500 * time.Millisecond
	h.cfg.Security.AllowPrivateURLs = true
	h.open()
	start := time.Now()
	r := h.extract("http://" + ln.Addr().String() + "/").Results[0]
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %v", took)
	}
	if r.Reason != reason.FetchTimeout {
		t.Fatalf("got %+v", r)
	}
}

func TestExtractTimeoutAndInterrupt(t *testing.T) {
	h := newHarness(t)
	reached := make(chan string, 8) // the paths that reached the server
	slow := h.serve("slow.test", func(w http.ResponseWriter, r *http.Request) {
		select {
		case reached <- r.URL.Path:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	h.cfg.Web.ExtractTimeout = 500 * time.Millisecond
	h.open()
	r := h.extract(slow.URL("/")).Results[0]
	if r.Reason != reason.ExtractTimeout || !strings.Contains(*r.Error, "web.extract_timeout") {
		t.Fatalf("timeout row: %+v", r)
	}

	h.cfg.Web.ExtractTimeout = 0
	h.open()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // cancel once both fetches are in flight
		for n, deadline := 0, time.After(10*time.Second); n < 2; {
			select {
			case p := <-reached:
				if p == "/a" || p == "/b" {
					n++
				}
			case <-deadline:
				n = 2
			}
		}
		cancel()
	}()
	resp := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{slow.URL("/a"), slow.URL("/b")}})
	for i, r := range resp.Results {
		if r.Reason != reason.Interrupted {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
}

func TestPreWithHashLinesAndCodeFence(t *testing.T) {
	h := newHarness(t)
	code := "# not a heading\n#include <stdio.h>\nint main() { return 0; }"
	s := h.serve("code.test", pageHandler(html("Code Sample", article(3, "compilers")+
		`<pre><code class="language-c">`+strings.ReplaceAll(code, "<", "&lt;")+`</code></pre>`+article(2, "linkers"))))
	h.open()
	r := h.extract(s.URL("/")).Results[0]
	if !r.OK() || !strings.Contains(r.Content, "```c\n"+code+"\n```") {
		t.Fatalf("code block not byte-exact:\n%s", r.Content)
	}
}

func TestDebugFileWritten(t *testing.T) {
	h := newHarness(t)
	s := h.serve("dbg.test", pageHandler(html("Debug", article(4, "logs"))))
	h.open()
	svc, _ := web.Open(web.Env{Home: h.home, Config: h.cfg, Resolver: h.res, AllowAddrPorts: []netip.AddrPort{s.ap}, Debug: true})
	svc.Extract(context.Background(), web.ExtractRequest{URLs: []any{s.URL("/")}})
	files, _ := filepath.Glob(filepath.Join(h.home, "logs", "web_tools_debug_*.json"))
	if len(files) != 1 {
		t.Fatalf("debug files: %v", files)
	}
	var rec map[string]any
	b, _ := os.ReadFile(files[0])
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec["pages_extracted"].(float64) != 1 || rec["truncation_metrics"] == nil {
		t.Fatalf("debug record: %s", b)
	}
	// Owner-only, like the cache and the store: the record names the URLs read.
	for path, want := range map[string]os.FileMode{filepath.Join(h.home, "logs"): 0o700, files[0]: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, want mode %o", path, fi.Mode(), want)
		}
	}
}

// One slow page must not cost the pages that finished: rows are collected as
// each page is done, and only the unfinished one gets extract_timeout.
func TestSlowPageCostsOnlyItsEntry(t *testing.T) {
	h := newHarness(t)
	fast := h.serve("fast.test", pageHandler(html("Fast", article(4, "quick"))))
	slow := h.serve("slow.test", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	h.cfg.Web.ExtractTimeout = 700 * time.Millisecond
	h.open()
	resp := h.extract(fast.URL("/"), slow.URL("/"))
	if !resp.Results[0].OK() || resp.Results[0].Title != "Fast" {
		t.Fatalf("fast row lost: %+v", resp.Results[0])
	}
	if resp.Results[1].Reason != reason.ExtractTimeout {
		t.Fatalf("slow row: %+v", resp.Results[1])
	}
}

// A link row whose url is blank and whose href holds the target (the shape
// {"url":"","href":"…"}) is its href, never an entry with an empty url; an
// item with neither says what it was.
func TestBlankURLFallsBackToHref(t *testing.T) {
	h := newHarness(t)
	good := h.serve("news.test", pageHandler(html("Good News", article(6, "harbour"))))
	h.open()
	resp := h.extract(
		map[string]any{"url": "", "href": good.URL("/story")},
		map[string]any{"url": "  ", "text": "x"},
		map[string]any{"title": "x"},
	)
	if resp.Success != nil || len(resp.Results) != 3 {
		t.Fatalf("response: %+v", resp)
	}
	if r := resp.Results[0]; r.URL != good.URL("/story") || !strings.Contains(r.Content, "harbour committee") {
		t.Errorf("blank url with href: %+v", r)
	}
	for i, want := range map[int]string{1: `url and href are blank`, 2: `without url or href (keys "title")`} {
		r := resp.Results[i]
		if rowReason(t, r) != reason.InvalidItem || r.Error == nil || !strings.Contains(*r.Error, want) {
			t.Errorf("row %d: %+v, want invalid_item saying %q", i, r, want)
		}
	}
}
