package camofox

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

func client(url string) *Client {
	return &Client{BaseURL: url, APIKey: "k1",
		HTTP: egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}}).Client(egress.ClientOptions{})}
}

// TestErrorsAreClassified: a missing endpoint (405/501, or 404 without a tab
// error) is Unsupported; Camofox's "Tab not found" is TabGone; the error
// text is the server's {"error"} field.
func TestErrorsAreClassified(t *testing.T) {
	code := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k1" {
			w.WriteHeader(401)
			return
		}
		w.WriteHeader(code)
		msg := "Not implemented"
		if code == 404 && strings.Contains(r.URL.Path, "/stats") {
			msg = "Tab not found"
		}
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}))
	defer srv.Close()
	c := client(srv.URL)
	for _, code = range []int{405, 501, 404} {
		_, err := c.Evaluate(context.Background(), "t1", "u", "1")
		if !Unsupported(err) || TabGone(err) {
			t.Errorf("%d: %v", code, err)
		}
	}
	code = 404
	_, err := c.Stats(context.Background(), "t1", "u")
	if !TabGone(err) || Unsupported(err) || !strings.Contains(err.Error(), "Tab not found") {
		t.Errorf("stats 404: %v", err)
	}
}

// TestSnapshotFollowsPagesUpToTheCap: pages are fetched by nextOffset until
// hasMore is false, or MaxSnapshotChars is reached (Truncated).
func TestSnapshotFollowsPagesUpToTheCap(t *testing.T) {
	var offsets []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		offsets = append(offsets, r.URL.Query().Get("offset"))
		json.NewEncoder(w).Encode(map[string]any{"url": "https://x.example/", "snapshot": strings.Repeat("a", 80000), "refsCount": 7,
			"hasMore": true, "nextOffset": off + 80000})
	}))
	defer srv.Close()
	s, err := client(srv.URL).Snapshot(context.Background(), "t", "u")
	if err != nil || !s.Truncated || len(s.Text) != MaxSnapshotChars || s.Refs != 7 || s.URL != "https://x.example/" {
		t.Fatalf("%v truncated=%v len=%d refs=%d", err, s.Truncated, len(s.Text), s.Refs)
	}
	if len(offsets) != MaxSnapshotChars/80000 || offsets[0] != "" || offsets[1] != "80000" {
		t.Errorf("offsets %v", offsets)
	}
}
