package cache

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// limitBuckets are the result counts a search provider is asked for
// (spec §A9.1): requested limits round up so near-identical requests share
// one memo entry.
var limitBuckets = [...]int{10, 20, 50, 100}

// BucketLimit returns the smallest of 10, 20, 50, 100 that is ≥ limit;
// limits above 100 give 100 (spec §A9.1). Limits below 1 give 10.
func BucketLimit(limit int) int {
	for _, b := range limitBuckets {
		if limit <= b {
			return b
		}
	}
	return limitBuckets[len(limitBuckets)-1]
}

// NormalizeQuery lower-cases q, trims it and collapses every whitespace run
// to one space (spec §A9.1), so trivial variants share a memo entry.
// Whitespace is Python's notion (Unicode spaces, U+001C–U+001F included).
func NormalizeQuery(q string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(q), truncate.IsPySpace), " ")
}

// Memo is the in-memory search memo (spec §A9.1): successful search
// responses keyed by (provider, NormalizeQuery(query), BucketLimit(limit)),
// kept for a TTL, with concurrent identical requests coalesced into one paid
// call. Safe for concurrent use.
//
// Values are shared, not copied: every caller receives the same value, so
// callers must treat it as immutable (copy before slicing to the caller's
// limit).
type Memo struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[memoKey]memoEntry
	flight  singleflight.Group
}

type memoKey struct {
	provider, query string
	bucket          int
}

type memoEntry struct {
	expires time.Time
	value   any
}

type memoResult struct {
	value any
	hit   bool
}

// NewMemo returns a Memo whose entries live for ttl (the config package
// clamps web.cache_ttl_minutes to [1, 1440] minutes). A ttl ≤ 0 disables
// storing (web.cache_enabled false) but identical concurrent calls are still
// coalesced. now is the clock (nil means time.Now); expiry compares now()
// values, which carry Go's monotonic reading.
func NewMemo(ttl time.Duration, now func() time.Time) *Memo {
	if now == nil {
		now = time.Now
	}
	return &Memo{ttl: ttl, now: now, entries: make(map[memoKey]memoEntry)}
}

// Do returns the memoised response for (provider, query, limit) or obtains
// it with call. call receives the bucketed limit and returns the response,
// whether it is a success, and an error; only successes without error are
// stored (failures and rescued responses are never memoised: a caller marks
// a rescued response as not a success). While one call for a key is in
// flight, identical Do calls wait for it and share its outcome (single
// flight); a waiter whose ctx ends returns ctx.Err(). The call runs under
// the ctx of the caller that started it.
//
// hit reports whether the value came from the memo rather than from a call
// made for this request (or a concurrent identical one). Expired entries are
// dropped on lookup and swept on every store.
func (m *Memo) Do(ctx context.Context, provider, query string, limit int,
	call func(ctx context.Context, bucket int) (any, bool, error)) (any, bool, error) {
	k := memoKey{provider: provider, query: NormalizeQuery(query), bucket: BucketLimit(limit)}
	if v, ok := m.lookup(k); ok {
		return v, true, nil
	}
	fk := strconv.Itoa(k.bucket) + "\x00" + k.provider + "\x00" + k.query
	ch := m.flight.DoChan(fk, func() (any, error) {
		if v, ok := m.lookup(k); ok {
			return memoResult{value: v, hit: true}, nil
		}
		v, success, err := call(ctx, k.bucket)
		if err == nil && success {
			m.store(k, v)
		}
		return memoResult{value: v}, err
	})
	select {
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case r := <-ch:
		res, _ := r.Val.(memoResult)
		return res.value, res.hit, r.Err
	}
}

func (m *Memo) lookup(k memoKey) (any, bool) {
	if m.ttl <= 0 {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok {
		return nil, false
	}
	if !m.now().Before(e.expires) {
		delete(m.entries, k)
		return nil, false
	}
	return e.value, true
}

func (m *Memo) store(k memoKey, v any) {
	if m.ttl <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for key, e := range m.entries {
		if !now.Before(e.expires) {
			delete(m.entries, key)
		}
	}
	m.entries[k] = memoEntry{expires: now.Add(m.ttl), value: v}
}

// Len returns the number of stored (possibly expired) entries.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
