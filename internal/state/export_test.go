package state

import (
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
)

func sampleEntry() cache.Entry {
	return cache.Entry{URL: "https://a.test/", FinalURL: "https://a.test/", Title: "T", Content: "c",
		FetchedAt: time.UnixMilli(1700000000000), Extra: []byte(`{"links":[]}`)}
}

// ShortenLease sets l's call lease (LeaseTTL in production).
func ShortenLease(l *Limiter, d time.Duration) { l.lease = d }

// KillLimiter stands for l's replica dying: its calls' leases are no
// longer renewed, nor released.
func KillLimiter(l *Limiter) { close(l.dead) }
