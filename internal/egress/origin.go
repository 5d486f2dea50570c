package egress

import (
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// origin is one host:port a user configured as a self-hosted service endpoint.
type origin struct {
	host string
	port uint16
}

func originHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(h, "]"), "["), ".")
	return strings.ToLower(h)
}

// WithOrigin returns a copy of g that also lets connections to exactly host:port
// through when its address is private (loopback, RFC 1918, CGNAT, …): the
// configured origin of a self-hosted service such as SEARXNG_URL or
// FIRECRAWL_API_URL, which the user chose to point at their own network. Every
// other host — including redirects away from the origin and other ports on the
// same host — is judged as usual, and cloud metadata addresses stay refused
// (the allowance lifts ssrf_private only). g itself is not changed.
func (g *Guard) WithOrigin(host string, port uint16) *Guard {
	c := *g
	c.origins = append(slices.Clone(g.origins), origin{host: originHost(host), port: port})
	return &c
}

// originExcused reports whether rerr for host:port is lifted by WithOrigin.
func (g *Guard) originExcused(rerr *reason.Error, host string, port uint16) bool {
	if rerr.Code != reason.SSRFPrivate || len(g.origins) == 0 {
		return false
	}
	h := originHost(host)
	for _, o := range g.origins {
		if o.host == h && o.port == port {
			return true
		}
	}
	return false
}
