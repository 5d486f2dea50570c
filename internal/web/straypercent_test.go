package web_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// TestStrayPercentPathFetched: a URL whose path holds a '%' that starts no
// percent-encoded octet is valid (WHATWG keeps it; browsers fetch it) and
// allowed by check; extract fetches it with the '%' sent as %25 and reports
// the URL as asked. It failed with invalid_url "Blocked: the URL could not
// be turned into a request." (breaker5 D6).
func TestStrayPercentPathFetched(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	var got []string
	s := h.serve("pct.example", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.EscapedPath())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(html("Percent", "<p>Discount page for "+r.URL.Path+" with enough text to be the main content of the page.</p>")))
	})
	h.open()
	urls := []string{s.URL("/100%"), s.URL("/%E0%A4%A"), s.URL("/a?q=50%off")}
	resp := h.extract(urls[0], urls[1], urls[2])
	for i, r := range resp.Results {
		if !r.OK() {
			t.Errorf("row %d (%s): %+v", i, urls[i], r)
			continue
		}
		if r.URL != urls[i] {
			t.Errorf("row %d url = %q, want %q", i, r.URL, urls[i])
		}
		if r.Meta != nil && r.Meta.FinalURL != "" && r.Meta.FinalURL != urls[i] {
			t.Errorf("row %d final_url = %q, want the URL as asked", i, r.Meta.FinalURL)
		}
		if r.Error != nil && strings.HasPrefix(*r.Error, "Blocked:") {
			t.Errorf("row %d: %s", i, *r.Error)
		}
	}
	mu.Lock()
	slices.Sort(got)
	if want := []string{"/%E0%A4%25A", "/100%25", "/a"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("server saw paths %q, want %q", got, want)
	}
	mu.Unlock()
	for _, u := range urls {
		if c := web.CheckURL(context.Background(), h.svc.Guard(), h.svc.Policy(), u, web.CheckMode{Extract: true}); !c.Allowed {
			t.Errorf("check %s = %+v, want allowed like extract", u, c)
		}
	}
}
