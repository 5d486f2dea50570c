package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SearchFake is a SearXNG-shaped search backend: GET /search?q=…&format=json
// answers SearXNG's documented JSON response (query, number_of_results,
// results[] {url, title, content, engine, engines, positions, score,
// category, parsed_url, template}, answers, corrections, infoboxes,
// suggestions, unresponsive_engines), as internal/web/provider/vendors'
// SearXNG client reads it. It counts the queries that reach it, and holds
// each answer for Delay so that concurrent identical searches overlap.
type SearchFake struct {
	Addr  string
	Delay time.Duration
	pages *PageSite
	srv   *http.Server
	mu    sync.Mutex
	hits  map[string]int
	times map[string][]time.Time
	total int
}

func startSearchFake(pages *PageSite, delay time.Duration) (*SearchFake, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &SearchFake{Addr: ln.Addr().String(), Delay: delay, pages: pages, hits: map[string]int{}, times: map[string][]time.Time{}}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 5 * time.Second}
	go f.srv.Serve(ln)
	return f, nil
}

// URL is the SEARXNG_URL of the fake.
func (f *SearchFake) URL() string { return "http://" + f.Addr }

func (f *SearchFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
		http.Error(w, "forbidden: format=json required", http.StatusForbidden)
		return
	}
	q := r.URL.Query().Get("q")
	f.mu.Lock()
	f.hits[q]++
	f.times[q] = append(f.times[q], time.Now())
	f.total++
	f.mu.Unlock()
	time.Sleep(f.Delay)
	type result struct {
		URL       string   `json:"url"`
		Title     string   `json:"title"`
		Content   string   `json:"content"`
		Engine    string   `json:"engine"`
		Engines   []string `json:"engines"`
		Positions []int    `json:"positions"`
		Score     float64  `json:"score"`
		Category  string   `json:"category"`
		ParsedURL []string `json:"parsed_url"`
		Template  string   `json:"template"`
	}
	var rs []result
	h := fnv.New32a()
	h.Write([]byte(q))
	for i := range 5 {
		n := (int(h.Sum32()) + i) % shortPages
		if n < 0 {
			n = -n
		}
		u := f.pages.URL(shortPath(n))
		rs = append(rs, result{URL: u, Title: fmt.Sprintf("Fleet page %d about %s", n, q), Content: "A page about " + q + ".",
			Engine: "fake", Engines: []string{"fake"}, Positions: []int{i + 1}, Score: 1 / float64(i+1), Category: "general",
			ParsedURL: []string{"http", f.pages.Addr, shortPath(n), "", "", ""}, Template: "default.html"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"query": q, "number_of_results": len(rs), "results": rs,
		"answers": []any{}, "corrections": []any{}, "infoboxes": []any{}, "suggestions": []any{}, "unresponsive_engines": []any{},
	})
}

// Hits returns how many requests for q reached the fake.
func (f *SearchFake) Hits(q string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[q]
}

// Arrivals describes when the requests for q arrived, relative to the
// first ("+0ms, +612ms"), for failure messages.
func (f *SearchFake) Arrivals(q string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var parts []string
	for _, t := range f.times[q] {
		parts = append(parts, fmt.Sprintf("+%dms", t.Sub(f.times[q][0]).Milliseconds()))
	}
	return strings.Join(parts, ", ")
}

// Total returns how many search requests reached the fake.
func (f *SearchFake) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}

// PageSite serves the pages the tasks extract, on PublicIP (a "public"
// origin inside the namespace): shortPages short articles (a few thousand
// characters: returned whole) at /short/N, and long ones (about 40,000
// characters: longer than web.extract_char_limit, so web_extract truncates
// them and stores the full text) at /long/<principal>/N, one set per
// principal, so a stored page of one principal is never also stored by the
// other. It counts the requests that reach it (origin fetches).
type PageSite struct {
	Addr  string
	srv   *http.Server
	mu    sync.Mutex
	hits  map[string]int
	total int
}

// Page counts of the site.
const (
	shortPages = 24
	longPages  = 12
)

func shortPath(n int) string { return fmt.Sprintf("/short/%d", n) }

func longPath(principal string, n int) string {
	return fmt.Sprintf("/long/%s/%d", strings.ToLower(principal), n)
}

func startPageSite(ip string) (*PageSite, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	s := &PageSite{Addr: ln.Addr().String(), hits: map[string]int{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL returns the absolute URL of path on the site.
func (s *PageSite) URL(path string) string { return "http://" + s.Addr + path }

// Hits returns the origin fetches of path.
func (s *PageSite) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// Total returns the origin fetches of every page.
func (s *PageSite) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

func (s *PageSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var paras int
	switch {
	case strings.HasPrefix(p, "/short/"):
		paras = 10
	case strings.HasPrefix(p, "/long/"):
		paras = 110
	default:
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.hits[p]++
	s.total++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT")
	w.Write([]byte(article(p, paras)))
}

// words is the vocabulary of the generated articles.
var words = strings.Fields(`harbour tide vessel anchor rope channel pilot beacon current shoal
	ledger cargo crane berth quay lantern gull keel mast sail breeze fog reef chart compass
	morning evening season river estuary delta marsh meadow orchard village market bridge
	mill granary weaver baker mason carpenter smith council charter archive museum library`)

// article returns a deterministic HTML article for path with paras
// paragraphs of about 60 words each (about 380 characters per paragraph).
func article(path string, paras int) string {
	h := fnv.New64a()
	h.Write([]byte(path))
	x := h.Sum64() | 1
	next := func() int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(len(words)))
	}
	var b strings.Builder
	title := "Fleet page " + path
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>` + html.EscapeString(title) + `</title>`)
	b.WriteString(`<meta name="description" content="A generated article for the fleet load test."></head><body>`)
	b.WriteString(`<nav><a href="/">Home</a> <a href="/about">About</a></nav><main><article><h1>` + html.EscapeString(title) + `</h1>`)
	for i := range paras {
		if i%12 == 0 {
			b.WriteString("<h2>Section " + strconv.Itoa(i/12+1) + "</h2>")
		}
		b.WriteString("<p>")
		for j := range 60 {
			if j > 0 {
				b.WriteByte(' ')
			}
			w := words[next()]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
		}
		b.WriteString(".</p>\n")
	}
	b.WriteString(`</article></main><footer>Generated for bench/fleet.</footer></body></html>`)
	return b.String()
}
