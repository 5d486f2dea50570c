package browser

import (
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/lifespec"
)

// sweepOrphans runs the orphan reaper (spec §B7) at janitor start and every
// lifespec.ReapEveryCycles ticks: browsers and profile dirs of dead Gatehouse processes
// are removed (identity checked by owner record and argv marker, re-checked
// through a pidfd right before the kill); a live owner's dir only after the
// grace max(3600 s, 20 × inactivity).
func (m *Manager) sweepOrphans() {
	grace := m.life.opts.OrphanGrace
	if grace <= 0 {
		grace = lifespec.OrphanGrace(m.idleTimeout())
	}
	res := backend.ReapOrphanDirs(backend.ReapOptions{Grace: grace, Logger: m.logger})
	if len(res.Killed)+len(res.Removed) > 0 {
		m.logger.Info("orphan sweep", "killed", len(res.Killed), "removed", len(res.Removed), "left", len(res.Left))
	}
}
