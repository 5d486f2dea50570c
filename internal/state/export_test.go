package state

import (
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
)

func sampleEntry() cache.Entry {
	return cache.Entry{URL: "https://a.test/", FinalURL: "https://a.test/", Title: "T", Content: "c",
		FetchedAt: time.UnixMilli(1700000000000), Extra: []byte(`{"links":[]}`)}
}

// SetReadCap lowers the cap on stored values read until the test ends.
func SetReadCap(t interface{ Cleanup(func()) }, n int) {
	old := readCap
	readCap = n
	t.Cleanup(func() { readCap = old })
}

// ShortenLease sets l's call lease (LeaseTTL in production).
func ShortenLease(l *Limiter, d time.Duration) { l.lease = d }

// KillLimiter stands for l's replica dying: its calls' leases are no
// longer renewed, nor released.
func KillLimiter(l *Limiter) { close(l.dead) }
