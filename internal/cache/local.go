package cache

import "github.com/gatehouse-dev/gatehouse/internal/urlsafe"

// isLocalDevHost reports whether host names the user's own development
// machine or LAN (spec §A9.2): pages of such hosts change under the user's
// hands and are never cached. It is a freshness heuristic on the name only,
// no DNS, and not a security boundary; the rule lives in urlsafe.IsLocalDevHost
// (one IP table for the whole project).
func isLocalDevHost(host string) bool { return urlsafe.IsLocalDevHost(host) }
