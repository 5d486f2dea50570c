package browser

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/cloud/cloudfake"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// The package's tests never reach a real provider or Camofox: credentials
// and endpoints a developer's shell may export are cleared before any test
// builds a Manager (which reads them, after $GATEHOUSE_HOME/.env).
func init() {
	for _, k := range []string{"BROWSER_CDP_URL", "CAMOFOX_URL", "CAMOFOX_API_KEY", "CAMOFOX_USER_ID", "CAMOFOX_SESSION_KEY",
		"BROWSERBASE_API_KEY", "BROWSERBASE_PROJECT_ID", "BROWSERBASE_BASE_URL", "BROWSER_USE_API_KEY", "BROWSER_USE_BASE_URL",
		"FIRECRAWL_API_KEY", "FIRECRAWL_API_URL"} {
		os.Unsetenv(k)
	}
}

// cloudPublic is the public-looking name the tests' "cloud" browser reaches:
// the gates resolve it to a public address (cloudResolver), the provider's
// Chromium maps it to the test's loopback page server (--host-resolver-rules)
// — the provider's network, not ours.
const cloudPublic = "page.cloudpub.example"

// cloudResolver answers cloudPublic names with a public address, *.test and
// localhost with loopback, and nothing else.
type cloudResolver struct{}

func (cloudResolver) LookupNetIP(ctx context.Context, nw, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".cloudpub.example") {
		return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
	}
	return hostResolver{}.LookupNetIP(ctx, nw, host)
}

// providerChromium starts the Chromium a cloud provider would run
// (cloudfake.Chromium) with a resolver of its own that maps
// *.cloudpub.example to loopback.
func providerChromium(t *testing.T) (ws, root string) {
	t.Helper()
	manager(t) // skips or fails like the shared tests when Chromium is missing
	return cloudfake.Chromium(t, "--host-resolver-rules=MAP *.cloudpub.example 127.0.0.1")
}

