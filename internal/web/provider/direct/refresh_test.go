package direct_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
)

// TestMetaRefreshFollowedAsRedirectHop: a <meta http-equiv="refresh"> with a
// short delay on a page with little text of its own is followed as a
// redirect hop (hostile review session 6, D15), through the same gates as an
// HTTP redirect: a hop to the metadata address, a blocklisted host or a
// secret-carrying URL is refused before anything is sent to it, and a
// refresh loop stops at the redirect limit. A refresh that is not followed
// (long delay, a page with content) is named in the notes.
func TestMetaRefreshFollowedAsRedirectHop(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	count := func(k string) int { mu.Lock(); defer mu.Unlock(); return hits[k] }
	blocked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits["blocked"]++
		mu.Unlock()
		fmt.Fprint(w, story)
	}))
	t.Cleanup(blocked.Close)
	bap := netip.MustParseAddrPort(blocked.Listener.Addr().String())
	refresh := func(content string) string {
		return `<html><head><meta http-equiv="refresh" content="` + content + `"></head><body><p>Redirecting</p></body></html>`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/mr":
			fmt.Fprint(w, `<html><head><meta http-equiv="refresh" content="0; url=http://169.254.169.254/latest/"></head><body></body></html>`)
		case "/mr2":
			fmt.Fprint(w, refresh("0; url=/story"))
		case "/quoted":
			fmt.Fprint(w, refresh(`3;URL='/story'`))
		case "/blocked":
			fmt.Fprint(w, refresh(fmt.Sprintf("0; url=http://ads.blocked.test:%d/x", bap.Port())))
		case "/secret":
			fmt.Fprint(w, refresh("0; url=/story?access_token=abc123"))
		case "/loop":
			fmt.Fprint(w, refresh("0; url=/loop"))
		case "/slow":
			fmt.Fprint(w, refresh("60; url=/story"))
		case "/content":
			fmt.Fprint(w, strings.Replace(story, "<head>", `<head><meta http-equiv="refresh" content="0; url=/story">`, 1))
		case "/story":
			fmt.Fprint(w, story)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	sap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	pol, _ := policy.Load(true, []string{"blocked.test"}, nil, t.TempDir())
	g := egress.New(egress.Options{
		Resolver:       mapResolver{"ads.blocked.test": netip.MustParseAddr("127.0.0.1"), "start.test": netip.MustParseAddr("127.0.0.1")},
		AllowAddrPorts: []netip.AddrPort{bap, sap},
		Policy:         pol,
		MaxRedirects:   3,
	})
	d := direct.New(direct.Options{Guard: g})
	base := fmt.Sprintf("http://start.test:%d", sap.Port())
	fetch := func(path string) direct.Page { return d.Fetch(context.Background(), base+path) }

	for _, path := range []string{"/mr2", "/quoted"} {
		p := fetch(path)
		if p.Err != nil || !strings.Contains(p.Content, "storm broke the lamp") || p.FinalURL != base+"/story" {
			t.Errorf("%s: err=%v final=%q content=%q", path, p.Err, p.FinalURL, p.Content)
		}
	}
	if n := count("/story"); n != 2 {
		t.Errorf("/story fetched %d times, want 2", n)
	}

	p := fetch("/mr")
	if rerr := reason.As(p.Err); rerr == nil || rerr.Code != reason.SSRFMetadata || !strings.Contains(rerr.Message, "redirect hop 1") {
		t.Errorf("/mr: err = %v, want ssrf_metadata for redirect hop 1, as an HTTP redirect there gets", p.Err)
	} else {
		t.Logf("/mr: %s: %s", rerr.Code, rerr.Message)
	}

	p = fetch("/blocked")
	if reason.Of(p.Err) != reason.PolicyBlocked || count("blocked") != 0 {
		t.Errorf("/blocked: err = %v, blocked server hit %d times; want policy_blocked and 0", p.Err, count("blocked"))
	}

	before := count("/story")
	p = fetch("/secret")
	if reason.Of(p.Err) != reason.SensitiveQueryParam || count("/story") != before {
		t.Errorf("/secret: err = %v, /story hits %d → %d; want sensitive_query_param and no request", p.Err, before, count("/story"))
	}

	p = fetch("/loop")
	if reason.Of(p.Err) != reason.TooManyRedirects || count("/loop") != 4 {
		t.Errorf("/loop: err = %v after %d requests; want too_many_redirects after 4 (the first and 3 hops)", p.Err, count("/loop"))
	}

	before = count("/story")
	for path, why := range map[string]string{"/slow": "delay", "/content": "content of its own"} {
		p = fetch(path)
		if p.Err != nil || p.FinalURL != base+path || !strings.Contains(strings.Join(p.Notes, "\n"), base+"/story") || !strings.Contains(strings.Join(p.Notes, "\n"), why) {
			t.Errorf("%s: err=%v final=%q notes=%q; want the page itself, its refresh target named", path, p.Err, p.FinalURL, p.Notes)
		}
	}
	if count("/story") != before {
		t.Errorf("a refresh that is not followed was fetched")
	}
}

// TestMetaRefreshStrayPercentFollowed: a refresh target with a '%' that
// starts no percent-encoded octet ("/100%", "/a%zz") is followed as
// browsers follow it (the WHATWG URL Standard keeps such a '%'), the '%'
// sent as "%25" like a redirect's Location (issue 16 item 9). Before, the
// target went through net/url, which refused it, and the interstitial was
// returned instead of the page.
func TestMetaRefreshStrayPercentFollowed(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if strings.HasPrefix(r.URL.Path, "/start/") {
			target := strings.TrimPrefix(r.URL.Path, "/start")
			fmt.Fprint(w, `<html><head><meta http-equiv="refresh" content='0;URL="`+target+`"'></head><body>Redirecting</body></html>`)
			return
		}
		mu.Lock()
		got = append(got, r.URL.EscapedPath())
		mu.Unlock()
		fmt.Fprint(w, story)
	}))
	t.Cleanup(srv.Close)
	sap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	d := direct.New(direct.Options{Guard: egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{sap}, MaxRedirects: 3})})
	for target, wantPath := range map[string]string{"/100%": "/100%25", "/a%zz": "/a%25zz", "/ok%20x": "/ok%20x"} {
		p := d.Fetch(context.Background(), srv.URL+"/start"+target)
		if p.Err != nil || !strings.Contains(p.Content, "storm broke the lamp") || p.FinalURL != srv.URL+wantPath {
			t.Errorf("refresh to %s: err=%v final=%q notes=%q; want the story at %s", target, p.Err, p.FinalURL, p.Notes, wantPath)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Errorf("server saw %q, want the three refresh targets", got)
	}
}
