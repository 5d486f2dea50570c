package handle

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/internal/state"
)

// Key layout in Redis (docs/state.md). <p> is state.PrincipalKey of the
// principal, so another principal's handle reads as absent.
const (
	// RecordPrefix + <p> ":" <handle>: the Record, TTL RecordTTL(idle),
	// refreshed by every call.
	RecordPrefix = state.KeyPrefix + "browser-session:"
	// LockPrefix + <p> ":" <handle>: the call lock (SET NX PX LockTTL,
	// renewed while the call runs).
	LockPrefix = state.KeyPrefix + "browser-session-lock:"
	// LeasePrefix + <p> ":" <handle>: the janitor's reap lease (SET NX).
	LeasePrefix = state.KeyPrefix + "browser-session-reap:"
	// ExpiredPrefix + <p> ":" <handle>: the marker of a reaped session
	// (JSON Expired), TTL MarkerTTL.
	ExpiredPrefix = state.KeyPrefix + "browser-session-expired:"
	// ProxyPrefix + <node id> ":" <proxy id>: the index key of a handle
	// session's proxy on a node, with the record's TTL; the node closes
	// the proxy (and disposes its BrowserContext) once it is gone.
	ProxyPrefix = state.KeyPrefix + "browser-node-proxy:"

	// LockTTL is the call lock's lifetime, renewed every LockTTL/3.
	LockTTL = 10 * time.Second
	// LeaseTTL is the reap lease's lifetime.
	LeaseTTL = time.Minute
	// MarkerTTL is how long a reaped handle reads session_expired.
	MarkerTTL = 24 * time.Hour
	// Grace is how long a record outlives the inactivity timeout, so a
	// janitor sees it idle before Redis drops it.
	Grace = 90 * time.Second

	opTimeout = 3 * time.Second
	pollEvery = 20 * time.Millisecond
)

// MaxRecordTTL caps RecordTTL: a huge browser.inactivity_timeout would
// overflow the sum (a negative TTL, which Redis refuses on every write).
const MaxRecordTTL = 365 * 24 * time.Hour

// RecordTTL is the TTL of a record (and of its proxy's index key) for the
// inactivity timeout idle: idle + Grace, at most MaxRecordTTL.
func RecordTTL(idle time.Duration) time.Duration {
	if idle > MaxRecordTTL-Grace {
		return MaxRecordTTL
	}
	return idle + Grace
}

func suffix(p, h string) string { return state.PrincipalKey(p) + ":" + h }

// RecordKey is the Redis key of principal p's handle h.
func RecordKey(p, h string) string { return RecordPrefix + suffix(p, h) }

// ProxyKey is the index key of node's session proxy id.
func ProxyKey(node, id string) string { return ProxyPrefix + node + ":" + id }

// SnapHash is the Record.SnapHash of a snapshot's text: 16 hex of its
// sha256, "" for "".
func SnapHash(text string) string {
	if text == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// Expired is the marker a reap leaves: when and after how long idle.
type Expired struct {
	AtMS   int64  `json:"at_ms"`
	IdleMS int64  `json:"idle_ms"`
	Key    string `json:"key"`
	// Lost: the session was lost (Store.Lose), not reaped; Why says what
	// went (its node, its tab, its record in Redis).
	Lost bool   `json:"lost,omitempty"`
	Why  string `json:"why,omitempty"`
	// Closed: the session was ended by browser_close (Store.Delete).
	Closed bool `json:"closed,omitempty"`
}

// Store keeps the handle records in Redis. Safe for concurrent use.
type Store struct {
	rdb redis.UniversalClient
	lg  *slog.Logger
}

// NewStore returns the store in rdb (the process's shared-state client);
// lg (nil: discard) receives the records refused as another principal's.
func NewStore(rdb redis.UniversalClient, lg *slog.Logger) *Store {
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Store{rdb: rdb, lg: lg}
}

func octx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
}

func (s *Store) fail(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	return state.Unavailable("redis", err)
}

// failKey is fail for a command on key: a WRONGTYPE answer (the key holds
// a hash, a list, … that Gatehouse never writes) is state_corrupt naming
// the DEL fix, not Redis being unavailable.
func (s *Store) failKey(key string, err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") {
		return state.Corrupt(key, "a value of another Redis type")
	}
	return s.fail(err)
}