// targetURLs lists the page URLs open in the browser at root.
func targetURLs(t *testing.T, root string) []string {
	t.Helper()
	resp, err := http.Get(root + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ts []struct{ URL string }
	json.NewDecoder(resp.Body).Decode(&ts)
	var out []string
	for _, x := range ts {
		out = append(out, x.URL)
	}
	return out
}

// cloudPages serves a small form page and records the Host of each request.
type cloudPages struct {
	*httptest.Server
	port  string
	mu    sync.Mutex
	hosts []string
}

func newCloudPages(t *testing.T) *cloudPages {
	p := &cloudPages{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hosts = append(p.hosts, r.Host+r.URL.Path)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Cloud page</title><h1>Served `+r.URL.Path+`</h1>
<button onclick="document.title='clicked'">Press me</button><a href="/second">Second</a>`)
	}))
	_, p.port, _ = net.SplitHostPort(p.Listener.Addr().String())
	t.Cleanup(p.Close)
	return p
}

func (p *cloudPages) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.hosts...)
}

func cloudManager(t *testing.T, cfg *config.Config, env map[string]string, lo LifecycleOptions, allow ...netip.AddrPort) (*Manager, *syncBuf) {
	t.Helper()
	logs := &syncBuf{}
	m, warns := New(Options{Config: cfg, Home: t.TempDir(), Resolver: cloudResolver{}, Env: env, Lifecycle: lo, AllowAddrPorts: allow,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if len(warns) > 0 {
		t.Logf("warnings: %v", warns)
	}
	t.Cleanup(func() { m.Close() })
	return m, logs
}

// wsAddrPort is the loopback IP:port of a test Chromium's WebSocket URL:
// the allowance a test gives the gates so that a fake provider's connect
// URL on loopback passes (a provider's connect URL is judged with the
// normal gates, where loopback is private).
func wsAddrPort(t *testing.T, ws string) netip.AddrPort {
	t.Helper()
	u, err := url.Parse(ws)
	if err != nil {
		t.Fatal(err)
	}
	return netip.MustParseAddrPort(u.Host)
}

func cloudConfig(provider string) *config.Config {
	cfg := config.Default()
	cfg.Browser.CloudProvider, cfg.Browser.CloudProviderSet = provider, provider != ""
	return cfg
}

// TestCloudBrowserbaseSessionEndToEnd: a Browserbase session is created (402
// → retried without keepAlive), its CDP URL connected, a public page loaded
// and clicked in the provider's browser, a private URL routed to the local
// ::local sidecar (the provider never sees it), the metadata floor refused
// before anything leaves, and the session released when the task ends.
func TestCloudBrowserbaseSessionEndToEnd(t *testing.T) {
	ws, root := providerChromium(t)
	pages := newCloudPages(t)
	fake := cloudfake.New(t, func(r cloudfake.Request) (int, any) {
		switch {
		case r.Method == "POST" && r.Path == "/v1/sessions":
			if r.Body["keepAlive"] == true {
				return 402, map[string]any{"error": "keepAlive needs a paid plan"}
			}
			return 201, map[string]any{"id": "bb-1", "connectUrl": ws, "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
		case r.Method == "POST" && r.Path == "/v1/sessions/bb-1":
			return 200, map[string]any{"id": "bb-1", "status": "COMPLETED"}
		}
		return 404, map[string]any{"error": "no route"}
	})
	env := map[string]string{"BROWSERBASE_API_KEY": "bb_test_key_1", "BROWSERBASE_PROJECT_ID": "proj-9", "BROWSERBASE_BASE_URL": fake.URL}
	m, logs := cloudManager(t, cloudConfig("browserbase"), env, LifecycleOptions{Tick: time.Hour}, wsAddrPort(t, ws))
	ctx := context.Background()
	task := "bb-task"

	pub := "http://" + cloudPublic + ":" + pages.port + "/first"
	nr := m.Navigate(ctx, task, NavigateInput{URL: pub})
	if !nr.Success || !strings.Contains(nr.Snapshot, "Served /first") {
		t.Fatalf("navigate in the cloud browser: %+v\n%s", nr, logs.String())
	}
	if nr.SessionKey != task || nr.Backend != "cloud" || nr.CloudProvider != "browserbase" || nr.CloudSessionID != "bb-1" || nr.FallbackFromCloud {
		t.Errorf("provenance: %+v", nr.BackendInfo)
	}
	// keepAlive was dropped on the 402; proxies stayed on.
	if strings.Join(nr.StealthFeatures, ",") != "basic_stealth,proxies" || nr.StealthWarning != "" {
		t.Errorf("first navigation's features: %v %q", nr.StealthFeatures, nr.StealthWarning)
	}
	if m.BrowserPID() != 0 {
		t.Errorf("a cloud session launched the local Chromium (pid %d)", m.BrowserPID())
	}
	creates := fake.All()
	if len(creates) != 2 {
		t.Fatalf("%d create requests, want 2 (402 → retry without keepAlive): %+v", len(creates), creates)
	}
	for i, r := range creates {
		if r.Header.Get("X-BB-API-Key") != "bb_test_key_1" || r.Body["projectId"] != "proj-9" || r.Body["proxies"] != true {
			t.Errorf("create %d: key %q body %v", i, r.Header.Get("X-BB-API-Key"), r.Body)
		}
	}
	if creates[0].Body["keepAlive"] != true || creates[1].Body["keepAlive"] != nil {
		t.Errorf("402 retry: %v then %v", creates[0].Body, creates[1].Body)
	}
	// The page was fetched by the provider's browser, by its own resolver.
	if got := strings.Join(pages.seen(), " "); !strings.Contains(got, cloudPublic+":"+pages.port+"/first") {
		t.Errorf("page server saw %q", got)
	}
	c := m.Click(ctx, task, RefInput{Ref: refOf(t, nr.Snapshot, "button", "Press me")})
	if !c.Success || c.Title != "clicked" {
		t.Errorf("click over CDP in the cloud browser: %+v", c)
	}

	// A private URL goes to the local sidecar; the provider's browser never
	// sees it (spec §B3).
	priv := "http://127.0.0.1:" + pages.port + "/private"
	pr := m.Navigate(ctx, task, NavigateInput{URL: priv})
	if !pr.Success || pr.SessionKey != task+sessionkey.LocalSuffix || pr.Backend != "local" || !strings.Contains(pr.Snapshot, "Served /private") {
		t.Fatalf("private URL: %+v", pr)
	}
	if m.BrowserPID() == 0 {
		t.Error("the sidecar did not run in the local Chromium")
	}
	for _, u := range targetURLs(t, root) {
		if strings.Contains(u, "/private") {
			t.Errorf("the cloud browser opened the private URL: %s", u)
		}
	}
	if n := fake.Count("POST", "/v1/sessions"); n != 2 {
		t.Errorf("the sidecar asked the provider for a session (%d creates)", n)
	}

	// The metadata floor runs before the URL leaves for the cloud browser.
	mr := m.Navigate(ctx, task, NavigateInput{URL: "http://169.254.169.254/latest/meta-data/"})
	if mr.Success || mr.Reason != reason.SSRFMetadata {
		t.Errorf("metadata URL: %+v", mr)
	}
	for _, u := range targetURLs(t, root) {
		if strings.Contains(u, "169.254") {
			t.Errorf("the metadata URL reached the cloud browser: %s", u)
		}
	}

	closed := m.CloseTask(task)
	if len(closed) != 2 {
		t.Errorf("closed %v, want the session and its sidecar", closed)
	}
	var rel []cloudfake.Request
	for _, r := range fake.All() {
		if r.Path == "/v1/sessions/bb-1" {
			rel = append(rel, r)
		}
	}
	if len(rel) != 1 || rel[0].Method != "POST" || rel[0].Body["status"] != "REQUEST_RELEASE" || rel[0].Body["projectId"] != "proj-9" || rel[0].Header.Get("X-BB-API-Key") != "bb_test_key_1" {
		t.Errorf("release requests: %+v", rel)
	}
	for _, u := range targetURLs(t, root) {
		if strings.Contains(u, "/first") {
			t.Errorf("the session's tab is still open in the provider's browser: %s", u)
		}
	}
	if strings.Contains(logs.String(), "bb_test_key_1") {
		t.Error("the API key reached the log")
	}
}

// TestCloudPrivateURLRefusedWithoutAutoLocal: with
// browser.auto_local_for_private_urls off, a private URL is refused before
// any provider session exists (spec §B8.1 3b).
func TestCloudPrivateURLRefusedWithoutAutoLocal(t *testing.T) {
	fake := cloudfake.New(t, func(cloudfake.Request) (int, any) { return 500, map[string]any{} })
	cfg := cloudConfig("browser-use")
	cfg.Browser.AutoLocalForPrivateURLs = false
	m, _ := cloudManager(t, cfg, map[string]string{"BROWSER_USE_API_KEY": "bu-k", "BROWSER_USE_BASE_URL": fake.URL}, LifecycleOptions{Tick: time.Hour})
	for _, u := range []string{"http://localhost:8080/", "http://10.1.2.3/", "http://box.internal/", "http://169.254.169.254/"} {
		r := m.Navigate(context.Background(), "t", NavigateInput{URL: u})
		if r.Success || (r.Reason != reason.SSRFPrivate && r.Reason != reason.SSRFMetadata && r.Reason != reason.DNSUnresolvable) || r.SessionKey != "t" {
			t.Errorf("%s: %+v", u, r)
		}
	}
	if n := len(fake.All()); n != 0 {
		t.Errorf("the provider was called %d times for refused URLs", n)
	}
}

// TestCloudExpiryRecreatesAndSaysSo: a Browser Use session whose timeoutAt
// passed is released; a navigation gets a fresh one and says so, a click
// gets session_expired (never a silent blank browser).
func TestCloudExpiryRecreatesAndSaysSo(t *testing.T) {
	ws, _ := providerChromium(t)
	pages := newCloudPages(t)
	var mu sync.Mutex
	n := 0
	fake := cloudfake.New(t, func(r cloudfake.Request) (int, any) {
		switch {
		case r.Method == "POST" && r.Path == "/api/v3/browsers":
			mu.Lock()
			n++
			id := "bu-" + string(rune('0'+n))
			mu.Unlock()
			return 201, map[string]any{"id": id, "cdpUrl": ws, "liveUrl": "https://live.example/" + id,
				"timeoutAt": time.Now().Add(1500 * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000")}
		case r.Method == "PATCH" && strings.HasPrefix(r.Path, "/api/v3/browsers/"):
			return 200, map[string]any{"status": "stopped"}
		}
		return 404, nil
	})
	env := map[string]string{"BROWSER_USE_API_KEY": "bu_key_7", "BROWSER_USE_BASE_URL": fake.URL + "/api/v3"}
	m, logs := cloudManager(t, cloudConfig(""), env, LifecycleOptions{Tick: time.Hour}, wsAddrPort(t, ws)) // auto-detected
	ctx := context.Background()
	pub := "http://" + cloudPublic + ":" + pages.port + "/a"
	nr := m.Navigate(ctx, "x", NavigateInput{URL: pub})
	if !nr.Success || nr.CloudProvider != "browser-use" || nr.CloudSessionID != "bu-1" {
		t.Fatalf("first navigate: %+v\n%s", nr, logs.String())
	}
	time.Sleep(1700 * time.Millisecond)
	nr = m.Navigate(ctx, "x", NavigateInput{URL: pub})
	if !nr.Success || nr.CloudSessionID != "bu-2" || !strings.Contains(nr.Recycled, "expired") {
		t.Fatalf("navigate after expiry: %+v", nr)
	}
	time.Sleep(1700 * time.Millisecond)
	c := m.Click(ctx, "x", RefInput{Ref: refOf(t, nr.Snapshot, "button", "Press me")})
	if c.Success || c.Reason != reason.SessionExpired || !strings.Contains(c.Error, "expired") || !strings.Contains(c.Error, "browser_navigate") {
		t.Fatalf("click after expiry: %+v", c)
	}
	if len(m.Keys()) != 0 {
		t.Errorf("the expired click created a session: %v", m.Keys())
	}
	if nr = m.Navigate(ctx, "x", NavigateInput{URL: pub}); !nr.Success || nr.CloudSessionID != "bu-3" {
		t.Fatalf("navigate after session_expired: %+v", nr)
	}
	var stops []string
	for _, r := range fake.All() {
		if r.Header.Get("X-Browser-Use-API-Key") != "bu_key_7" {
			t.Errorf("%s %s without the API key header", r.Method, r.Path)
		}
		if r.Method == "PATCH" {
			if r.Body["action"] != "stop" {
				t.Errorf("stop body %v", r.Body)
			}
			stops = append(stops, r.Path)
		}
	}
	if strings.Join(stops, ",") != "/api/v3/browsers/bu-1,/api/v3/browsers/bu-2" {
		t.Errorf("stops %v", stops)
	}
	m.Close()
	if got := fake.Count("PATCH", "/api/v3/browsers/bu-3"); got != 1 {
		t.Errorf("Manager.Close did not release the last session (%d stops)", got)
	}
}

// TestCloudFailureFallsBackToLocal: a provider that fails (HTTP 500), one
// whose CDP URL does not answer (released again), and a pinned provider
// without credentials all leave the session in the local Chromium, marked
// fallback_from_cloud with the reason.
func TestCloudFailureFallsBackToLocal(t *testing.T) {
	pages := newCloudPages(t)
	ap := netip.MustParseAddrPort(pages.Listener.Addr().String())
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	var broken atomic.Bool
	fake := cloudfake.New(t, func(r cloudfake.Request) (int, any) {
		switch {
		case r.Method == "POST" && r.Path == "/v2/browser":
			if !broken.Load() {
				return 500, map[string]any{"success": false, "error": "internal"}
			}
			return 200, map[string]any{"success": true, "id": "fc-1", "cdpUrl": "ws://" + deadAddr + "/devtools/browser/x"}
		case r.Method == "DELETE":
			return 200, map[string]any{"success": true}
		}
		return 404, nil
	})
	cfg := cloudConfig("firecrawl")
	cfg.Browser.AutoLocalForPrivateURLs = false // the test page is on loopback: keep it on the bare key
	env := map[string]string{"FIRECRAWL_API_KEY": "fc-key-3", "FIRECRAWL_API_URL": fake.URL, "FIRECRAWL_BROWSER_TTL": "120"}
	// The dead CDP address is allowed, so the connection is tried and fails
	// (a refusal by the gates is TestCloudConnectURLIsJudged's).
	m, _ := cloudManager(t, cfg, env, LifecycleOptions{Tick: time.Hour}, ap, netip.MustParseAddrPort(deadAddr))
	ctx := context.Background()
	u := "http://fallback.test:" + pages.port + "/fb"
	nr := m.Navigate(ctx, "f1", NavigateInput{URL: u})
	if !nr.Success || !nr.FallbackFromCloud || nr.FallbackProvider != "firecrawl" || nr.FallbackCode != reason.CloudFallback ||
		!strings.Contains(nr.FallbackReason, "HTTP 500") || nr.Backend != "local" || nr.FallbackWarning == "" {
		t.Fatalf("fallback: %+v", nr)
	}
	if m.BrowserPID() == 0 {
		t.Error("the fallback did not run in the local Chromium")
	}
	r0 := fake.All()[0]
	if r0.Header.Get("Authorization") != "Bearer fc-key-3" || r0.Body["ttl"] != float64(120) {
		t.Errorf("create request %+v", r0)
	}
	// The fallback session keeps the SSRF guard (a cloud setup is not a local
	// backend): another private address is still refused.
	if r := m.Navigate(ctx, "f1", NavigateInput{URL: "http://127.0.0.2:9/"}); r.Success || r.Reason != reason.SSRFPrivate {
		t.Errorf("private URL on the fallback session: %+v", r)
	}

	broken.Store(true)
	nr = m.Navigate(ctx, "f2", NavigateInput{URL: u})
	if !nr.Success || !nr.FallbackFromCloud || !strings.Contains(nr.FallbackReason, "connect over CDP") {
		t.Fatalf("fallback after a dead CDP URL: %+v", nr)
	}
	if fake.Count("DELETE", "/v2/browser/fc-1") != 1 {
		t.Errorf("the session whose CDP URL failed was not released: %+v", fake.All())
	}

	// Pinned, no credentials: cloud_not_configured, the provider untouched.
	before := len(fake.All())
	cfg2 := cloudConfig("browserbase")
	cfg2.Browser.AutoLocalForPrivateURLs = false
	m2, _ := cloudManager(t, cfg2, map[string]string{}, LifecycleOptions{Tick: time.Hour}, ap)
	nr = m2.Navigate(ctx, "f3", NavigateInput{URL: u})
	if !nr.Success || nr.FallbackCode != reason.CloudNotConfigured || !strings.Contains(nr.FallbackReason, "BROWSERBASE_API_KEY") {
		t.Fatalf("unconfigured provider: %+v", nr)
	}
	if len(fake.All()) != before {
		t.Error("an unconfigured provider made a request")
	}
}

// TestCloudAndLocalBothFail: the error names both failures.
func TestCloudAndLocalBothFail(t *testing.T) {
	fake := cloudfake.New(t, func(cloudfake.Request) (int, any) { return 503, map[string]any{"error": "down"} })
	cfg := cloudConfig("browser-use")
	cfg.Browser.ExecutablePath = "/nonexistent/chromium"
	m, _ := cloudManager(t, cfg, map[string]string{"BROWSER_USE_API_KEY": "k", "BROWSER_USE_BASE_URL": fake.URL}, LifecycleOptions{Tick: time.Hour})
	r := m.Navigate(context.Background(), "t", NavigateInput{URL: "http://" + cloudPublic + "/"})
	if r.Success || r.Reason != reason.SessionCreateFailed || !strings.Contains(r.Error, "HTTP 503") || !strings.Contains(r.Error, "local Chromium") {
		t.Errorf("both failed: %+v", r)
	}
}

// TestUnknownCloudProviderIsStrict: a misspelt provider never auto-detects.
func TestUnknownCloudProviderIsStrict(t *testing.T) {
	m, warns := New(Options{Config: cloudConfig("browserbsae"), Home: t.TempDir(), Resolver: cloudResolver{}, Env: map[string]string{"BROWSER_USE_API_KEY": "k"}})
	defer m.Close()
	if !strings.Contains(strings.Join(warns, " "), "browserbsae") {
		t.Errorf("warnings %v", warns)
	}
	r := m.Navigate(context.Background(), "t", NavigateInput{URL: "http://" + cloudPublic + "/"})
	if r.Success || r.Reason != reason.UnknownCloudBackend {
		t.Errorf("%+v", r)
	}
}

// TestJanitorReleasesIdleCloudSession: the janitor's reap releases the
// provider session, and the next click is session_expired.
func TestJanitorReleasesIdleCloudSession(t *testing.T) {
	ws, _ := providerChromium(t)
	pages := newCloudPages(t)
	fake := cloudfake.New(t, func(r cloudfake.Request) (int, any) {
		if r.Method == "POST" && r.Path == "/v1/sessions" {
			return 201, map[string]any{"id": "bb-j", "connectUrl": ws}
		}
		return 200, map[string]any{}
	})
	env := map[string]string{"BROWSERBASE_API_KEY": "k", "BROWSERBASE_PROJECT_ID": "p", "BROWSERBASE_BASE_URL": fake.URL}
	m, logs := cloudManager(t, cloudConfig(""), env, LifecycleOptions{Tick: 100 * time.Millisecond, Idle: 300 * time.Millisecond}, wsAddrPort(t, ws))
	ctx := context.Background()
	nr := m.Navigate(ctx, "j", NavigateInput{URL: "http://" + cloudPublic + ":" + pages.port + "/"})
	if !nr.Success || nr.CloudProvider != "browserbase" {
		t.Fatalf("%+v", nr)
	}
	waitFor(t, "the release", 5*time.Second, func() bool { return fake.Count("POST", "/v1/sessions/bb-j") == 1 })
	// The provider sees the release inside the reap (Tab.Close); the reap
	// record (and the tomb that makes the next call session_expired) comes
	// after it returns: wait for the record, not just the release.
	waitFor(t, "the reap record", 5*time.Second, func() bool { return strings.Contains(logs.String(), "Cleaning up inactive session") })
	if c := m.Click(ctx, "j", RefInput{Ref: "e1"}); c.Reason != reason.SessionExpired {
		t.Errorf("click after reap: %+v", c)
	}
}
