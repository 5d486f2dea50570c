package egress_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// TestRedirectLocationStrayPercentFollowed: a Location holding a '%' that
// starts no percent-encoded octet ("/100%", "/a%zz", absolute or relative)
// is followed as browsers follow it (WHATWG URL keeps the '%'; it is sent
// as "%25"), not refused by net/url's "invalid URL escape".
func TestRedirectLocationStrayPercentFollowed(t *testing.T) {
	var srvURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("to") {
		case "rel100":
			w.Header().Set("Location", "/100%")
		case "relzz":
			w.Header().Set("Location", "/a%zz?q=1")
		case "abs":
			w.Header().Set("Location", srvURL+"/b%/c%41")
		default:
			io.WriteString(w, "at "+r.URL.EscapedPath())
			return
		}
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	srvURL = srv.URL
	g := egress.New(egress.Options{Resolver: newResolver(), Gate: urlsafe.Options{AllowPrivate: true}})
	c := g.Client(egress.ClientOptions{})
	for to, want := range map[string]string{"rel100": "at /100%25", "relzz": "at /a%25zz", "abs": "at /b%25/c%41"} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/?to="+to, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("%s: %v", to, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Errorf("%s: %d %q, want %q", to, resp.StatusCode, b, want)
		}
	}
}
