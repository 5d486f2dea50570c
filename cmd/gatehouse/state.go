package main

import (
	"context"
	"sync/atomic"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// stateGuard is the egress guard Redis connections go through (the
// configured classification; state.Open allows the Redis host:port as an
// origin).
func stateGuard(a *app) *egress.Guard {
	g, _ := web.NewGuard(a.cfg, nil, nil)
	return g
}

// openState opens the shared state of this process once (GATEHOUSE_REDIS_URL,
// else config state.redis_url; internal/state): nil with no URL (the
// embedded default). A malformed URL is a state_bad_url refusal, which
// refuses start-up: Gatehouse never runs on per-replica state when shared
// state was asked for. The client dials lazily, so an unreachable Redis
// does not stop start-up (calls then get state_unavailable). Config reloads
// keep the first target: changing the Redis URL needs a restart.
func (a *app) openState() (*state.Redis, error) {
	if a.state != nil {
		return a.state, nil
	}
	a.loadDotEnv()
	t, ok, err := state.FromConfig(a.cfg, a.dotenv)
	if err != nil || !ok {
		return nil, err
	}
	a.state = state.Open(state.Options{Target: t, Guard: stateGuard(a)})
	a.logger.Info("shared state", "backend", state.KindRedis, "redis", t.String())
	return a.state, nil
}

// principalLimiter is the per-principal admission of `gatehouse mcp --http`
// (config mcp.principal_max_calls, mcp.principal_rate): counted in Redis
// when shared state is configured (every replica sees one count), else in
// this process. A reloaded config.yaml swaps in its new limits.
type principalLimiter struct {
	cur   atomic.Pointer[principal.Limiter]
	local *principal.Local // the in-process limiter, when there is no shared state
}

func newPrincipalLimiter(a *app, l principal.Limits) *principalLimiter {
	p := &principalLimiter{}
	if a.state == nil {
		p.local = principal.NewLocal(l)
	}
	p.set(a, l)
	return p
}

// set applies limits l to the calls admitted from now on.
func (p *principalLimiter) set(a *app, l principal.Limits) {
	var lim principal.Limiter
	if p.local != nil {
		p.local.SetLimits(l)
		lim = p.local
	} else {
		lim = a.state.Limiter(l.MaxCalls, l.Rate)
	}
	p.cur.Store(&lim)
}

// Acquire implements principal.Limiter.
func (p *principalLimiter) Acquire(ctx context.Context, name string) (func(), error) {
	return (*p.cur.Load()).Acquire(ctx, name)
}
