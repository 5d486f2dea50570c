package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/web"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

const leakKey = "sk-proj0123456789abcdefABCDEF" // fake, OpenAI-shaped

// fakeExtractor reports a final URL and a note carrying a secret, as a
// third-party reader might, and page content quoting one.
type fakeExtractor struct{ content string }

func (fakeExtractor) Name() string { return "direct" }

func (f fakeExtractor) Extract(_ context.Context, urls []string, emit func(int, provider.Page)) {
	for i, u := range urls {
		emit(i, provider.Page{
			URL: u, FinalURL: u + "?api_key=" + leakKey, Title: "Key " + leakKey,
			Content: f.content, Notes: []string{"redirected via https://x.example/?access_token=" + leakKey},
		})
	}
}

type logBuf struct{ bytes.Buffer }

func fakeService(t *testing.T, redactContent bool, content string) (*web.Service, *logBuf, string) {
	t.Helper()
	cfg := config.Default()
	cfg.Security.RedactSecrets = redactContent
	cfg.Web.CacheEnabled = false
	home := t.TempDir()
	var logs logBuf
	g := egress.New(egress.Options{})
	svc := web.New(web.Deps{
		Config: cfg, Guard: g, Store: &truncate.Store{Dir: filepath.Join(home, "store")},
		Registry: provider.NewRegistry(provider.SettingsFrom(cfg, nil), []*provider.Backend{{
			Spec: directSpec(t), Extract: fakeExtractor{content: content},
		}}, nil, nil),
		Logger:   slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		DebugDir: filepath.Join(home, "logs"),
		Now:      time.Now,
	})
	return svc, &logs, home
}

// TestSecretsRedactedInOutput (issue 6 item 3): meta.final_url, notes and
// the debug file never carry a secret, whatever security.redact_secrets
// says; page title, content and the stored full text are redacted while it
// is on (the default) and kept verbatim when it is off.
func TestSecretsRedactedInOutput(t *testing.T) {
	long := strings.Repeat("A line of ordinary page text about harbours and ships.\n", 200)
	content := "Your key is " + leakKey + " and the token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln.\n" + long + "Again: " + leakKey + "\n"
	for _, on := range []bool{true, false} {
		svc, _, home := fakeService(t, on, content)
		resp := svc.Extract(context.Background(), web.ExtractRequest{URLs: []any{"https://93.184.216.34/page"}, CharLimit: 2000})
		if len(resp.Results) != 1 || !resp.Results[0].OK() {
			t.Fatalf("redact=%v: %+v", on, resp)
		}
		r := resp.Results[0]
		if strings.Contains(r.Meta.FinalURL, leakKey) || !strings.Contains(r.Meta.FinalURL, "api_key=[REDACTED]") {
			t.Errorf("redact=%v: final_url %q", on, r.Meta.FinalURL)
		}
		if strings.Contains(strings.Join(r.Meta.Notes, " "), leakKey) {
			t.Errorf("redact=%v: notes %q", on, r.Meta.Notes)
		}
		stored, err := os.ReadFile(r.Meta.StoredPath)
		if err != nil {
			t.Fatalf("redact=%v: stored file: %v", on, err)
		}
		leaked := strings.Contains(r.Content, leakKey) || strings.Contains(r.Title, leakKey) || strings.Contains(string(stored), leakKey)
		if on && (leaked || strings.Contains(r.Content, "eyJzdWIi")) {
			t.Errorf("redact on: page text carries the secret:\ntitle %q\n%s", r.Title, r.Content)
		}
		if !on && (!strings.Contains(r.Content, leakKey) || !strings.Contains(string(stored), leakKey)) {
			t.Errorf("redact off: page content was altered")
		}
		ents, _ := os.ReadDir(filepath.Join(home, "logs"))
		if len(ents) != 1 {
			t.Fatalf("debug files: %v", ents)
		}
		b, _ := os.ReadFile(filepath.Join(home, "logs", ents[0].Name()))
		if strings.Contains(string(b), leakKey) {
			t.Errorf("redact=%v: debug file carries the secret: %s", on, b)
		}
		out, _ := json.Marshal(resp)
		if on && strings.Contains(string(out), leakKey) {
			t.Errorf("redact on: response JSON carries the secret")
		}
	}
}

// TestCheckNeverPrintsSecrets: `gatehouse check` output (CheckResult) keeps
// no secret, also one in the host name or percent-encoded, for both tools.
func TestCheckNeverPrintsSecrets(t *testing.T) {
	g := egress.New(egress.Options{})
	for _, raw := range []string{
		"https://" + leakKey + ".evil.example/x",
		"https://evil.example/x?k=" + strings.Replace(leakKey, "-", "%2D", 1),
		"https://evil.example/" + leakKey,
		"https://bob:hunter2hunter2@evil.example/",
		"https://evil.example/?state=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
	} {
		for _, mode := range []web.CheckMode{{Extract: true}, {}} {
			res := web.CheckURL(context.Background(), g, nil, raw, mode)
			b, _ := json.Marshal(res)
			// (Host names are lower-cased: compare case-insensitively.)
			if res.Allowed || strings.Contains(strings.ToLower(string(b)), strings.ToLower(leakKey)) || strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "eyJzdWIi") {
				t.Errorf("check %q (extract=%v) printed %s", raw, mode.Extract, b)
			}
		}
	}
}

func directSpec(t *testing.T) provider.Spec {
	t.Helper()
	sp, ok := provider.Lookup("direct")
	if !ok {
		t.Fatal("no direct provider spec")
	}
	return sp
}
