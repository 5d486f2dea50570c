package cloud

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/toolio"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// ReleaseTimeout bounds the release of a provider session (spec §B11).
const ReleaseTimeout = 10 * time.Second

// Lease is a provider session one browser session uses (spec §B4): the
// provider, its record, and a release that runs once, whichever path ends
// the browser session first (the task's end, the janitor, the provider's
// expiry, a recycle, shutdown, a failed connect).
type Lease struct {
	Prov Provider
	Rec  Session
	Log  *slog.Logger // the release's record; nil discards
	once sync.Once
}

// Release ends the provider session once (ReleaseTimeout); one log record
// says whether it worked (the error redacted).
func (l *Lease) Release() {
	l.once.Do(func() {
		lg := l.Log
		if lg == nil {
			lg = slog.New(slog.DiscardHandler)
		}
		ctx, cancel := context.WithTimeout(context.Background(), ReleaseTimeout)
		defer cancel()
		if err := l.Prov.Release(ctx, l.Rec); err != nil {
			lg.Warn("cloud browser session release failed", "provider", l.Prov.Name(), "cloud_session_id", l.Rec.ID, "err", urlsafe.Redact(err.Error()))
			return
		}
		lg.Info("cloud browser session released", "provider", l.Prov.Name(), "cloud_session_id", l.Rec.ID)
	})
}

// Expiry reports whether the provider's own expiry has passed at now and
// then why (the sentence a session_expired result carries) and when (RFC
// 3339, UTC).
func (l *Lease) Expiry(now time.Time) (why, at string, expired bool) {
	if !l.Rec.Expired(now) {
		return "", "", false
	}
	at = time.Unix(0, int64(l.Rec.ExpiresAt*1e9)).UTC().Format(time.RFC3339)
	return fmt.Sprintf("the %s cloud browser session expired at %s (the provider's own limit)", l.Prov.Name(), at), at, true
}

// Info is the provenance a navigation result carries for the session;
// first (no navigation yet) also lists the provider features that are on,
// sorted, and warns when Browserbase's residential proxies are off.
func (l *Lease) Info(first bool) toolio.BackendInfo {
	bi := toolio.BackendInfo{Backend: "cloud", CloudProvider: l.Prov.Name(), CloudSessionID: l.Rec.ID}
	if !first {
		return bi
	}
	for k, on := range l.Rec.Features {
		if on {
			bi.StealthFeatures = append(bi.StealthFeatures, k)
		}
	}
	sort.Strings(bi.StealthFeatures)
	if on, ok := l.Rec.Features["proxies"]; ok && !on {
		bi.StealthWarning = "Residential proxies are off for this Browserbase session (the plan refused them, or BROWSERBASE_PROXIES is off): sites that block data-center addresses may refuse it."
	}
	return bi
}

// Fallback is the provenance of a session the local Chromium serves because
// provider failed (spec §B4 fallback_from_cloud): code is the reason
// (cloud_fallback, cloud_not_configured, or a gate's code when the
// provider's CDP URL was refused), why the failure, already redacted.
func Fallback(provider string, code reason.Code, why string) *toolio.BackendInfo {
	return &toolio.BackendInfo{Backend: "local", FallbackFromCloud: true, FallbackProvider: provider, FallbackCode: code, FallbackReason: why,
		FallbackWarning: fmt.Sprintf("The %s cloud browser could not be used (%s); this session runs in the local Chromium instead.", provider, why)}
}

// FallbackFailed turns a failed local session creation after the cloud
// failure fb into session_create_failed naming both failures (spec §B4);
// with fb or err nil it returns err.
func FallbackFailed(fb *toolio.BackendInfo, err error) error {
	if fb == nil || err == nil {
		return err
	}
	msg := err.Error()
	if re := reason.As(err); re != nil {
		msg = re.Message
	}
	return reason.Wrap(reason.SessionCreateFailed, "", fmt.Sprintf(
		"No browser session could be created: the %s cloud browser failed (%s) and the local Chromium fallback failed too (%s).",
		fb.FallbackProvider, fb.FallbackReason, msg), err)
}

// Warnings are the start-up warnings of a selection (Select's sel and err):
// a strict selection error, a pinned provider without credentials (sessions
// fall back to local), a provider a CDP override (cdpOverride) outranks.
func Warnings(sel Selection, err error, cdpOverride bool) []string {
	var warns []string
	switch {
	case err != nil:
		warns = append(warns, err.Error())
	case sel.Err != nil:
		warns = append(warns, sel.Err.Error()+"; browser sessions fall back to the local Chromium (fallback_from_cloud)")
	}
	if sel.Provider != nil && cdpOverride {
		warns = append(warns, fmt.Sprintf("browser.cloud_provider %s is ignored: a CDP override (BROWSER_CDP_URL / browser.cdp_url) wins (spec §B4)", sel.Name))
	}
	return warns
}
