package state

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/metrics"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// Key layout (docs/state.md). Every key starts with KeyPrefix.
const (
	KeyPrefix = "gatehouse:"
	// PageTTL is how long a stored page (truncate-and-store, browser
	// snapshot) is kept in Redis after its last save.
	PageTTL = 24 * time.Hour
	// LockTTL is the memo lock's lifetime: renewed every LockTTL/3 while the
	// holder's call runs, so a crashed holder's lock expires within LockTTL.
	LockTTL = 10 * time.Second
	// LeaseTTL is the lease of a call admitted by the Limiter: renewed
	// every LeaseTTL/3 while the call runs, so a call of a replica that
	// dies before releasing it stops counting against its principal's
	// concurrency cap within LeaseTTL.
	LeaseTTL = 15 * time.Second
	// opTimeout bounds one Redis round trip when the caller's ctx has a
	// later (or no) deadline, so a hung Redis becomes state_unavailable,
	// not a hung call.
	opTimeout = 3 * time.Second
	// pollEvery is how often a memo waiter looks for the holder's result.
	pollEvery = 25 * time.Millisecond
)

// Options configure Open. Zero fields take the documented defaults.
type Options struct {
	Target Target // from ParseURL or FromConfig
	// Guard dials Redis: every connection goes through internal/egress (the
	// one place Gatehouse dials), with the Redis host:port allowed as a
	// configured origin (egress.Guard.WithOrigin: a private or loopback
	// Redis is reachable, a cloud metadata address never is). Nil means a
	// guard with default classification (egress.New of zero Options).
	Guard *egress.Guard
	// TLSConfig is used for rediss:// (nil: system roots, TLS 1.2+, the
	// URL's host as server name).
	TLSConfig *tls.Config
	// Now is the clock for cache ages; nil means time.Now.
	Now func() time.Time
}

// Redis is the shared state kept in one Redis. Open builds it without
// connecting (the client dials on first use and re-dials after failures, so
// calls succeed again once Redis is back). Safe for concurrent use.
type Redis struct {
	rdb    *redis.Client
	target Target
	now    func() time.Time
}

// Open returns the Redis state for o.Target. It does not dial: use Ping to
// check reachability. Close releases the connections.
func Open(o Options) *Redis {
	t := o.Target
	ro := &redis.Options{
		Dialer: dialer(o.Guard, t, o.TLSConfig),
		Addr:   t.Host, Username: t.Username, Password: t.password, DB: t.DB,
		DialTimeout: 2 * time.Second, ReadTimeout: opTimeout, WriteTimeout: opTimeout,
		MaxRetries: 1, DisableIdentity: true, ContextTimeoutEnabled: true, Protocol: 2,
		// One dial attempt per command: Redis down must become
		// state_unavailable quickly, not after the library's 5 dials.
		DialerRetries: 1, DialerRetryTimeout: 50 * time.Millisecond,
		// Maintenance notifications (RESP3 "MOVING") would make go-redis dial
		// endpoints the server names with its own default dialer, around
		// egress: off (internal/archtest checks both settings).
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	quietOnce.Do(func() { redis.SetLogger(quietLogger{}) })
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Redis{rdb: redis.NewClient(ro), target: t, now: now}
}

// dialer returns the go-redis Dialer of t: the egress guard's dial (t's
// host:port allowed as an origin), then, for rediss://, a TLS handshake
// (tlsCfg, or TLS 1.2+ with the system roots and the host as server name).
func dialer(g *egress.Guard, t Target, tlsCfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if g == nil {
		g = egress.New(egress.Options{})
	}
	host, portStr, _ := net.SplitHostPort(t.Host)
	port, _ := strconv.ParseUint(portStr, 10, 16)
	g = g.WithOrigin(host, uint16(port))
	if t.TLS && tlsCfg == nil {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := g.DialContext(ctx, network, addr)
		if err != nil || !t.TLS {
			return conn, err
		}
		tc := tls.Client(conn, tlsCfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		return tc, nil
	}
}

// quietLogger drops go-redis' own log lines ("redis: connection pool:
// failed to dial …"), which would otherwise reach stderr in a form no
// Gatehouse surface promises; every failure reaches the caller as a
// state_unavailable refusal instead. (go-redis has one process-wide
// logger.)
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// Target returns the Redis target (printable: no password).
func (r *Redis) Target() Target { return r.target }

// Close closes the client's connections.
func (r *Redis) Close() error { return r.rdb.Close() }

// Ping sends one PING. It returns nil when Redis answered, else a
// state_unavailable *reason.Error naming the host. For /readyz.
func (r *Redis) Ping(ctx context.Context) error { return r.Health(ctx).Err }

// Health pings Redis once and reports the host and the round-trip latency.
func (r *Redis) Health(ctx context.Context) Health {
	h := Health{Kind: KindRedis, Host: r.target.Host}
	ctx, cancel := r.opCtx(ctx)
	defer cancel()
	start := time.Now()
	if err := r.rdb.Ping(ctx).Err(); err != nil {
		h.Err = r.fail("", err)
		return h
	}
	h.Latency = time.Since(start)
	return h
}

// opCtx bounds ctx by opTimeout.
func (r *Redis) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, opTimeout)
}

