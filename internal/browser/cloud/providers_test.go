package cloud

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud/cloudfake"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

func TestBrowserbaseCreateConnectRelease402(t *testing.T) {
	ws, _ := cloudfake.Chromium(t)
	f := cloudfake.New(t, func(r cloudfake.Request) (int, any) {
		switch {
		case r.Method == "POST" && r.Path == "/v1/sessions":
			if r.Body["keepAlive"] == true || r.Body["proxies"] == true {
				return 402, map[string]any{"error": "upgrade your plan"}
			}
			return 201, map[string]any{"id": "bb-1", "connectUrl": ws, "expiresAt": "2099-01-01T00:00:00Z"}
		case r.Method == "POST" && r.Path == "/v1/sessions/bb-1":
			return 200, map[string]any{"id": "bb-1", "status": "REQUEST_RELEASE"}
		}
		return 404, map[string]any{}
	})
	bb := &Browserbase{APIKey: "bb_live_key", ProjectID: "proj-1", BaseURL: f.URL, KeepAlive: true, Proxies: true, Timeout: 600, Client: testClient()}
	s, err := bb.Create(context.Background(), "task1")
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.All()
	if len(reqs) != 3 {
		t.Fatalf("%d create requests, want 3 (full, without keepAlive, without proxies): %+v", len(reqs), reqs)
	}
	for i, r := range reqs {
		if r.Header.Get("X-BB-API-Key") != "bb_live_key" || r.Body["projectId"] != "proj-1" || r.Body["timeout"] != float64(600) {
			t.Errorf("request %d: header %q body %v", i, r.Header.Get("X-BB-API-Key"), r.Body)
		}
	}
	if reqs[0].Body["keepAlive"] != true || reqs[0].Body["proxies"] != true ||
		reqs[1].Body["keepAlive"] != nil || reqs[1].Body["proxies"] != true ||
		reqs[2].Body["keepAlive"] != nil || reqs[2].Body["proxies"] != nil {
		t.Errorf("402 retry order: %v / %v / %v", reqs[0].Body, reqs[1].Body, reqs[2].Body)
	}
	if s.ID != "bb-1" || s.CDPURL != ws || s.Features["keep_alive"] || s.Features["proxies"] || !s.Features["custom_timeout"] || !s.HasExpiry || s.Expired(time.Now()) {
		t.Errorf("session: %+v", s)
	}
	if !strings.HasPrefix(s.Name, "gatehouse_task1_") {
		t.Errorf("name %q", s.Name)
	}
	// Connect over CDP to what the provider handed out.
	if prod, err := Probe(context.Background(), s.CDPURL, testGuard().DialContext); err != nil || !strings.Contains(prod, "Chrom") {
		t.Fatalf("connect: %q %v", prod, err)
	}
	if err := bb.Release(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	rel := f.All()[3]
	if rel.Method != "POST" || rel.Path != "/v1/sessions/bb-1" || rel.Body["status"] != "REQUEST_RELEASE" || rel.Body["projectId"] != "proj-1" || rel.Header.Get("X-BB-API-Key") != "bb_live_key" {
		t.Errorf("release: %+v", rel)
	}
	past := Session{ExpiresAt: float64(time.Now().Add(-time.Second).Unix()), HasExpiry: true}
	if !past.Expired(time.Now()) {
		t.Error("past expiry not expired")
	}
}

func TestBrowserbaseErrorsAreStructuredAndKeyless(t *testing.T) {
	f := cloudfake.New(t, func(cloudfake.Request) (int, any) { return 401, map[string]any{"message": "bad key"} })
	bb := &Browserbase{APIKey: "bb_live_secret", ProjectID: "p", BaseURL: f.URL, KeepAlive: true, Client: testClient()}
	_, err := bb.Create(context.Background(), "t")
	ae, ok := err.(*APIError)
	if !ok || ae.Status != 401 || strings.Contains(err.Error(), "bb_live_secret") {
		t.Fatalf("err %v", err)
	}
	if len(f.All()) != 1 {
		t.Errorf("a 401 was retried: %d requests", len(f.All()))
	}
}

func TestBrowserUseCreateConnectStop(t *testing.T) {
	ws, _ := cloudfake.Chromium(t)
	f := cloudfake.New(t, func(r cloudfake.Request) (int, any) {
		switch {
		case r.Method == "POST" && r.Path == "/api/v3/browsers":
			return 201, map[string]any{"id": "bu-7", "cdpUrl": ws, "liveUrl": "https://live.example/bu-7", "timeoutAt": "2099-01-01T00:00:00"}
		case r.Method == "PATCH" && r.Path == "/api/v3/browsers/bu-7":
			return 200, map[string]any{"id": "bu-7", "status": "stopped"}
		}
		return 404, nil
	})
	bu := &BrowserUse{APIKey: "bu_key", BaseURL: f.URL + "/api/v3", Client: testClient()}
	s, err := bu.Create(context.Background(), "t2")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "bu-7" || s.CDPURL != ws || s.LiveURL == "" || !s.Features["browser_use"] || !s.HasExpiry || s.ExpiresAt != 4070908800 {
		t.Errorf("session %+v", s)
	}
	if _, err := Probe(context.Background(), s.CDPURL, testGuard().DialContext); err != nil {
		t.Fatal(err)
	}
	if err := bu.Release(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	r := f.All()
	if len(r) != 2 || r[0].Header.Get("X-Browser-Use-API-Key") != "bu_key" || r[1].Method != "PATCH" || r[1].Body["action"] != "stop" || r[1].Header.Get("X-Browser-Use-API-Key") != "bu_key" {
		t.Errorf("requests %+v", r)
	}
}

func TestFirecrawlCreateConnectDelete(t *testing.T) {
	ws, _ := cloudfake.Chromium(t)
	// The CDP URL handed out is an http root: resolved through /json/version.
	root := "http://" + strings.TrimPrefix(strings.SplitN(ws, "/devtools/", 2)[0], "ws://")
	f := cloudfake.New(t, func(r cloudfake.Request) (int, any) {
		switch {
		case r.Method == "POST" && r.Path == "/v2/browser":
			return 200, map[string]any{"success": true, "id": "fc-3", "cdpUrl": root}
		case r.Method == "DELETE" && r.Path == "/v2/browser/fc-3":
			return 200, map[string]any{"success": true}
		}
		return 404, nil
	})
	fc := &Firecrawl{APIKey: "fc-key", BaseURL: f.URL, Client: testClient()}
	before := time.Now()
	s, err := fc.Create(context.Background(), "t3")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "fc-3" || !s.HasExpiry || s.ExpiresAt < float64(before.Add(299*time.Second).Unix()) {
		t.Errorf("session %+v (ttl 300 → expiry)", s)
	}
	wsURL, err := ResolveCDPURL(context.Background(), s.CDPURL, testClient())
	if err != nil || wsURL != ws {
		t.Fatalf("resolve %q → %q %v, want %q", s.CDPURL, wsURL, err, ws)
	}
	if _, err := Probe(context.Background(), wsURL, testGuard().DialContext); err != nil {
		t.Fatal(err)
	}
	if err := fc.Release(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	r := f.All()
	if len(r) != 2 || r[0].Header.Get("Authorization") != "Bearer fc-key" || r[0].Body["ttl"] != float64(300) || r[1].Method != "DELETE" || r[1].Header.Get("Authorization") != "Bearer fc-key" {
		t.Errorf("requests %+v", r)
	}
}

// testClient dials through the egress guard, loopback allowed (the fakes and
// the test's Chromium listen there); metadata stays refused.
func testClient() *http.Client { return testGuard().Client(egress.ClientOptions{}) }

// testGuard is testClient's guard: loopback allowed, metadata refused.
func testGuard() *egress.Guard {
	return egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
}

// TestProbeDialsThroughTheGuard: a provider's connect URL is connected with
// the dialer Probe is given (the egress guard in Gatehouse), never another
// one: through a counting dialer the connection is made and counted; a
// strict guard refuses the provider's loopback Chromium (ssrf_private) and a
// metadata address (ssrf_metadata) before anything connects; no dialer
// fails closed.
func TestProbeDialsThroughTheGuard(t *testing.T) {
	ws, _ := cloudfake.Chromium(t)
	var dials atomic.Int32
	counting := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return testGuard().DialContext(ctx, network, addr)
	}
	if _, err := Probe(context.Background(), ws, counting); err != nil || dials.Load() != 1 {
		t.Fatalf("probe through the counting dialer: %v (%d dials)", err, dials.Load())
	}
	strict := egress.New(egress.Options{})
	for _, c := range []struct {
		url  string
		want reason.Code
	}{
		{ws, reason.SSRFPrivate},
		{"ws://169.254.169.254/devtools/browser/x", reason.SSRFMetadata},
		{"ws://metadata.google.internal/devtools/browser/x", reason.SSRFMetadata},
	} {
		if _, err := Probe(context.Background(), c.url, strict.DialContext); reason.Of(err) != c.want {
			t.Errorf("%s: %v, want %s", c.url, err, c.want)
		}
	}
	if _, err := Probe(context.Background(), ws, nil); err == nil {
		t.Error("a probe without a dialer connected")
	}
}