// Get reads principal p's record of h: found false when there is none, or
// when the record names another principal (Record.Principal: copied under
// p's key; logged as corrupt, answered like a record under another key); a
// value that does not Decode is a state_corrupt error.
func (s *Store) Get(ctx context.Context, p, h string) (Record, bool, error) {
	if !Valid(h) {
		return Record{}, false, nil
	}
	c, cancel := octx(ctx)
	defer cancel()
	key := RecordKey(p, h)
	n, err := s.rdb.StrLen(c, key).Result()
	if err != nil {
		return Record{}, false, s.failKey(key, err)
	}
	if n > MaxRecordBytes {
		return Record{}, false, state.Corrupt(key, "too long")
	}
	b, err := s.rdb.Get(c, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, s.failKey(key, err)
	}
	r, err := Decode(h, b)
	if err != nil {
		return Record{}, false, state.Corrupt(key, "not a browser session record")
	}
	if r.Principal != state.PrincipalKey(p) {
		s.lg.Warn("browser session record refused: it names another principal (corrupt or copied); DEL it", "key", key)
		return Record{}, false, nil
	}
	return r, true, nil
}

// Put writes principal p's record r with ttl, and refreshes its proxy's
// index key to the same ttl.
func (s *Store) Put(ctx context.Context, p string, r Record, ttl time.Duration) error {
	b, err := r.Encode()
	if err != nil {
		return err
	}
	c, cancel := octx(ctx)
	defer cancel()
	pipe := s.rdb.TxPipeline()
	pipe.Set(c, RecordKey(p, r.Handle), b, ttl)
	pipe.PExpire(c, ProxyKey(r.Node, r.Proxy), ttl)
	_, err = pipe.Exec(c)
	return s.fail(err)
}

// Update is Put of a record that must still be there (SET XX): found
// false (nothing written) when principal p's record of r is gone, so a
// call that ran while Redis lost it never writes a ghost record back.
func (s *Store) Update(ctx context.Context, p string, r Record, ttl time.Duration) (found bool, err error) {
	b, err := r.Encode()
	if err != nil {
		return false, err
	}
	c, cancel := octx(ctx)
	defer cancel()
	pipe := s.rdb.TxPipeline()
	set := pipe.SetXX(c, RecordKey(p, r.Handle), b, ttl)
	pipe.PExpire(c, ProxyKey(r.Node, r.Proxy), ttl)
	if _, err := pipe.Exec(c); err != nil && !errors.Is(err, redis.Nil) {
		return false, s.fail(err)
	}
	return set.Val(), nil
}

// Delete removes principal p's record of r and its proxy's index key
// (browser_close), leaving a closed marker: the handle reads
// session_not_found, also on a replica that still holds an attachment.
func (s *Store) Delete(ctx context.Context, p string, r Record) error {
	return s.end(ctx, p, r, Expired{AtMS: time.Now().UnixMilli(), Key: r.Key, Closed: true})
}

// Lose removes principal p's record r of a session that is lost (why: its
// node, its tab or its record went): the record and its proxy index key
// are deleted and the marker says lost, so the handle reads session_lost
// with why on every replica (and browser_navigate with it starts over)
// until MarkerTTL.
func (s *Store) Lose(ctx context.Context, p string, r Record, why string) error {
	return s.end(ctx, p, r, Expired{AtMS: time.Now().UnixMilli(), Key: r.Key, Lost: true, Why: why})
}

// end deletes principal p's record r and its proxy's index key, writes
// marker for the handle (MarkerTTL) and publishes its end event
// (EventsChannel), in one transaction.
func (s *Store) end(ctx context.Context, p string, r Record, marker Expired) error {
	b, _ := json.Marshal(marker)
	c, cancel := octx(ctx)
	defer cancel()
	pipe := s.rdb.TxPipeline()
	pipe.Del(c, RecordKey(p, r.Handle), ProxyKey(r.Node, r.Proxy))
	pipe.Set(c, ExpiredPrefix+suffix(p, r.Handle), b, MarkerTTL)
	pipe.Publish(c, EventsChannel, endEvent(r.Handle)) // standby.go
	_, err := pipe.Exec(c)
	return s.fail(err)
}

// MarkExpired writes the session_expired marker of principal p's handle.
func (s *Store) MarkExpired(ctx context.Context, p, h string, e Expired) error {
	b, _ := json.Marshal(e)
	c, cancel := octx(ctx)
	defer cancel()
	return s.fail(s.rdb.Set(c, ExpiredPrefix+suffix(p, h), b, MarkerTTL).Err())
}

