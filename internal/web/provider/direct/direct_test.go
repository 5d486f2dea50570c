package direct_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/andybalholm/brotli"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
)

const story = `<html><head><title>Encoded Story</title></head><body><article><h1>Encoded Story</h1>
<p>The lighthouse keeper wrote every evening about the ships that passed the rocks and the weather that came with them.</p>
<p>On the third night a storm broke the lamp, and the keeper climbed the tower to mend it by hand before the first ship came.</p>
<p>By morning the sea was calm again and the harbour master sent a letter of thanks to the keeper and his family.</p>
</article></body></html>`

func compress(t *testing.T, enc string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	switch enc {
	case "gzip":
		w := gzip.NewWriter(&b)
		w.Write(data)
		w.Close()
	case "deflate-zlib":
		w := zlib.NewWriter(&b)
		w.Write(data)
		w.Close()
	case "deflate-raw":
		w, _ := flate.NewWriter(&b, flate.DefaultCompression)
		w.Write(data)
		w.Close()
	case "br":
		w := brotli.NewWriter(&b)
		w.Write(data)
		w.Close()
	default:
		return data
	}
	return b.Bytes()
}

func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *direct.Direct) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	g := egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap}})
	return srv, direct.New(direct.Options{Guard: g, Timeout: 5 * time.Second})
}

func TestContentEncodings(t *testing.T) {
	for _, enc := range []string{"identity", "gzip", "deflate-zlib", "deflate-raw", "br"} {
		t.Run(enc, func(t *testing.T) {
			var gotAE string
			srv, d := server(t, func(w http.ResponseWriter, r *http.Request) {
				gotAE = r.Header.Get("Accept-Encoding")
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Header().Set("Content-Encoding", strings.TrimSuffix(strings.TrimSuffix(enc, "-zlib"), "-raw"))
				w.Write(compress(t, enc, []byte(story)))
			})
			p := d.Fetch(context.Background(), srv.URL+"/s")
			if p.Err != nil {
				t.Fatal(p.Err)
			}
			if p.Title != "Encoded Story" || !strings.Contains(p.Content, "lighthouse keeper") {
				t.Fatalf("page %+v", p)
			}
			if !strings.Contains(gotAE, "br") || !strings.Contains(gotAE, "gzip") {
				t.Fatalf("Accept-Encoding %q", gotAE)
			}
		})
	}
}

func TestUnsupportedEncodingAndStatus(t *testing.T) {
	srv, d := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/zstd":
			w.Header().Set("Content-Encoding", "zstd")
			w.Write([]byte("xx"))
		case "/missing":
			http.NotFound(w, r)
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n0000"))
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"ok": true, "items": [1, 2]}`))
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte("plain words\nsecond line"))
		}
	})
	cases := map[string]reason.Code{"/zstd": reason.UnsupportedContentType, "/missing": reason.HTTPStatus, "/image": reason.UnsupportedContentType}
	for path, want := range cases {
		p := d.Fetch(context.Background(), srv.URL+path)
		if reason.Of(p.Err) != want {
			t.Errorf("%s: got %v, want %s", path, p.Err, want)
		}
	}
	if p := d.Fetch(context.Background(), srv.URL+"/json"); p.Err != nil || !strings.Contains(p.Content, `"items"`) {
		t.Errorf("json passthrough: %+v", p)
	}
	if p := d.Fetch(context.Background(), srv.URL+"/text"); p.Err != nil || !strings.Contains(p.Content, "plain words\nsecond line") {
		t.Errorf("text passthrough: %+v", p)
	}
}

func TestBodyCapCutsAtRuneBoundary(t *testing.T) {
	body := "<html><body><article><p>" + strings.Repeat("é", 3000) + "</p></article></body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(body))
	}))
	defer srv.Close()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	g := egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap}})
	// 1001 bytes lands in the middle of a two-byte é.
	d := direct.New(direct.Options{Guard: g, MaxBodyBytes: 1001})
	p := d.Fetch(context.Background(), srv.URL)
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	if !utf8.ValidString(p.Content) || strings.ContainsRune(p.Content, utf8.RuneError) {
		t.Fatal("capped body split a character")
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "1001 bytes") {
		t.Fatalf("notes %v", p.Notes)
	}
}

func TestUserAgentIsHonest(t *testing.T) {
	var ua string
	srv, d := server(t, func(w http.ResponseWriter, r *http.Request) {
		ua = r.UserAgent()
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	})
	d.Fetch(context.Background(), srv.URL)
	if !strings.HasPrefix(ua, "Gatehouse/") {
		t.Fatalf("User-Agent %q", ua)
	}
}

// A server that sends headers and then trickles the body slower than the total
// timeout is a fetch_timeout, not a generic failure.
func TestTrickleIsTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(200)
		for i := 0; i < 50; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			w.Write([]byte("<p>x</p>"))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	d := direct.New(direct.Options{Guard: egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap}}), Timeout: 700 * time.Millisecond})
	p := d.Fetch(context.Background(), srv.URL)
	if reason.Of(p.Err) != reason.FetchTimeout || !strings.Contains(p.Err.Error(), "web.direct.timeout") {
		t.Fatalf("got %v", p.Err)
	}
}

// A user name in the URL never becomes an Authorization header.
func TestUserinfoNotSent(t *testing.T) {
	var auth string
	srv, d := server(t, func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	})
	u := strings.Replace(srv.URL, "http://", "http://someone@", 1)
	if p := d.Fetch(context.Background(), u); p.Err != nil || auth != "" {
		t.Fatalf("err %v auth %q", p.Err, auth)
	}
}
