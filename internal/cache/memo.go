package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/gatehouse-dev/gatehouse/internal/principal"
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
// responses keyed by (principal, provider, NormalizeQuery(query),
// BucketLimit(limit)) — the principal (principal.From of the Do ctx) is a
// Gatehouse addition (issue 18: one caller never reads another's entries),
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

	shared SharedFlight // nil: the in-process memo (embedded default)
	codec  MemoCodec
}

// SharedFlight memoises a call across replicas (Redis, GATEHOUSE_REDIS_URL;
// internal/state): one replica at a time runs a call for a key, holding a
// short lock that expires if it crashes; the others wait and read the
// result when it lands. Safe for concurrent use.
type SharedFlight interface {
	// Do returns the value stored under key (hit true) or runs call under
	// the key's lock and, when call reports store, keeps its value for ttl.
	// A caller that waited for another replica's call gets that call's
	// stored value (hit false); when that call stored nothing (a failure),
	// one waiter runs call itself. Errors: call's own error, ctx's, the
	// store unreachable (state_unavailable), a corrupt stored value
	// (state_corrupt).
	Do(ctx context.Context, key string, ttl time.Duration,
		call func(ctx context.Context) (val []byte, store bool, err error)) (val []byte, hit bool, err error)
}

// MemoCodec turns memo values into bytes and back for a SharedFlight.
// Decode must validate its input like user input (typed error, never a
// panic): the bytes come from the shared store.
type MemoCodec struct {
	Encode func(v any) ([]byte, error)
	Decode func(b []byte) (any, error)
}

type memoKey struct {
	principal       string // principal.From(ctx): one principal never reads another's entries
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

// NewSharedMemo returns a Memo whose entries and single flight live in f
// (shared by replicas), scoped per principal (principal.From of the Do
// ctx: one principal never reads another's memo entries). Values cross
// the store through codec. A ttl ≤ 0 (web.cache_enabled false) stores
// nothing and coalesces in this process only, as NewMemo does; a nil f is
// NewMemo.
func NewSharedMemo(ttl time.Duration, now func() time.Time, f SharedFlight, codec MemoCodec) *Memo {
	m := NewMemo(ttl, now)
	if f != nil && ttl > 0 && codec.Encode != nil && codec.Decode != nil {
		m.shared, m.codec = f, codec
	}
	return m
}

// SharedKey is the shared-store key suffix of a memo entry: the hex sha256
// of principal, provider, normalised query and bucket (the query text
// itself never appears in a key).
func SharedKey(principalName, provider, query string, limit int) string {
	sum := sha256.Sum256([]byte(principalName + "\x00" + provider + "\x00" + NormalizeQuery(query) + "\x00" + strconv.Itoa(BucketLimit(limit))))
	return hex.EncodeToString(sum[:])
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
	k := memoKey{principal: principal.From(ctx), provider: provider, query: NormalizeQuery(query), bucket: BucketLimit(limit)}
	if m.shared != nil {
		return m.doShared(ctx, k, call)
	}
	if v, ok := m.lookup(k); ok {
		return v, true, nil
	}
	fk := k.principal + "\x00" + strconv.Itoa(k.bucket) + "\x00" + k.provider + "\x00" + k.query
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
	return awaitFlight(ctx, ch)
}

// doShared is Do through the SharedFlight: calls of this process are
// coalesced first (one goroutine per key asks the store), then across
// replicas by the store's lock.
func (m *Memo) doShared(ctx context.Context, k memoKey,
	call func(ctx context.Context, bucket int) (any, bool, error)) (any, bool, error) {
	key := SharedKey(k.principal, k.provider, k.query, k.bucket)
	ch := m.flight.DoChan(key, func() (any, error) {
		var ran bool
		var callV any
		b, hit, err := m.shared.Do(ctx, key, m.ttl, func(ctx context.Context) ([]byte, bool, error) {
			v, success, err := call(ctx, k.bucket)
			ran, callV = true, v
			if err != nil || !success {
				return nil, false, err
			}
			enc, eerr := m.codec.Encode(v)
			if eerr != nil {
				return nil, false, nil // served, not shared
			}
			return enc, true, nil
		})
		if ran {
			return memoResult{value: callV}, err
		}
		if err != nil {
			return memoResult{}, err
		}
		v, derr := m.codec.Decode(b)
		if derr != nil {
			return memoResult{}, derr
		}
		return memoResult{value: v, hit: hit}, nil
	})
	return awaitFlight(ctx, ch)
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

// awaitFlight returns the outcome of a single-flight call of Do: the value,
// whether it was a memo hit, and its error; or ctx.Err() when ctx ends first
// (the call goes on for its other waiters).
func awaitFlight(ctx context.Context, ch <-chan singleflight.Result) (any, bool, error) {
	select {
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case r := <-ch:
		res, _ := r.Val.(memoResult)
		return res.value, res.hit, r.Err
	}
}
