// Package lifespec holds the browser session lifecycle's numbers and rules
// of spec §B5 (command timeouts) and §B7 (the janitor, the inactivity
// timeout, the orphan reaper), as pure functions of the config, for
// package browser and its backends.
package lifespec

import (
	"math"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
)

// Lifecycle constants of spec §B7.
const (
	// JanitorTick is how often the janitor looks for idle sessions.
	JanitorTick = 30 * time.Second
	// OrphanSweepEvery is how often the orphan reaper runs (also at janitor
	// start, cycle 0).
	OrphanSweepEvery = 300 * time.Second
	// OrphanGraceFloor is the least time an orphan whose owner still lives is
	// left alone.
	OrphanGraceFloor = 3600 * time.Second
	// ForceReapAfter is how many consecutive failed cleanups of one idle
	// session make the janitor force-reap it.
	ForceReapAfter = 3
)

// InactivityTimeout is browser.inactivity_timeout in effect: seconds nil → 120 s,
// below the 30 s floor → 30 s (spec §B7).
func InactivityTimeout(seconds *int) time.Duration {
	if seconds == nil {
		return config.DefaultInactivityTimeout
	}
	return max(time.Duration(*seconds)*time.Second, config.MinInactivityTimeout)
}

// OrphanGrace is how long the reaper leaves an orphaned session whose owner
// process still lives: max(3600 s, 20 × inactivity) (spec §B7).
func OrphanGrace(inactivity time.Duration) time.Duration {
	return max(OrphanGraceFloor, 20*inactivity)
}

// ReapEveryCycles is the number of janitor ticks between orphan sweeps:
// round(300 s / tick), at least 1 (spec §B7: 10 with the 30 s tick).
func ReapEveryCycles(tick time.Duration) int {
	if tick <= 0 {
		tick = JanitorTick
	}
	return max(1, int(math.Round(float64(OrphanSweepEvery)/float64(tick))))
}

// Timeouts are the command timeouts of spec §B5, in seconds.
type Timeouts struct {
	Command   int // browser.command_timeout, floor 5
	Open      int // navigation: max(command, 60)
	FirstOpen int // first navigation of a session: max(command, 120)
}

// CommandTimeouts returns the timeouts for browser.command_timeout seconds (0 =
// unset → 30).
func CommandTimeouts(seconds int) Timeouts {
	c := seconds
	if c == 0 {
		c = int(config.DefaultCommandTimeout.Seconds())
	}
	c = max(c, int(config.MinCommandTimeout.Seconds()))
	return Timeouts{Command: c, Open: max(c, 60), FirstOpen: max(c, 120)}
}
