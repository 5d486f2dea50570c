package state

import (
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
)

func sampleEntry() cache.Entry {
	return cache.Entry{URL: "https://a.test/", FinalURL: "https://a.test/", Title: "T", Content: "c",
		FetchedAt: time.UnixMilli(1700000000000), Extra: []byte(`{"links":[]}`)}
}
