package urlsafe

import (
	"net/netip"
	"strings"
)

// Class is the SSRF verdict class of one IP address, ordered by severity:
// a larger Class is never less restrictive than a smaller one.
type Class uint8

const (
	// ClassPublic is a globally routable address: allowed.
	ClassPublic Class = iota
	// ClassPrivate is a private, loopback, link-local, CGNAT, reserved,
	// documentation, benchmark, multicast or unspecified address (spec §A6.2,
	// §A6.4). Refused unless security.allow_private_urls, the trusted-host
	// rule or a declared security.fake_ip_ranges entry excuses it.
	ClassPrivate
	// ClassMetadata is a cloud metadata endpoint (spec §A6.1): refused by
	// every setting.
	ClassMetadata
)

// String returns "public", "private" or "metadata".
func (c Class) String() string {
	switch c {
	case ClassPublic:
		return "public"
	case ClassPrivate:
		return "private"
	case ClassMetadata:
		return "metadata"
	}
	return "unknown"
}

// rangeKind tells why a range is non-public. Every kind makes an address
// ClassPrivate; IsLocalDevHost uses the kinds CPython's is_private,
// is_loopback, is_link_local, is_reserved and is_unspecified report (spec §A9.2),
// which leaves out CGNAT and multicast.
type rangeKind uint8

const (
	kindPrivate     rangeKind = iota // CPython ipaddress is_private
	kindLoopback                     // is_loopback
	kindLinkLocal                    // is_link_local
	kindReserved                     // is_reserved
	kindUnspecified                  // is_unspecified
	kindMulticast                    // is_multicast (not "local dev")
	kindCGNAT                        // RFC 6598 shared space (not "local dev")
	kindSiteLocal                    // deprecated IPv6 site-local (not "local dev")
)

// localDev reports whether the kind counts as "local development" for the
// extract cache (spec §A9.2).
func (k rangeKind) localDev() bool { return k <= kindUnspecified }

type ipRange struct {
	p      netip.Prefix
	kind   rangeKind
	source string
}

