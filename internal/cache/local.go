package cache

import (
	"net/netip"
	"strings"
)

// isLocalDevHost reports whether host (lower-case, brackets removed) names
// the user's own development machine or LAN (spec §A9.2): pages of such
// hosts change under the user's hands and are never cached. It is a
// freshness heuristic on the name only, no DNS, and not a security boundary
// (urlsafe/egress block these hosts by default anyway):
//
//   - empty, "localhost", "*.localhost", "*.local";
//   - a single label (no "." and no ":"), e.g. "devbox";
//   - an IP literal that CPython's ipaddress calls private, loopback,
//     link-local, reserved or unspecified (tables of spec §A6.4, CPython
//     3.11.7). CGNAT 100.64.0.0/10 is none of these, so it is not local
//     here. IPv4-mapped IPv6 literals are inside ::ffff:0:0/96, which
//     CPython counts as private, so they are local.
//
// Trailing dots are ignored ("localhost." is local), a small hardening over
// the described system.
func isLocalDevHost(host string) bool {
	host = strings.TrimRight(strings.Trim(host, "[]"), ".")
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") {
		return true
	}
	if !strings.ContainsAny(host, ".:") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false // a DNS name
	}
	return isLocalIP(addr)
}

// isLocalIP is CPython's is_private || is_loopback || is_link_local ||
// is_reserved || is_unspecified for addr (zone ignored, IPv4-mapped forms
// classified as IPv6, as CPython does).
func isLocalIP(addr netip.Addr) bool {
	addr = addr.WithZone("")
	table := localV6
	if addr.Is4() {
		table = localV4
	}
	for _, p := range table {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// localV4 is the union of CPython 3.11.7's IPv4 is_private table with the
// loopback, link-local, reserved and unspecified ranges (spec §A6.4).
var localV4 = prefixes(
	"0.0.0.0/8",          // "this network" (private; includes unspecified 0.0.0.0)
	"10.0.0.0/8",         // RFC 1918
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local
	"172.16.0.0/12",      // RFC 1918
	"192.0.0.0/29",       // IETF protocol assignments (3.11.7 table)
	"192.0.0.170/31",     // NAT64 discovery
	"192.0.2.0/24",       // TEST-NET-1
	"192.168.0.0/16",     // RFC 1918
	"198.18.0.0/15",      // RFC 2544 benchmarking (fake-IP DNS lands here)
	"198.51.100.0/24",    // TEST-NET-2
	"203.0.113.0/24",     // TEST-NET-3
	"240.0.0.0/4",        // reserved
	"255.255.255.255/32", // limited broadcast
)

// localV6 is the union of CPython 3.11.7's IPv6 is_private table with the
// loopback, link-local, reserved and unspecified ranges (spec §A6.4).
var localV6 = prefixes(
	"::1/128",       // loopback
	"::/128",        // unspecified
	"::ffff:0:0/96", // IPv4-mapped
	"100::/64",      // discard-only
	"2001::/23",     // IETF protocol assignments
	"2001:2::/48",   // benchmarking
	"2001:db8::/32", // documentation
	"2001:10::/28",  // ORCHID
	"fc00::/7",      // unique local
	"fe80::/10",     // link-local
	// is_reserved:
	"::/8", "100::/8", "200::/7", "400::/6", "800::/5", "1000::/4", "4000::/3", "6000::/3",
	"8000::/3", "a000::/3", "c000::/3", "e000::/4", "f000::/5", "f800::/6", "fe00::/9",
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
