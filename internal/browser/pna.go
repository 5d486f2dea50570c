package browser

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/browser/pnanav"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// beginNavigation is pnanav.Begin for session s (Private Network Access of
// browser_navigate to u): nothing for a cloud session or with private URLs
// allowed.
func (m *Manager) beginNavigation(ctx context.Context, s *Session, u *urlsafe.URL) (done func(), popupsClosed int) {
	if s.cloud != nil || m.gates.AllowPrivate {
		return func() {}, 0
	}
	return pnanav.Begin(ctx, s.tab, s.proxy, u, m.privateTarget(ctx, u), m.logger.With("session", s.Key))
}

// privateTarget reports whether u's host is in the private network as the
// strict gate sees it (DNS resolved; a lookup failure is not private).
func (m *Manager) privateTarget(ctx context.Context, u *urlsafe.URL) bool {
	_, rerr := m.gates.Strict.Check(ctx, u)
	return rerr != nil && rerr.Code == reason.SSRFPrivate
}
