package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// TestPageTextTidied: a page's control characters (OSC 0 retitling the
// terminal, CSI 2J clearing it, BEL, C1 CSI) never reach a row, and its
// title and meta description are capped (a 500,000-char <title> and
// description came back whole under char_limit 2000: hostile review 6, 7).
func TestPageTextTidied(t *testing.T) {
	h := newHarness(t)
	huge := strings.Repeat("Long title words ", 30_000)
	body := "<p>Escape \x1b]0;pwned\x07 and \x1b[2J clear and \u009b31m c1 inside an ordinary paragraph of readable article text that is long enough to be the main content of the page.</p>" +
		strings.Repeat("<p>More ordinary article text about harbours, ships and the sea, sentence after sentence.</p>", 20) +
		`<p><a href="/next">next` + "\x1b[31m" + ` page</a></p>`
	doc := "<!doctype html><html><head><meta charset=utf-8><title>Ti\x1b]0;X\x07tle " + huge + "</title>" +
		`<meta name="description" content="` + huge + `"></head><body><article><h1>Heading</h1>` + body + "</article></body></html>"
	s := h.serve("tidy.example", pageHandler(doc))
	svc := h.open()
	limit := 2000
	resp := svc.Extract(context.Background(), web.ExtractRequest{URLs: []any{s.URL("/p")}, CharLimit: &limit, IncludeLinks: true})
	if len(resp.Results) != 1 || !resp.Results[0].OK() {
		t.Fatalf("%+v", resp)
	}
	r := resp.Results[0]
	out, _ := json.Marshal(resp)
	for _, bad := range []string{"\\u001b", "\\u0007", "\\u009b", "\u009b"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("response carries control character %q", bad)
		}
	}
	if n := utf8.RuneCountInString(r.Title); n > web.MaxTitleChars || !strings.HasPrefix(r.Title, "Ti]0;Xtle Long title") {
		t.Errorf("title: %d chars, %.60q", n, r.Title)
	}
	if n := utf8.RuneCountInString(r.Meta.Description); n == 0 || n > web.MaxMetaChars {
		t.Errorf("description: %d chars", n)
	}
	if !strings.Contains(r.Content, "Escape ]0;pwned and [2J clear") {
		t.Errorf("content: %.300q", r.Content)
	}
	for _, l := range r.Links {
		if strings.ContainsRune(l.Text, 0x1b) {
			t.Errorf("link text %q", l.Text)
		}
	}
}

// TestCheckEscapesControls: `check` echoes a URL with control characters
// as visible escapes, never raw.
func TestCheckEscapesControls(t *testing.T) {
	g := egress.New(egress.Options{})
	res := web.CheckURL(context.Background(), g, nil, "http://10.0.0.1/\x1b]0;X\x07", web.CheckMode{})
	b, _ := json.Marshal(res)
	if strings.ContainsAny(res.URL+res.Message, "\x1b\x07") || strings.Contains(string(b), `\u001b`) {
		t.Errorf("check result carries raw controls: %s", b)
	}
	if !strings.Contains(res.URL, `\x1b`) {
		t.Errorf("url %q: want the escape shown", res.URL)
	}
}

// TestFragmentSharesCacheEntry: a fragment is never sent to the server, so
// "p#a" and "p#b" are one fetched page: the second is a cache hit and does
// not carry the first call's fragment (hostile review 19).
func TestFragmentSharesCacheEntry(t *testing.T) {
	h := newHarness(t)
	s := h.serve("frag.test", pageHandler(html("Frag Page", strings.Repeat("<p>Ordinary article text about tides and harbours, long enough to count.</p>", 10))))
	h.open()
	a := h.extract(s.URL("/p#a")).Results[0]
	b := h.extract(s.URL("/p#b")).Results[0]
	c := h.extract(s.URL("/p")).Results[0]
	if !a.OK() || !b.OK() || !c.OK() {
		t.Fatalf("rows: %+v / %+v / %+v", a, b, c)
	}
	if a.Meta.Cached || !b.Meta.Cached || !c.Meta.Cached || s.hits.Load() != 1 {
		t.Errorf("cached a=%v b=%v c=%v, server hits %d (want 1)", a.Meta.Cached, b.Meta.Cached, c.Meta.Cached, s.hits.Load())
	}
	if strings.Contains(b.Meta.FinalURL, "#a") || b.URL != s.URL("/p#b") {
		t.Errorf("hit row: url %s final_url %s", b.URL, b.Meta.FinalURL)
	}
}

// TestOverlongURLJudgedFirst: an input over urlsafe.MaxURLBytes is refused
// as invalid_url before any secret scan, costs its own row only, and is
// echoed abbreviated (hostile review 27: five 3 MB URLs took 14 s and came
// back whole).
func TestOverlongURLJudgedFirst(t *testing.T) {
	h := newHarness(t)
	s := h.serve("ok.test", pageHandler(html("Ok Page", strings.Repeat("<p>Ordinary article text about tides and harbours, long enough to count.</p>", 10))))
	h.open()
	long := "http://example.com/" + strings.Repeat("%25a", 1_000_000)
	start := time.Now()
	resp := h.extract(long, s.URL("/p"), long)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if len(resp.Results) != 3 || resp.Results[0].Reason != "invalid_url" || !resp.Results[1].OK() || resp.Results[2].Reason != "invalid_url" {
		t.Fatalf("rows: %+v", resp.Results)
	}
	if n := len(resp.Results[0].URL); n > 300 {
		t.Errorf("echoed %d bytes", n)
	}
	res := web.CheckURL(context.Background(), egress.New(egress.Options{}), nil, long, web.CheckMode{Extract: true})
	if res.Allowed || res.Reason == nil || *res.Reason != "invalid_url" || len(res.URL) > 300 {
		t.Errorf("check: %+v", res)
	}
}