// ExpiredOf reads the marker of principal p's handle h (found false: none,
// or one that does not decode).
func (s *Store) ExpiredOf(ctx context.Context, p, h string) (Expired, bool, error) {
	if !Valid(h) {
		return Expired{}, false, nil
	}
	c, cancel := octx(ctx)
	defer cancel()
	b, err := s.rdb.Get(c, ExpiredPrefix+suffix(p, h)).Bytes()
	if err != nil {
		return Expired{}, false, s.fail(err)
	}
	var e Expired
	if len(b) > 4096 || json.Unmarshal(b, &e) != nil || e.AtMS <= 0 || e.IdleMS < 0 || !text(e.Key) || (e.Why != "" && !text(e.Why)) {
		return Expired{}, false, nil
	}
	return e, true, nil
}

// Lock takes the call lock of principal p's handle h, waiting (polling)
// until it is free or ctx ends; the lock is renewed until unlock is called.
// Two calls on one session, from any replicas, are so serialised. ctx
// ending first is session_busy (Busy, retry_after_s the lock's remaining
// TTL); a lock value Gatehouse did not write (not a 32-hex token) is
// session_busy at once, naming the DEL fix; a key of another Redis type
// is state_corrupt.
func (s *Store) Lock(ctx context.Context, p, h string) (unlock func(), err error) {
	key := LockPrefix + suffix(p, h)
	var tb [16]byte
	rand.Read(tb[:])
	token := hex.EncodeToString(tb[:])
	start := time.Now()
	checked := false
	for {
		c, cancel := octx(ctx)
		ok, err := s.rdb.SetNX(c, key, token, LockTTL).Result()
		cancel()
		if err != nil {
			return nil, s.failKey(key, err)
		}
		if ok {
			break
		}
		if !checked {
			checked = true
			c, cancel := octx(ctx)
			v, err := s.rdb.Get(c, key).Result()
			cancel()
			if err != nil && !errors.Is(err, redis.Nil) {
				return nil, s.failKey(key, err)
			}
			if err == nil && !Valid(v) {
				s.lg.Warn("browser session lock holds a value Gatehouse did not write; DEL it", "key", key)
				return nil, Busy(key, time.Since(start), s.pttl(ctx, key), true)
			}
		}
		select {
		case <-ctx.Done():
			return nil, Busy(key, time.Since(start), s.pttl(ctx, key), false)
		case <-time.After(pollEvery):
		}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(LockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				c, cancel := octx(ctx)
				renewScript.Run(c, s.rdb, []string{key}, token, LockTTL.Milliseconds())
				cancel()
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		c, cancel := octx(ctx)
		releaseScript.Run(c, s.rdb, []string{key}, token)
		cancel()
	}, nil
}

// pttl is key's remaining TTL (LockTTL when it has none or Redis does not
// answer).
func (s *Store) pttl(ctx context.Context, key string) time.Duration {
	c, cancel := octx(ctx)
	defer cancel()
	d, err := s.rdb.PTTL(c, key).Result()
	if err != nil || d <= 0 {
		return LockTTL
	}
	return d
}

// Lease takes the janitor's reap lease of the record under key (SET NX):
// true for exactly one replica within LeaseTTL.
func (s *Store) Lease(ctx context.Context, recordKey string) bool {
	c, cancel := octx(ctx)
	defer cancel()
	ok, err := s.rdb.SetNX(c, LeasePrefix+strings.TrimPrefix(recordKey, RecordPrefix), "1", LeaseTTL).Result()
	return err == nil && ok
}

// Listed is one record found by Scan: its principal key part, its handle
// and the record.
type Listed struct {
	PKey   string // state.PrincipalKey of the owner
	Handle string
	Record Record
}

// Scan returns every record (of every principal), at most max; one that
// does not decode is skipped.
func (s *Store) Scan(ctx context.Context, max int) ([]Listed, error) {
	c, cancel := octx(ctx)
	defer cancel()
	var keys []string
	it := s.rdb.Scan(c, 0, RecordPrefix+"*", 200).Iterator()
	for it.Next(c) && len(keys) < max {
		keys = append(keys, it.Val())
	}
	if err := it.Err(); err != nil {
		return nil, s.fail(err)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	vals, err := s.rdb.MGet(c, keys...).Result()
	if err != nil {
		return nil, s.fail(err)
	}
	var out []Listed
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue
		}
		pk, h, ok := strings.Cut(strings.TrimPrefix(keys[i], RecordPrefix), ":")
		if !ok {
			continue
		}
		r, err := Decode(h, []byte(str))
		if err != nil {
			continue
		}
		out = append(out, Listed{PKey: pk, Handle: h, Record: r})
	}
	return out, nil
}