func mp(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// internalRanges is the private/internal table (spec §A6.4, CPython 3.11.7
// ipaddress plus the explicit CGNAT rule of §A6.1). Where newer CPython
// releases widened a range, the wider one is used (union of both tables).
// IPv4-mapped and IPv4-translated addresses never reach this table as IPv6:
// ClassifyAddr judges them by their embedded IPv4 only (spec §A6.2). Every
// other IPv6 address carrying an IPv4 (Teredo, IPv4-compatible, NAT64, 6to4)
// is looked up both as itself and as that IPv4 (see judgedAddrs).
var internalRanges = []ipRange{
	// IPv4
	{mp("0.0.0.0/32"), kindUnspecified, "RFC 1122 §3.2.1.3 this host"},
	{mp("0.0.0.0/8"), kindPrivate, "RFC 791 this network; CPython is_private"},
	{mp("10.0.0.0/8"), kindPrivate, "RFC 1918"},
	{mp("100.64.0.0/10"), kindCGNAT, "RFC 6598 CGNAT; spec §A6.1 explicit block"},
	{mp("127.0.0.0/8"), kindLoopback, "RFC 1122 loopback"},
	{mp("169.254.0.0/16"), kindLinkLocal, "RFC 3927 link-local (also metadata floor, spec §A6.1)"},
	{mp("172.16.0.0/12"), kindPrivate, "RFC 1918"},
	{mp("192.0.0.0/29"), kindPrivate, "RFC 7335 IPv4 service continuity; CPython 3.11.7"},
	{mp("192.0.0.170/31"), kindPrivate, "RFC 7050 NAT64 discovery; CPython 3.11.7"},
	{mp("192.0.0.0/24"), kindPrivate, "RFC 6890 IETF protocol assignments; newer CPython (minus .9, .10, see publicCarveOuts)"},
	{mp("192.0.2.0/24"), kindPrivate, "RFC 5737 TEST-NET-1"},
	{mp("192.168.0.0/16"), kindPrivate, "RFC 1918"},
	{mp("198.18.0.0/15"), kindPrivate, "RFC 2544 benchmarking (fake-IP DNS space, spec §A6.4)"},
	{mp("198.51.100.0/24"), kindPrivate, "RFC 5737 TEST-NET-2"},
	{mp("203.0.113.0/24"), kindPrivate, "RFC 5737 TEST-NET-3"},
	{mp("224.0.0.0/4"), kindMulticast, "RFC 5771 multicast"},
	{mp("255.255.255.255/32"), kindPrivate, "RFC 919 limited broadcast"},
	{mp("240.0.0.0/4"), kindReserved, "RFC 1112 class E reserved"},
	// IPv6
	{mp("::/128"), kindUnspecified, "RFC 4291 unspecified"},
	{mp("::1/128"), kindLoopback, "RFC 4291 loopback"},
	{mp("100::/64"), kindPrivate, "RFC 6666 discard-only"},
	{mp("2001::/23"), kindPrivate, "RFC 2928 IETF protocol assignments (holds Teredo 2001::/32); CPython 3.11.7"},
	{mp("2002::/16"), kindPrivate, "RFC 3056 6to4; newer CPython is_private"},
	{mp("64:ff9b:1::/48"), kindPrivate, "RFC 8215 local-use NAT64; newer CPython is_private"},
	{mp("2001:db8::/32"), kindPrivate, "RFC 3849 documentation"},
	{mp("fc00::/7"), kindPrivate, "RFC 4193 unique local"},
	{mp("fe80::/10"), kindLinkLocal, "RFC 4291 link-local"},
	{mp("fec0::/10"), kindSiteLocal, "RFC 3879 deprecated site-local (stricter than CPython)"},
	{mp("ff00::/8"), kindMulticast, "RFC 4291 multicast"},
	{mp("::/8"), kindReserved, "RFC 4291 reserved (holds IPv4-compatible ::a.b.c.d and NAT64 64:ff9b::/96); CPython is_reserved"},
	{mp("100::/8"), kindReserved, "CPython is_reserved"},
	{mp("200::/7"), kindReserved, "CPython is_reserved"},
	{mp("400::/6"), kindReserved, "CPython is_reserved"},
	{mp("800::/5"), kindReserved, "CPython is_reserved"},
	{mp("1000::/4"), kindReserved, "CPython is_reserved"},
	{mp("4000::/3"), kindReserved, "CPython is_reserved"},
	{mp("6000::/3"), kindReserved, "CPython is_reserved"},
	{mp("8000::/3"), kindReserved, "CPython is_reserved"},
	{mp("a000::/3"), kindReserved, "CPython is_reserved"},
	{mp("c000::/3"), kindReserved, "CPython is_reserved"},
	{mp("e000::/4"), kindReserved, "CPython is_reserved"},
	{mp("f000::/5"), kindReserved, "CPython is_reserved"},
	{mp("f800::/6"), kindReserved, "CPython is_reserved"},
	{mp("fe00::/9"), kindReserved, "CPython is_reserved"},
}

// publicCarveOuts are globally reachable anycast addresses inside a range of
// internalRanges (newer CPython; IANA special-purpose registry).
var publicCarveOuts = []netip.Addr{
	netip.MustParseAddr("192.0.0.9"),  // RFC 7723 PCP anycast
	netip.MustParseAddr("192.0.0.10"), // RFC 8155 TURN anycast
}

// metadataAddrs and metadataNets are the never-overridable floor (spec §A6.1,
// plus Azure's wire server 168.63.129.16 named in the issue).
var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS/GCP/Azure/DO/Oracle IMDS
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task credentials
		netip.MustParseAddr("169.254.169.253"), // Azure / AWS DNS
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("168.63.129.16"),   // Azure wire server / platform
		netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6 IMDS
	}
	metadataNets = []netip.Prefix{
		mp("169.254.0.0/16"), // link-local: every cloud's metadata lives here (spec §A6.1)
	}
)

// Embedded-IPv4 wrapper prefixes (see Unwrap4).
var (
	nat64WKP   = mp("64:ff9b::/96")   // RFC 6052 well-known prefix
	nat64Local = mp("64:ff9b:1::/48") // RFC 8215 local-use translation prefix
	sixToFour  = mp("2002::/16")      // RFC 3056 6to4
	teredo     = mp("2001::/32")      // RFC 4380 Teredo
)

