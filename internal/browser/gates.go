package browser

import (
	"net/netip"

	"github.com/gatehouse-dev/gatehouse/internal/browser/navgate"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
)

// The browser's URL gates (spec §B8) live in package navgate; these names
// keep the Manager's API (and `gatehouse check --for browser`, a browser
// node's session guard) where callers look for it.
type (
	// Gates is navgate.Gates.
	Gates = navgate.Gates
	// EvalSettings is navgate.EvalSettings (spec §B8.3 / §B13).
	EvalSettings = navgate.EvalSettings
	// EvalVerdict is navgate.EvalVerdict (`gatehouse check --json --eval`).
	EvalVerdict = navgate.EvalVerdict
)

// NewGates is navgate.New: the gates of cfg, with its warnings.
func NewGates(cfg *config.Config, home string, r egress.Resolver, allow []netip.AddrPort) (*Gates, []string) {
	return navgate.New(cfg, home, r, allow)
}

// GatesFromPolicy is navgate.FromPolicy: the gates of a session policy a
// replica sent (a browser node), refusing the node's own services
// (hostService, egress.Options.HostService).
func GatesFromPolicy(p node.Policy, r egress.Resolver, allow []netip.AddrPort, hostService func(netip.AddrPort) bool) (*Gates, error) {
	return navgate.FromPolicy(p, r, allow, hostService)
}
