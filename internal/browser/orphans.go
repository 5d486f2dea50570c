package browser

import "github.com/gatehouse-dev/gatehouse/internal/browser/backend"

// sweepOrphans runs the orphan reaper (spec §B7).
func (m *Manager) sweepOrphans() {
	backend.ReapOrphans()
}
