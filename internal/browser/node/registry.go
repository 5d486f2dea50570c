package node

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"
)

// Registry is the node registry in Redis: one key per node (KeyPrefix +
// id) holding its Record with the heartbeat's TTL. Safe for concurrent use.
type Registry struct {
	rdb redis.UniversalClient
}

// NewRegistry returns the registry kept in rdb (the process's shared-state
// client).
func NewRegistry(rdb redis.UniversalClient) *Registry { return &Registry{rdb: rdb} }

// Client is the registry's Redis client (the node's handle proxy index,
// internal/browser/handle).
func (g *Registry) Client() redis.UniversalClient { return g.rdb }

// Get returns the registered record of node id: found false when it is not
// registered (or its record does not decode).
func (g *Registry) Get(ctx context.Context, id string) (Record, bool, error) {
	if !idRe.MatchString(id) {
		return Record{}, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	b, err := g.rdb.Get(ctx, KeyPrefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	r, err := Decode(KeyPrefix+id, b)
	if err != nil {
		return Record{}, false, nil
	}
	return r, true, nil
}

// opTimeout bounds one registry round trip.
const opTimeout = 3 * time.Second

// Put writes r under its key with ttl (a heartbeat).
func (g *Registry) Put(ctx context.Context, r Record, ttl time.Duration) error {
	b, err := r.Encode()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return g.rdb.Set(ctx, r.Key(), b, ttl).Err()
}

// Delete removes the record of node id (deregistration).
func (g *Registry) Delete(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return g.rdb.Del(ctx, KeyPrefix+id).Err()
}

// List returns the registered nodes, sorted by id. A value that does not
// Decode is skipped and reported in bad (one error per key, naming the key,
// never the value); err is a Redis failure.
func (g *Registry) List(ctx context.Context) (recs []Record, bad []error, err error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var keys []string
	iter := g.rdb.Scan(ctx, 0, KeyPrefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) > 10000 {
			break
		}
	}
	if err := iter.Err(); err != nil {
		return nil, nil, err
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	vals, err := g.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, nil, err
	}
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue // expired between SCAN and MGET
		}
		r, derr := Decode(keys[i], []byte(s))
		if derr != nil {
			bad = append(bad, fmt.Errorf("%s: %w", keys[i], derr))
			continue
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].ID < recs[j].ID })
	return recs, bad, nil
}

// ErrNoRoom is returned by Pick when every node is full.
var ErrNoRoom = errors.New("no browser node has room")

// Pick returns the node with the fewest sessions relative to its capacity,
// skipping full ones and those skip names (ids tried already); ties go to
// the lower id. ErrNoRoom when none is left.
func Pick(recs []Record, skip map[string]bool) (Record, error) {
	best := -1
	for i, r := range recs {
		if r.Full() || skip[r.ID] {
			continue
		}
		if best < 0 || r.Load() < recs[best].Load() {
			best = i
		}
	}
	if best < 0 {
		return Record{}, ErrNoRoom
	}
	return recs[best], nil
}
