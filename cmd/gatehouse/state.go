package main

import (
	"github.com/gatehouse-dev/gatehouse/internal/state"
)

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
	a.state = state.Open(state.Options{Target: t})
	a.logger.Info("shared state", "backend", state.KindRedis, "redis", t.String())
	return a.state, nil
}
