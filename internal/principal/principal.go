// Package principal names the caller of a tool call and carries it through a
// context.Context, so that everything a call can reach across calls (stored
// pages, search memo entries, browser sessions) is scoped to it (issue 18,
// "Principals").
//
// A principal is the NAME field of a line in the --tokens file (or Default for
// the one-principal forms: stdio, --token, GATEHOUSE_MCP_TOKEN, no token on
// loopback). Names are matched exactly; they are never used as metric label
// values and are written to audit lines only.
package principal

import (
	"context"
	"time"
)

// Default is the principal of every call that did not authenticate as a named
// principal: stdio, the CLI, the embedded package, and the one-token HTTP form.
const Default = "default"

type ctxKey struct{}

// With returns ctx carrying principal name. An empty name means Default.
func With(ctx context.Context, name string) context.Context {
	if name == "" {
		name = Default
	}
	return context.WithValue(ctx, ctxKey{}, name)
}

// From returns the principal carried by ctx, or Default when none was set.
func From(ctx context.Context) string {
	if v, ok := ctx.Value(ctxKey{}).(string); ok && v != "" {
		return v
	}
	return Default
}

// Limiter admits or refuses one tool call of a principal: a concurrency cap
// (config mcp.principal_max_calls) and a token-bucket rate limit (config
// mcp.principal_rate, calls per second). Implementations: in-process (one
// replica) and Redis (shared by replicas, GATEHOUSE_REDIS_URL).
type Limiter interface {
	// Acquire admits one call of principal name. On success the caller must
	// call release exactly once when the call ends. On refusal it returns a
	// *Refusal (reason too_many_calls or rate_limited) and a nil release; any
	// other error (e.g. the shared store unreachable: state_unavailable) is
	// returned as is.
	Acquire(ctx context.Context, name string) (release func(), err error)
}

// Refusal is a Limiter's answer when a principal is over its cap or rate.
type Refusal struct {
	Reason     string        // "too_many_calls" or "rate_limited" (internal/reason)
	RetryAfter time.Duration // when a retry may succeed; sent as Retry-After (seconds, rounded up)
	Message    string        // human text naming the limit and the config key that sets it
}

func (r *Refusal) Error() string { return r.Message }
