package cloud

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

type countProvider struct {
	mu       sync.Mutex
	releases int
}

func (p *countProvider) Name() string                                    { return "browserbase" }
func (p *countProvider) Configured() bool                                { return true }
func (p *countProvider) Create(context.Context, string) (Session, error) { return Session{}, nil }
func (p *countProvider) Release(context.Context, Session) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releases++
	return nil
}

// A lease is released once whichever paths end the session; its expiry,
// provenance and fallback texts are those results carry.
func TestLease(t *testing.T) {
	p := &countProvider{}
	l := &Lease{Prov: p, Rec: Session{ID: "s1", ExpiresAt: 1000, HasExpiry: true,
		Features: map[string]bool{"solve_captchas": true, "advanced_stealth": true, "proxies": false}}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); l.Release() }()
	}
	wg.Wait()
	if p.releases != 1 {
		t.Errorf("%d releases, want 1", p.releases)
	}
	if why, _, ok := l.Expiry(time.Unix(999, 0)); ok || why != "" {
		t.Errorf("expired before its time: %q", why)
	}
	why, at, ok := l.Expiry(time.Unix(1001, 0))
	if !ok || at != "1970-01-01T00:16:40Z" || !strings.Contains(why, "browserbase cloud browser session expired at "+at) {
		t.Errorf("Expiry = %q %q %v", why, at, ok)
	}
	bi := l.Info(true)
	if bi.Backend != "cloud" || bi.CloudSessionID != "s1" || !slices.Equal(bi.StealthFeatures, []string{"advanced_stealth", "solve_captchas"}) || bi.StealthWarning == "" {
		t.Errorf("Info(first) = %+v", bi)
	}
	if bi := l.Info(false); bi.StealthFeatures != nil || bi.StealthWarning != "" {
		t.Errorf("Info(later) = %+v", bi)
	}
	fb := Fallback("browserbase", reason.CloudFallback, "create session: HTTP 500")
	if !fb.FallbackFromCloud || fb.Backend != "local" || !strings.Contains(fb.FallbackWarning, "(create session: HTTP 500)") {
		t.Errorf("Fallback = %+v", fb)
	}
	err := FallbackFailed(fb, reason.New(reason.ChromiumMissing, "", "no chromium"))
	if reason.Of(err) != reason.SessionCreateFailed || !strings.Contains(err.Error(), "failed (create session: HTTP 500) and the local Chromium fallback failed too (no chromium)") {
		t.Errorf("FallbackFailed = %v", err)
	}
	if e := errors.New("x"); FallbackFailed(nil, e) != e {
		t.Error("FallbackFailed without a cloud failure changed the error")
	}
	if w := Warnings(Selection{Provider: p, Name: "browserbase"}, nil, true); len(w) != 1 || !strings.Contains(w[0], "CDP override") {
		t.Errorf("Warnings = %q", w)
	}
}