// fail maps a go-redis error on key to a typed refusal: WRONGTYPE (a value
// of another Redis type under our key) is state_corrupt; the caller's ctx
// ending is returned as is; anything else is state_unavailable.
func (r *Redis) fail(key string, err error) error {
	if err == nil {
		return nil
	}
	if e := reason.As(err); e != nil && (e.Code == reason.StateCorrupt || e.Code == reason.StateUnavailable) {
		return e
	}
	if errors.Is(err, context.Canceled) {
		return err // the caller gave up; not Redis' fault
	}
	metrics.RedisError() // gatehouse_redis_errors_total on /metrics
	var re redis.Error
	if errors.As(err, &re) && strings.HasPrefix(re.Error(), "WRONGTYPE") {
		return Corrupt(key, "a Redis value of the wrong type")
	}
	return Unavailable(r.target.Host, err)
}

// PrincipalKey is the key part naming principal name in every key scoped to
// a principal (PageKey; the browser session records of
// internal/browser/handle): 16 hex of its sha256.
func PrincipalKey(name string) string { return principalKey(name) }

// principalKey is the key part naming a principal: 16 hex of sha256, so
// a name never appears in a key and cannot inject a separator.
func principalKey(name string) string {
	if name == "" {
		name = principal.Default
	}
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:8])
}

// ---- capped reads ----

// readCap bounds every stored value read (maxValueBytes; tests lower it).
var readCap = maxValueBytes

// lockCap bounds a memo lock read: "ghl1 " and 32 hex, with room to spare.
const lockCap = 256

