package tools

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Refusing returns the refusal every call currently gets (RefuseAll: a
// broken config.yaml, config_invalid), or nil when calls run. A server's
// readiness check reports it.
func (r *Registry) Refusing() *reason.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refusal
}

// OnReady adds a readiness condition of the tools' own resources (the
// browser's placement on browser nodes: browser.Manager.NodeReadiness):
// fn returns nil when the tools can serve, else why not. Replace carries
// the conditions with the tools they belong to.
func (r *Registry) OnReady(fn func(ctx context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.readies = append(r.readies, fn)
}

// Ready runs the OnReady conditions of the current tools in order and
// returns the first error (nil when every one passes). A server's
// readiness check (/readyz) reports it.
func (r *Registry) Ready(ctx context.Context) error {
	r.mu.Lock()
	fns := r.readies
	r.mu.Unlock()
	for _, fn := range fns {
		if err := fn(ctx); err != nil {
			return err
		}
	}
	return nil
}
