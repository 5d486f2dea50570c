package state

import "github.com/redis/go-redis/v9"

// Client returns r's go-redis client (every connection dialed through
// egress, as Open set it up) for state other packages keep in the same
// Redis under their own keys: the browser node registry
// (internal/browser/node, issue 19). Callers validate what they read like
// input, as this package does.
func (r *Redis) Client() redis.UniversalClient { return r.rdb }