// readCappedScript returns the string under KEYS[1] only when its length
// is at most ARGV[1]: nil when there is none, the length (an integer) when
// it is longer, so an oversized value never leaves Redis. A value of
// another Redis type is a WRONGTYPE error.
var readCappedScript = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return false end
if t ~= 'string' then return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value') end
local n = redis.call('STRLEN', KEYS[1])
if n > tonumber(ARGV[1]) then return n end
return redis.call('GET', KEYS[1])`)

// readCapped reads the string under key, at most limit bytes: found false
// when there is none; a value longer than limit is refused as
// state_corrupt without being transferred (STRLEN is checked first, in
// the same atomic script as the GET).
func (r *Redis) readCapped(ctx context.Context, key string, limit int) ([]byte, bool, error) {
	v, err := readCappedScript.Run(ctx, r.rdb, []string{key}, limit).Result()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, r.fail(key, err)
	}
	switch v := v.(type) {
	case string:
		return []byte(v), true, nil
	case int64:
		return nil, false, Corrupt(key, "too long ("+strconv.FormatInt(v, 10)+" bytes)")
	default:
		return nil, false, Corrupt(key, "an unexpected read answer")
	}
}

// ---- extract cache (cache.SharedEntries) ----

// CacheKey is the Redis key of extract-cache key k (cache.Key).
func CacheKey(k string) string { return KeyPrefix + "cache:" + k }

var _ cache.SharedEntries = (*Redis)(nil)

// GetEntry implements cache.SharedEntries.
func (r *Redis) GetEntry(ctx context.Context, k string) (cache.Entry, bool, error) {
	key := CacheKey(k)
	ctx, cancel := r.opCtx(ctx)
	defer cancel()
	b, found, err := r.readCapped(ctx, key, readCap)
	if err != nil || !found {
		return cache.Entry{}, false, err
	}
	e, err := DecodeEntry(key, b)
	if err != nil {
		return cache.Entry{}, false, err
	}
	return e, true, nil
}

// putEntryScript stores ARGV[1] for ARGV[3] ms unless the stored entry
// has a later fetch time (ARGV[2], unix ms); a value that is not an entry
// is replaced.
var putEntryScript = redis.NewScript(`
local old = redis.call('GET', KEYS[1])
if old then
  local t = tonumber(string.match(old, '^gh1 (%d+) '))
  if t and t > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1`)

// PutEntry implements cache.SharedEntries: the TTL is kept by Redis.
func (r *Redis) PutEntry(ctx context.Context, k string, e cache.Entry, ttl time.Duration) error {
	key := CacheKey(k)
	v, err := EncodeEntry(e)
	if err != nil {
		return err
	}
	ctx, cancel := r.opCtx(ctx)
	defer cancel()
	err = putEntryScript.Run(ctx, r.rdb, []string{key}, v, e.FetchedAt.UnixMilli(), max(ttl.Milliseconds(), 1)).Err()
	return r.fail(key, err)
}

// ---- stored pages (truncate.PageStore) ----

// PageKey is the Redis key of principal p's stored page name.
func PageKey(p, name string) string { return KeyPrefix + "page:" + principalKey(p) + ":" + name }

var _ truncate.PageStore = (*Redis)(nil)

// SavePage implements truncate.PageStore: the page is kept PageTTL.
func (r *Redis) SavePage(ctx context.Context, p, name, text string) error {
	if !truncate.IsStoreName(name) {
		return reason.Newf(reason.ReadOutsideStore, "", "%q is not a store name", name)
	}
	key := PageKey(p, name)
	ctx, cancel := r.opCtx(ctx)
	defer cancel()
	return r.fail(key, r.rdb.Set(ctx, key, EncodePage(name, text), PageTTL).Err())
}

// LoadPage implements truncate.PageStore: a page of another principal is
// under another key, so it is not found.
func (r *Redis) LoadPage(ctx context.Context, p, name string) (string, bool, error) {
	if !truncate.IsStoreName(name) {
		return "", false, nil
	}
	key := PageKey(p, name)
	ctx, cancel := r.opCtx(ctx)
	defer cancel()
	b, found, err := r.readCapped(ctx, key, readCap)
	if err != nil || !found {
		return "", false, err
	}
	text, err := DecodePage(key, name, b)
	if err != nil {
		return "", false, err
	}
	return text, true, nil
}

// ---- search memo and single flight (cache.SharedFlight) ----

// MemoKey and MemoLockKey are the Redis keys of memo entry k
// (cache.SharedKey: already scoped to the principal).
func MemoKey(k string) string     { return KeyPrefix + "memo:" + k }
func MemoLockKey(k string) string { return KeyPrefix + "memo-lock:" + k }

var _ cache.SharedFlight = (*Redis)(nil)

// releaseScript deletes the lock only if this holder still owns it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// renewScript extends the lock only if this holder still owns it.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)

// Do implements cache.SharedFlight: look up the result; else take the lock
// (SET NX PX LockTTL, renewed while call runs) and run call; else wait,
// polling every pollEvery, until the result lands (hit false) or the lock
// goes (the holder failed or crashed: try again). A lock without a TTL or
// not in Gatehouse's form, or a result that does not decode, is a
// state_corrupt refusal.
func (r *Redis) Do(ctx context.Context, k string, ttl time.Duration,
	call func(ctx context.Context) ([]byte, bool, error)) ([]byte, bool, error) {
	vkey, lkey := MemoKey(k), MemoLockKey(k)
	waited := false
	var tick *time.Timer
	for {
		b, found, err := r.getMemo(ctx, vkey)
		if err != nil || found {
			return b, found && !waited, err
		}
		token, ok, err := r.lock(ctx, lkey)
		if err != nil {
			return nil, false, err
		}
		if ok {
			// The holder may have stored the value and released the
			// lock between the GET above and this SET NX: read it
			// again before calling (double-checked).
			b, found, err := r.getMemo(ctx, vkey)
			if err != nil || found {
				octx, cancel := r.opCtx(context.WithoutCancel(ctx))
				releaseScript.Run(octx, r.rdb, []string{lkey}, lockValue(token))
				cancel()
				return b, found && !waited, err
			}
			return r.runLocked(ctx, vkey, lkey, token, ttl, call)
		}
		if err := r.checkLock(ctx, lkey); err != nil {
			return nil, false, err
		}
		waited = true
		if tick == nil {
			tick = time.NewTimer(pollEvery)
			defer tick.Stop()
		} else {
			tick.Reset(pollEvery)
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-tick.C:
		}
	}
}

func (r *Redis) getMemo(ctx context.Context, key string) ([]byte, bool, error) {
	octx, cancel := r.opCtx(ctx)
	defer cancel()
	b, found, err := r.readCapped(octx, key, readCap)
	if err != nil || !found {
		return nil, false, err
	}
	p, err := DecodeMemo(key, b)
	if err != nil {
		return nil, false, err
	}
	return p, true, nil
}

func (r *Redis) lock(ctx context.Context, key string) (string, bool, error) {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	octx, cancel := r.opCtx(ctx)
	defer cancel()
	ok, err := r.rdb.SetNX(octx, key, lockValue(token), LockTTL).Result()
	if err != nil {
		return "", false, r.fail(key, err)
	}
	return token, ok, nil
}

// checkLock refuses a lock another replica cannot have written: one of
// another form, or one without a TTL (it would never expire).
func (r *Redis) checkLock(ctx context.Context, key string) error {
	octx, cancel := r.opCtx(ctx)
	defer cancel()
	b, found, err := r.readCapped(octx, key, lockCap)
	if err != nil {
		return err
	}
	if !found {
		return nil // released meanwhile
	}
	if _, err := DecodeLock(key, b); err != nil {
		return err
	}
	if d, err := r.rdb.PTTL(octx, key).Result(); err == nil && d == -1 {
		return Corrupt(key, "a memo lock without a TTL")
	}
	return nil
}

func (r *Redis) runLocked(ctx context.Context, vkey, lkey, token string, ttl time.Duration,
	call func(ctx context.Context) ([]byte, bool, error)) ([]byte, bool, error) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // renew the lock while the call runs
		defer close(done)
		t := time.NewTicker(LockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				octx, cancel := r.opCtx(context.WithoutCancel(ctx))
				renewScript.Run(octx, r.rdb, []string{lkey}, lockValue(token), LockTTL.Milliseconds())
				cancel()
			}
		}
	}()
	b, store, err := call(ctx)
	close(stop)
	<-done
	octx, cancel := r.opCtx(context.WithoutCancel(ctx))
	defer cancel()
	if err == nil && store && ttl > 0 {
		if serr := r.rdb.Set(octx, vkey, EncodeMemo(b), ttl).Err(); serr != nil {
			releaseScript.Run(octx, r.rdb, []string{lkey}, lockValue(token))
			return b, false, r.fail(vkey, serr)
		}
	}
	releaseScript.Run(octx, r.rdb, []string{lkey}, lockValue(token))
	return b, false, err
}

// ---- per-principal limits (principal.Limiter) ----

// LimitKeys are the Redis keys of principal p's limiter: a sorted set of
// admitted calls (score: lease expiry, unix ms) and a hash holding the
// token bucket (t: tokens, ts: last refill, unix ms).
func LimitKeys(p string) (calls, bucket string) {
	pk := principalKey(p)
	return KeyPrefix + "limit:" + pk + ":calls", KeyPrefix + "limit:" + pk + ":bucket"
}

// acquireScript admits one call atomically, on Redis' clock (TIME), so
// replicas' clocks do not matter. ARGV: call id, max calls (0: no cap),
// rate per second (0: no rate limit), burst, lease ms. Expired leases are
// dropped first. Returns {0,0} admitted, {1,ms} over the cap (ms: until
// the earliest lease expires, between 1 s and one lease), {2,ms} over the
// rate. Junk in the bucket
// hash reads as a full bucket; a key of the wrong type is a WRONGTYPE error.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local maxc = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local lease = tonumber(ARGV[5])
if maxc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= maxc then
    local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    local wait = 1000
    if first[2] ~= nil then
      wait = math.ceil(tonumber(first[2]) - now)
    end
    if wait ~= wait or wait > lease then
      wait = lease
    end
    return {1, math.max(1000, wait)}
  end
end
if rate > 0 then
  local h = redis.call('HMGET', KEYS[2], 't', 'ts')
  local tokens = tonumber(h[1])
  local ts = tonumber(h[2])
  if tokens == nil or ts == nil or tokens ~= tokens or tokens < 0 or tokens > burst or ts > now then
    tokens = burst
    ts = now
  end
  tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
  if tokens < 1 then
    return {2, math.ceil((1 - tokens) * 1000 / rate)}
  end
  redis.call('HSET', KEYS[2], 't', tostring(tokens - 1), 'ts', tostring(now))
  redis.call('PEXPIRE', KEYS[2], math.ceil(burst * 1000 / rate) + 1000)
end
if maxc > 0 then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', KEYS[1], math.max(lease, math.ceil(tonumber(last[2]) - now)) + 1000)
end
return {0, 0}`)

