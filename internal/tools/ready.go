package tools

import "github.com/gatehouse-dev/gatehouse/internal/reason"

// Refusing returns the refusal every call currently gets (RefuseAll: a
// broken config.yaml, config_invalid), or nil when calls run. A server's
// readiness check reports it.
func (r *Registry) Refusing() *reason.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refusal
}
