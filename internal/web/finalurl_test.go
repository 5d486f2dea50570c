package web_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/web"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// finalExtractor reports each page as having ended on final (a backend that
// followed a redirect itself, as a vendor reader does).
type finalExtractor struct{ final string }

func (finalExtractor) Name() string { return "direct" }

func (f finalExtractor) Extract(_ context.Context, urls []string, emit func(int, provider.Page)) {
	for i, u := range urls {
		emit(i, provider.Page{URL: u, FinalURL: f.final, Title: "T", Content: "Some page text about harbours."})
	}
}

// TestFinalURLRefusalKeepsCallerURL (hostile review session 5, D2): when the
// re-check of a backend-reported final URL refuses it (an SSRF target or a
// blocklisted host), the row keeps the URL the caller passed, so rows still
// match inputs, and its message names the final URL.
func TestFinalURLRefusalKeepsCallerURL(t *testing.T) {
	const caller = "https://93.184.216.34/start"
	for _, c := range []struct {
		name, final string
		want        reason.Code
	}{
		{"private final", "http://10.1.2.3/admin", reason.SSRFPrivate},
		{"blocklisted final", "https://tracker.blocked.test/x", reason.PolicyBlocked},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Web.CacheEnabled = false
			pol, _ := policy.Load(true, []string{"blocked.test"}, nil, t.TempDir())
			svc := web.New(web.Deps{
				Config: cfg, Guard: egress.New(egress.Options{}), Policy: pol,
				Store: &truncate.Store{Dir: filepath.Join(t.TempDir(), "store")},
				Registry: provider.NewRegistry(provider.SettingsFrom(cfg, nil), []*provider.Backend{{
					Spec: directSpec(t), Extract: finalExtractor{final: c.final},
				}}, nil, nil),
				Logger: slog.New(slog.DiscardHandler),
				Now:    time.Now,
			})
			resp := svc.Extract(context.Background(), web.ExtractRequest{URLs: []any{caller}})
			if len(resp.Results) != 1 {
				t.Fatalf("results %+v", resp.Results)
			}
			r := resp.Results[0]
			if r.OK() || r.Reason != c.want {
				t.Fatalf("row %+v, want %s", r, c.want)
			}
			if r.URL != caller {
				t.Errorf("row URL %q, want the caller's %q", r.URL, caller)
			}
			if r.Error == nil || !strings.Contains(*r.Error, c.final) {
				t.Errorf("error %v does not name the final URL %s", r.Error, c.final)
			}
		})
	}
}
