package main

import (
	"github.com/gatehouse-dev/gatehouse/internal/egress"
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