// renewLeaseScript extends call ARGV[1]'s lease to ARGV[2] ms from now
// (Redis' clock) if it still counts: a lease that already expired (and
// may have been given to another call) is not brought back. Returns 1 if
// renewed.
var renewLeaseScript = redis.NewScript(`
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], math.max(lease, math.ceil(tonumber(last[2]) - now)) + 1000)
return 1`)

// Limiter is principal.Limiter counted in Redis, shared by every replica.
type Limiter struct {
	r        *Redis
	maxCalls int
	rate     float64
	burst    float64
	lease    time.Duration // LeaseTTL; shorter in tests
	// dead, once closed, stops every lease renewal without releasing
	// (tests: a replica killed mid-call).
	dead chan struct{}
}

var _ principal.Limiter = (*Limiter)(nil)

// Limiter returns the Redis principal.Limiter: at most maxCalls calls of
// one principal at once across replicas (≤ 0: no cap) and a token bucket
// of rate calls per second (≤ 0: no rate limit) holding up to
// max(1, rate) tokens (one second's worth). The caps come from
// mcp.principal_max_calls and mcp.principal_rate.
func (r *Redis) Limiter(maxCalls int, rate float64) *Limiter {
	if math.IsNaN(rate) || math.IsInf(rate, 0) {
		rate = 0
	}
	return &Limiter{r: r, maxCalls: maxCalls, rate: rate, burst: max(1, rate), lease: LeaseTTL, dead: make(chan struct{})}
}

