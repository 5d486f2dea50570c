package node

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Allow is browser.node_allow: the addresses a replica may dial when a
// node record names them. The zero value (and an empty list) allows
// loopback only (127.0.0.0/8, ::1). Safe for concurrent use.
type Allow struct {
	prefixes []netip.Prefix
	hosts    map[string]bool
}

// loopback is what an empty node_allow allows.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// ParseAllow builds an Allow from config entries: CIDRs, IP addresses (one
// address) and DNS host names (any address the name resolves to, metadata
// excepted). Entries that are none of these are returned in bad and
// ignored (config.Load drops them with a warning already).
func ParseAllow(entries []string) (a Allow, bad []string) {
	a.hosts = map[string]bool{}
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(e), "."))
		if p, err := netip.ParsePrefix(e); err == nil {
			a.prefixes = append(a.prefixes, netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapBits(p)).Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil && ip.Zone() == "" {
			ip = ip.Unmap()
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		if validHost(e) {
			a.hosts[e] = true
			continue
		}
		bad = append(bad, e)
	}
	return a, bad
}

func unmapBits(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		return 96
	}
	return 0
}

// allowsIP reports whether ip (of host) may be dialed: never a metadata
// address; else ip is in a listed prefix, or host is a listed name; with
// nothing listed, ip is loopback.
func (a Allow) allowsIP(host string, ip netip.Addr) bool {
	ip = ip.Unmap()
	if urlsafe.ClassifyAddr(ip) == urlsafe.ClassMetadata {
		return false
	}
	ps := a.prefixes
	if len(ps) == 0 && len(a.hosts) == 0 {
		ps = loopback
	}
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return a.hosts[host]
}

// Resolve judges addr (a node record's host:port) and returns the
// addresses to dial: an IP literal must itself be allowed; a name is
// resolved with r (nil: the system resolver) and every answer must be
// allowed (fail closed, as egress does). A refusal is a *reason.Error with
// code browser_node_refused whose message names no address (its cause
// does, for logs).
func (a Allow) Resolve(ctx context.Context, r egress.Resolver, addr string) ([]netip.AddrPort, error) {
	host, port, err := SplitAddr(addr)
	if err != nil {
		return nil, refused(addr, err.Error())
	}
	var ips []netip.Addr
	if ip, perr := netip.ParseAddr(host); perr == nil {
		ips = []netip.Addr{ip}
	} else {
		if urlsafe.IsMetadataHost(host) {
			return nil, refused(host, "it is a metadata host")
		}
		if r == nil {
			r = net.DefaultResolver
		}
		ips, err = r.LookupNetIP(ctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return nil, reason.Wrap(reason.BrowserNodeRefused, "", "A browser node's address could not be resolved, so it was not dialed; the operator checks the node's --advertise address.", fmt.Errorf("node host %s: %w", host, err))
		}
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		if !a.allowsIP(host, ip) {
			return nil, refused(host, "browser.node_allow does not allow its address")
		}
		out = append(out, netip.AddrPortFrom(ip.Unmap(), port))
	}
	return out, nil
}

// refused is the browser_node_refused refusal. The agent-facing message
// names no address (a node's address is the operator's, and the replica's
// log names it with the node id); the cause carries host and why.
func refused(host, why string) *reason.Error {
	return reason.Wrap(reason.BrowserNodeRefused, "",
		"A browser node's record in Redis names an address this replica may not dial, so it was not dialed. A node record is data, not trust: the operator adds the node's address to browser.node_allow (CIDRs or host names; empty allows loopback only; never a metadata address).",
		fmt.Errorf("node address %s: %s", host, why))
}

// Guard returns the egress guard a replica dials the node at ap with: the
// production guard (private addresses refused, metadata never) with exactly
// ap as its exception (egress.Options.AllowAddrPorts), so the CDP
// WebSocket and the control API are dialed through egress like every other
// connection (DESIGN.md §1) and reach this one address only.
func Guard(ap netip.AddrPort, r egress.Resolver) *egress.Guard {
	return egress.New(egress.Options{Resolver: r, AllowAddrPorts: []netip.AddrPort{ap}})
}