// Reap is the janitor's removal of a listed record: its record and proxy
// index key deleted, the expiry marker written (idle long), its end event
// published (EventsChannel).
func (s *Store) Reap(ctx context.Context, l Listed, idle time.Duration) error {
	c, cancel := octx(ctx)
	defer cancel()
	b, _ := json.Marshal(Expired{AtMS: time.Now().UnixMilli(), IdleMS: idle.Milliseconds(), Key: l.Record.Key})
	pipe := s.rdb.TxPipeline()
	pipe.Del(c, RecordPrefix+l.PKey+":"+l.Handle, ProxyKey(l.Record.Node, l.Record.Proxy))
	pipe.Set(c, ExpiredPrefix+l.PKey+":"+l.Handle, b, MarkerTTL)
	pipe.Publish(c, EventsChannel, endEvent(l.Handle)) // standby.go
	_, err := pipe.Exec(c)
	return s.fail(err)
}

// ReapIdle is the janitor's pass over every principal's records: each one
// idle longer than idle (by its LastActive) is reaped by exactly one
// replica, the one that takes its lease (SET NX) and then its call lock (a
// session in a call is left for the next pass): end disposes of the
// session (its context, its proxy), then the record and its proxy index
// key are deleted and the session_expired marker written. It returns the
// records reaped here, with how long each was idle.
func (s *Store) ReapIdle(ctx context.Context, idle time.Duration, end func(Listed)) ([]Listed, []time.Duration, error) {
	ls, err := s.Scan(ctx, 10000)
	if err != nil {
		return nil, nil, err
	}
	var out []Listed
	var idles []time.Duration
	now := time.Now()
	for _, l := range ls {
		sat := now.Sub(time.UnixMilli(l.Record.LastActive))
		if sat <= idle || !s.Lease(ctx, RecordPrefix+l.PKey+":"+l.Handle) {
			continue
		}
		unlock, ok := s.TryLockListed(ctx, l)
		if !ok {
			continue
		}
		end(l)
		err := s.Reap(ctx, l, sat)
		unlock()
		if err != nil {
			return out, idles, err
		}
		out, idles = append(out, l), append(idles, sat)
	}
	return out, idles, nil
}

// TryLockListed is TryLock for a listed record.
func (s *Store) TryLockListed(ctx context.Context, l Listed) (unlock func(), ok bool) {
	key := LockPrefix + l.PKey + ":" + l.Handle
	var tb [16]byte
	rand.Read(tb[:])
	token := hex.EncodeToString(tb[:])
	oc, ocancel := octx(ctx)
	defer ocancel()
	got, err := s.rdb.SetNX(oc, key, token, LockTTL).Result()
	if err != nil || !got {
		return nil, false
	}
	return func() {
		c, cancel := octx(ctx)
		releaseScript.Run(c, s.rdb, []string{key}, token)
		cancel()
	}, true
}

var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)

// PutProxy writes the index key of node's proxy id with ttl (the node, when
// it opens a handle session's proxy).
func PutProxy(ctx context.Context, rdb redis.UniversalClient, node, id string, ttl time.Duration) error {
	c, cancel := octx(ctx)
	defer cancel()
	return rdb.Set(c, ProxyKey(node, id), strconv.FormatInt(time.Now().UnixMilli(), 10), ttl).Err()
}

// ProxyAlive reports whether node's proxy id still has its index key; a
// Redis failure reports true (the node keeps the proxy until it can tell).
func ProxyAlive(ctx context.Context, rdb redis.UniversalClient, node, id string) bool {
	c, cancel := octx(ctx)
	defer cancel()
	n, err := rdb.Exists(c, ProxyKey(node, id)).Result()
	return err != nil || n > 0
}

// DeleteProxy removes the index key of node's proxy id.
func DeleteProxy(ctx context.Context, rdb redis.UniversalClient, node, id string) {
	c, cancel := octx(ctx)
	defer cancel()
	rdb.Del(c, ProxyKey(node, id))
}