// Unwrap4 returns the IPv4 address embedded in a, or a itself (zone removed)
// when a carries none. Recognised embeddings:
//
//   - IPv4-mapped ::ffff:a.b.c.d (RFC 4291 §2.5.5.2);
//   - IPv4-translated ::ffff:0:a.b.c.d (RFC 2765 §2.1, spec §A6.1);
//   - IPv4-compatible ::a.b.c.d (RFC 4291 §2.5.5.1, deprecated), only when the
//     first octet is non-zero, so :: and ::1 stay IPv6 unspecified/loopback;
//   - NAT64 64:ff9b::/96 (RFC 6052) and the local-use 64:ff9b:1::/48
//     (RFC 8215), IPv4 in the last 32 bits;
//   - 6to4 2002:AABB:CCDD::/48 (RFC 3056), IPv4 in bits 16–47;
//   - Teredo 2001:0::/32 (RFC 4380), the client IPv4 is the last 32 bits XOR
//     0xffffffff.
//
// An IPv4 input is returned unchanged; the zero Addr is returned unchanged.
func Unwrap4(a netip.Addr) netip.Addr {
	if !a.Is6() {
		return a
	}
	a = a.WithZone("")
	b := a.As16()
	last := func() netip.Addr { return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}) }
	zero := func(from, to int) bool {
		for _, x := range b[from:to] {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case a.Is4In6(): // ::ffff:a.b.c.d
		return a.Unmap()
	case zero(0, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0: // ::ffff:0:a.b.c.d
		return last()
	case zero(0, 12) && b[12] != 0: // ::a.b.c.d
		return last()
	case nat64WKP.Contains(a), nat64Local.Contains(a):
		return last()
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	case teredo.Contains(a):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	}
	return a
}

// ClassifyAddr returns the SSRF class of a (spec §A6.2). The zone is ignored.
// The metadata floor (spec §A6.1: 169.254.0.0/16, 100.100.100.200,
// 168.63.129.16, fd00:ec2::254) wins over everything, for a and for the IPv4
// it carries (Unwrap4); then the private/internal table (spec §A6.4 ranges of
// CPython's ipaddress, CGNAT 100.64.0.0/10, multicast, reserved,
// unspecified) is looked up for every address of judgedAddrs(a): an
// IPv4-mapped or IPv4-translated address is judged as its IPv4 (spec §A6.2);
// a Teredo, IPv4-compatible, NAT64 or 6to4 address is ClassPrivate when
// either its IPv6 prefix (2001::/23 and 2002::/16 private, ::/8 reserved in
// CPython) or the IPv4 it carries is non-public, so such literals are
// refused even when the embedded IPv4 is public. The zero (invalid) Addr is
// ClassPrivate: it fails closed.
func ClassifyAddr(a netip.Addr) Class {
	if !a.IsValid() {
		return ClassPrivate
	}
	a = a.WithZone("")
	if isMetadataAddr(Unwrap4(a)) || isMetadataAddr(a) {
		return ClassMetadata
	}
	for _, p := range judgedAddrs(a) {
		if _, internal := internalKind(p); internal {
			return ClassPrivate
		}
	}
	return ClassPublic
}

// judgedAddrs returns the addresses the private/internal table is looked up
// for when classifying a (zone removed): the embedded IPv4 alone for
// IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d (spec
// §A6.2 classifies those by the IPv4 for every check); a itself and its
// embedded IPv4 for the other embeddings of Unwrap4 (spec §A6.4: CPython
// judges the IPv6 address by its own prefix); a alone otherwise.
func judgedAddrs(a netip.Addr) []netip.Addr {
	a = a.WithZone("")
	u := Unwrap4(a)
	switch {
	case u == a:
		return []netip.Addr{a}
	case isMappedOrTranslated(a):
		return []netip.Addr{u}
	}
	return []netip.Addr{a, u}
}

// isMappedOrTranslated reports whether a is IPv4-mapped ::ffff:a.b.c.d
// (RFC 4291 §2.5.5.2) or IPv4-translated ::ffff:0:a.b.c.d (RFC 2765 §2.1).
func isMappedOrTranslated(a netip.Addr) bool {
	if a.Is4In6() {
		return true
	}
	if !a.Is6() {
		return false
	}
	b := a.As16()
	for _, x := range b[:8] {
		if x != 0 {
			return false
		}
	}
	return b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0
}

func isMetadataAddr(a netip.Addr) bool {
	for _, m := range metadataAddrs {
		if a == m {
			return true
		}
	}
	for _, n := range metadataNets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// internalKind returns the kind of the most specific matching local-dev row,
// or any other matching row, and whether a is in the internal table at all.
// a must already be unwrapped and zone-free.
func internalKind(a netip.Addr) (rangeKind, bool) {
	for _, c := range publicCarveOuts {
		if a == c {
			return 0, false
		}
	}
	found := false
	var kind rangeKind
	for _, r := range internalRanges {
		if r.p.Contains(a) {
			if r.kind.localDev() {
				return r.kind, true
			}
			found, kind = true, r.kind
		}
	}
	return kind, found
}

// metadataHosts are the always-blocked hostnames (spec §A6.1).
var metadataHosts = []string{"metadata.google.internal", "metadata.goog"}

// IsMetadataHost reports whether host is a cloud metadata hostname
// (metadata.google.internal, metadata.goog; spec §A6.1). The comparison is
// ASCII case-insensitive and ignores trailing dots. It does not resolve and
// does not look at IP literals (ClassifyAddr does).
func IsMetadataHost(host string) bool {
	h := strings.TrimRight(host, ".")
	for _, m := range metadataHosts {
		if strings.EqualFold(h, m) {
			return true
		}
	}
	return false
}

// IsLocalDevHost reports whether host looks like a local development target
// by name alone, without DNS (spec §A9.2, used to keep such pages out of the
// extract cache): empty, "localhost", "*.localhost", "*.local", a single-label
// name (no '.' and no ':'), or an IP literal that is private, loopback,
// link-local, reserved or unspecified in CPython's terms. CGNAT and multicast
// literals are not local. host may carry IPv6 brackets, a trailing dot and
// upper case; it must not carry a port.
func IsLocalDevHost(host string) bool {
	h := strings.ToLower(strings.TrimRight(strings.TrimSpace(host), "."))
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		for _, p := range judgedAddrs(a) {
			if kind, internal := internalKind(p); internal && kind.localDev() {
				return true
			}
		}
		return false
	}
	return !strings.ContainsAny(h, ".:")
}
