package principal

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Defaults of the per-principal limits (config mcp.principal_max_calls and
// mcp.principal_rate). They are set so one agent never meets them: an MCP
// session runs at most 4 calls at once (gatehouse mcp --max-calls), and an
// agent's model turns make a few calls a second at most.
const (
	DefaultMaxCalls = 16   // tool calls of one principal running at once
	DefaultRate     = 10.0 // tool calls per second, sustained
)

// Limits are the per-principal caps of a Limiter.
type Limits struct {
	// MaxCalls caps the tool calls of one principal running at once (all
	// its sessions and sessionless calls together); ≤ 0 → DefaultMaxCalls.
	MaxCalls int
	// Rate is the sustained calls per second a principal may start (a token
	// bucket refilled at Rate tokens a second); ≤ 0 → DefaultRate.
	Rate float64
	// Burst is the bucket's size: calls a principal may start at once after
	// being idle; ≤ 0 → max(MaxCalls, ⌈Rate⌉).
	Burst int
}

func (l Limits) normalized() Limits {
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxCalls
	}
	if l.Rate <= 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) {
		l.Rate = DefaultRate
	}
	if l.Burst <= 0 {
		l.Burst = max(l.MaxCalls, int(math.Ceil(l.Rate)))
	}
	return l
}

// Local is the in-process Limiter (one replica; the embedded default): a
// concurrency count and a token bucket (golang.org/x/time/rate) per
// principal, kept in memory (one small entry per principal seen: the names
// of the --tokens file, a finite set; an entry is dropped when its last
// call ends with its bucket full). Safe for concurrent use.
type Local struct {
	lim Limits
	now func() time.Time // for tests

	mu   sync.Mutex
	byID map[string]*localEntry
}

type localEntry struct {
	running int
	bucket  *rate.Limiter
}

// NewLocal returns an in-process Limiter with limits l (zero fields take
// their defaults).
func NewLocal(l Limits) *Local {
	return &Local{lim: l.normalized(), now: time.Now, byID: map[string]*localEntry{}}
}

// Limits returns the limits in force, defaults filled in.
func (l *Local) Limits() Limits {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lim
}

// SetLimits changes the limits (a reloaded config.yaml); calls running keep
// their slots, and every principal's bucket takes the new rate and size.
func (l *Local) SetLimits(lim Limits) {
	lim = lim.normalized()
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lim = lim
	for _, e := range l.byID {
		e.bucket.SetLimitAt(now, rate.Limit(lim.Rate))
		e.bucket.SetBurstAt(now, lim.Burst)
	}
}

// Acquire implements Limiter. The concurrency cap is checked first (a call
// refused for it takes no token), then the bucket; a refusal is a *Refusal
// with reason "too_many_calls" (RetryAfter 1 s: calls end at unknown times)
// or "rate_limited" (RetryAfter the time until a token is free).
func (l *Local) Acquire(_ context.Context, name string) (func(), error) {
	if name == "" {
		name = Default
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byID[name]
	if e == nil {
		e = &localEntry{bucket: rate.NewLimiter(rate.Limit(l.lim.Rate), l.lim.Burst)}
		l.byID[name] = e
	}
	if e.running >= l.lim.MaxCalls {
		return nil, &Refusal{Reason: string(reason.TooManyCalls), RetryAfter: time.Second, Message: fmt.Sprintf(
			"This caller already has %d tool calls running (the per-caller cap, config mcp.principal_max_calls); wait for one to finish, then retry.", l.lim.MaxCalls)}
	}
	r := e.bucket.ReserveN(now, 1)
	if d := r.DelayFrom(now); !r.OK() || d > 0 {
		r.CancelAt(now)
		return nil, &Refusal{Reason: string(reason.RateLimited), RetryAfter: max(d, time.Millisecond), Message: fmt.Sprintf(
			"This caller started more than %g tool calls a second (burst %d; the per-caller rate, config mcp.principal_rate); retry in %s.",
			l.lim.Rate, l.lim.Burst, RetryAfterSeconds(d).String())}
	}
	e.running++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			e.running--
			if e.running == 0 && e.bucket.TokensAt(l.now()) >= float64(l.lim.Burst) && l.byID[name] == e {
				delete(l.byID, name)
			}
		})
	}, nil
}

// RetryAfterSeconds rounds d up to whole seconds, at least 1 s: the value of
// an HTTP Retry-After header (RFC 9110 §10.2.3 counts whole seconds).
func RetryAfterSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	return max(s, 1) * time.Second
}