// Acquire implements principal.Limiter. Redis down is state_unavailable
// (the call is refused, never admitted uncounted).
func (l *Limiter) Acquire(ctx context.Context, name string) (func(), error) {
	if l.maxCalls <= 0 && l.rate <= 0 {
		return func() {}, nil
	}
	calls, bucket := LimitKeys(name)
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	octx, cancel := l.r.opCtx(ctx)
	defer cancel()
	res, err := acquireScript.Run(octx, l.r.rdb, []string{calls, bucket}, id, max(l.maxCalls, 0),
		strconv.FormatFloat(max(l.rate, 0), 'f', -1, 64), strconv.FormatFloat(l.burst, 'f', -1, 64), l.lease.Milliseconds()).Slice()
	if err != nil {
		return nil, l.r.fail(calls, err)
	}
	code, wait, ok := limiterAnswer(res)
	if !ok {
		return nil, Corrupt(calls, "an unexpected limiter answer")
	}
	switch code {
	case 0:
		if l.maxCalls <= 0 {
			return func() {}, nil
		}
		return l.hold(context.WithoutCancel(ctx), calls, id), nil
	case 1:
		return nil, &principal.Refusal{Reason: string(reason.TooManyCalls), RetryAfter: time.Duration(wait) * time.Millisecond,
			Message: "Too many calls: this principal already has " + strconv.Itoa(l.maxCalls) +
				" tool calls running across the service (mcp.principal_max_calls); wait for one to finish."}
	default:
		return nil, &principal.Refusal{Reason: "rate_limited", RetryAfter: time.Duration(wait) * time.Millisecond,
			Message: "Rate limited: this principal may make " + strconv.FormatFloat(l.rate, 'f', -1, 64) +
				" tool calls per second across the service (mcp.principal_rate); retry after the Retry-After delay."}
	}
}

// hold renews admitted call id's lease every lease/3 until the returned
// release (idempotent) stops the renewal and removes the call. If the
// release cannot reach Redis, the lease expires.
func (l *Limiter) hold(ctx context.Context, calls, id string) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(l.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-l.dead:
				return
			case <-t.C:
				octx, cancel := l.r.opCtx(ctx)
				renewLeaseScript.Run(octx, l.r.rdb, []string{calls}, id, l.lease.Milliseconds())
				cancel()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			select {
			case <-l.dead:
				return // killed: the call is left to its lease
			default:
			}
			octx, cancel := l.r.opCtx(ctx)
			defer cancel()
			l.r.rdb.ZRem(octx, calls, id)
		})
	}
}

// limiterAnswer reads the script's {code, wait ms} reply.
func limiterAnswer(res []any) (code, wait int64, ok bool) {
	if len(res) != 2 {
		return 0, 0, false
	}
	c, ok1 := res[0].(int64)
	w, ok2 := res[1].(int64)
	if !ok1 || !ok2 || c < 0 || c > 2 || w < 0 {
		return 0, 0, false
	}
	return c, w, true
}
