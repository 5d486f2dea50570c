package cloud

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// testChromium starts a headless Chromium with a loopback debugging port and
// returns its WebSocket debugger URL (from DevToolsActivePort): the CDP URL
// the provider fakes hand out.
func testChromium(t *testing.T) string {
	t.Helper()
	path, err := backend.FindChromium("")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Chromium missing: %v", err)
		}
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(path, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+dir, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		backend.KillLeftovers(dir)
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); err == nil && len(lines) == 2 {
			return "ws://127.0.0.1:" + lines[0] + lines[1]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("Chromium did not write DevToolsActivePort")
	return ""
}

// fake records every request it receives and answers with h.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []rec
}

type rec struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

func newFake(t *testing.T, h func(r rec) (int, any)) *fake {
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc := rec{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
		json.Unmarshal(b, &rc.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, rc)
		f.mu.Unlock()
		code, out := h(rc)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) all() []rec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]rec(nil), f.reqs...)
}

func TestBrowserbaseCreateConnectRelease402(t *testing.T) {
	ws := testChromium(t)
	f := newFake(t, func(r rec) (int, any) {
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
	reqs := f.all()
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
	if prod, err := Probe(context.Background(), s.CDPURL); err != nil || !strings.Contains(prod, "Chrom") {
		t.Fatalf("connect: %q %v", prod, err)
	}
	if err := bb.Release(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	rel := f.all()[3]
	if rel.Method != "POST" || rel.Path != "/v1/sessions/bb-1" || rel.Body["status"] != "REQUEST_RELEASE" || rel.Body["projectId"] != "proj-1" || rel.Header.Get("X-BB-API-Key") != "bb_live_key" {
		t.Errorf("release: %+v", rel)
	}
	past := Session{ExpiresAt: float64(time.Now().Add(-time.Second).Unix()), HasExpiry: true}
	if !past.Expired(time.Now()) {
		t.Error("past expiry not expired")
	}
}

func TestBrowserbaseErrorsAreStructuredAndKeyless(t *testing.T) {
	f := newFake(t, func(rec) (int, any) { return 401, map[string]any{"message": "bad key"} })
	bb := &Browserbase{APIKey: "bb_live_secret", ProjectID: "p", BaseURL: f.URL, KeepAlive: true, Client: testClient()}
	_, err := bb.Create(context.Background(), "t")
	ae, ok := err.(*APIError)
	if !ok || ae.Status != 401 || strings.Contains(err.Error(), "bb_live_secret") {
		t.Fatalf("err %v", err)
	}
	if len(f.all()) != 1 {
		t.Errorf("a 401 was retried: %d requests", len(f.all()))
	}
}

func TestBrowserUseCreateConnectStop(t *testing.T) {
	ws := testChromium(t)
	f := newFake(t, func(r rec) (int, any) {
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
	if _, err := Probe(context.Background(), s.CDPURL); err != nil {
		t.Fatal(err)
	}
	if err := bu.Release(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	r := f.all()
	if len(r) != 2 || r[0].Header.Get("X-Browser-Use-API-Key") != "bu_key" || r[1].Method != "PATCH" || r[1].Body["action"] != "stop" || r[1].Header.Get("X-Browser-Use-API-Key") != "bu_key" {
		t.Errorf("requests %+v", r)
	}
}

func TestFirecrawlCreateConnectDelete(t *testing.T) {
	ws := testChromium(t)
	// The CDP URL handed out is an http root: resolved through /json/version.
	root := "http://" + strings.TrimPrefix(strings.SplitN(ws, "/devtools/", 2)[0], "ws://")
	f := newFake(t, func(r rec) (int, any) {
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
	if _, err := Probe(context.Background(), wsURL); err != nil {
		t.Fatal(err)
	}
	if err := fc.Release(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	r := f.all()
	if len(r) != 2 || r[0].Header.Get("Authorization") != "Bearer fc-key" || r[0].Body["ttl"] != float64(300) || r[1].Method != "DELETE" || r[1].Header.Get("Authorization") != "Bearer fc-key" {
		t.Errorf("requests %+v", r)
	}
}

// testClient dials through the egress guard, loopback allowed (the fakes and
// the test's Chromium listen there); metadata stays refused.
func testClient() *http.Client {
	return egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}}).Client(egress.ClientOptions{})
}
