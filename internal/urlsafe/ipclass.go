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
	// ClassPrivate is an address IANA's special-purpose registries mark not
	// globally reachable (private, loopback, link-local, CGNAT,
	// documentation, benchmark, unspecified…; iana/README.md), or a reserved
	// or multicast one (spec §A6.2, §A6.4). Refused unless security.allow_private_urls, the trusted-host
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

//go:generate go run ./iana/ianagen -dir iana -out special_gen.go

// reachability is the Globally Reachable cell of an IANA special-purpose
// registry entry (RFC 6890 §2.2.2, RFC 8190 §2.1), footnote marks removed.
type reachability uint8

const (
	reachFalse reachability = iota // "False"
	reachTrue                      // "True"
	reachNA                        // "N/A": the registry does not say (Teredo, 6to4)
	reachBlank                     // empty: a terminated entry (192.88.99.0/24, 2001:10::/28)
)

// specialBlock is one entry of IANA's IPv4 or IPv6 Special-Purpose Address
// Registry. special_gen.go holds the table, generated from the copies in
// iana/ (see iana/README.md); it is plain data, so nothing runs at start-up.
type specialBlock struct {
	addr       [16]byte // network address; an IPv4 block uses addr[:4]
	bits       uint8
	is4        bool
	reach      reachability
	terminated bool // the registry gives a Termination Date
}

// global reports whether the registry vouches for the block: Globally
// Reachable is True and the allocation is not terminated. False, N/A and
// terminated entries are all refused: the SSRF gate allows only what the
// registry calls globally reachable (fail closed; iana/README.md).
func (b *specialBlock) global() bool { return b.reach == reachTrue && !b.terminated }

// contains reports whether the address x (16 bytes, an IPv4 one in x[:4])
// of family is4 is in b.
func (b *specialBlock) contains(x *[16]byte, is4 bool) bool {
	if is4 != b.is4 {
		return false
	}
	n := int(b.bits)
	i := 0
	for ; n >= 8; i, n = i+1, n-8 {
		if x[i] != b.addr[i] {
			return false
		}
	}
	m := ^byte(0xff >> n) // n < 8 leading bits of byte i
	return n == 0 || x[i]&m == b.addr[i]&m
}

// specialEntry returns the most specific registry entry holding a (zone-free;
// an IPv4-mapped address is IPv6 here), if any. Entries nest (192.0.0.9/32
// inside 192.0.0.0/24, TEREDO inside 2001::/23): the most specific one is what
// the registry says about a.
func specialEntry(a netip.Addr) (*specialBlock, bool) {
	var x [16]byte
	is4 := a.Is4()
	if is4 {
		v4 := a.As4()
		copy(x[:], v4[:])
	} else {
		x = a.As16()
	}
	var best *specialBlock
	for i := range specialPurpose {
		b := &specialPurpose[i]
		if (best == nil || b.bits > best.bits) && b.contains(&x, is4) {
			best = b
		}
	}
	return best, best != nil
}

// cgnat is RFC 6598 shared address space: refused (registry: not globally
// reachable) but not "local development" (spec §A9.2: CPython's is_private is
// false for it).
var cgnat = mp("100.64.0.0/10")

// beyondRow is one non-public range that is not (or not only) the
// special-purpose registries' verdict, with where it comes from.
type beyondRow struct {
	p        netip.Prefix
	localDev bool // counts as local development for the extract cache (spec §A9.2)
	source   string
}

// beyondRegistry are the non-public ranges the special-purpose registries do
// not give, or give as globally reachable while Gatehouse refuses them
// (spec §A6.4, CPython ipaddress; iana/README.md has the table). They are
// refused whatever the registry says about an address inside them.
var beyondRegistry = []beyondRow{
	{mp("224.0.0.0/4"), false, "RFC 5771 IPv4 multicast (IANA multicast registry, not special-purpose)"},
	{mp("ff00::/8"), false, "RFC 4291 IPv6 multicast"},
	{mp("fec0::/10"), false, "RFC 3879 deprecated site-local (stricter than CPython)"},
	{mp("2001::/23"), true, "CPython 3.11.7 is_private covers all of 2001::/23 (spec §A6.4); the registry's globally reachable entries inside it (2001:1::1-3, 2001:3::/32, 2001:4:112::/48, 2001:20::/28, 2001:30::/28) stay refused"},
	// CPython is_reserved (IPv6 address space "Reserved by IETF"). ::/8 holds
	// IPv4-compatible ::a.b.c.d and NAT64 64:ff9b::/96 (registry: globally
	// reachable; refused here, see iana/README.md and docs/gates.md).
	{mp("::/8"), true, "RFC 4291 reserved; CPython is_reserved"},
	{mp("100::/8"), true, "CPython is_reserved"},
	{mp("200::/7"), true, "CPython is_reserved"},
	{mp("400::/6"), true, "CPython is_reserved"},
	{mp("800::/5"), true, "CPython is_reserved"},
	{mp("1000::/4"), true, "CPython is_reserved"},
	{mp("4000::/3"), true, "CPython is_reserved"},
	{mp("6000::/3"), true, "CPython is_reserved"},
	{mp("8000::/3"), true, "CPython is_reserved"},
	{mp("a000::/3"), true, "CPython is_reserved"},
	{mp("c000::/3"), true, "CPython is_reserved"},
	{mp("e000::/4"), true, "CPython is_reserved"},
	{mp("f000::/5"), true, "CPython is_reserved"},
	{mp("f800::/6"), true, "CPython is_reserved"},
	{mp("fe00::/9"), true, "CPython is_reserved"},
}

func mp(s string) netip.Prefix { return netip.MustParsePrefix(s) }

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
// it carries (Unwrap4); then every address of judgedAddrs(a) is looked up in
// IANA's IPv4 and IPv6 special-purpose registries (special_gen.go: refused
// unless the most specific entry holding it is globally reachable) and in
// beyondRegistry (multicast, CPython's reserved IPv6 space, all of
// 2001::/23; iana/README.md has the table of exceptions): an
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
		if in, _ := internal(p); in {
			return ClassPrivate
		}
	}
	return ClassPublic
}

// judgedAddrs returns the addresses looked up in the registry table and
// beyondRegistry (see internal) when classifying a (zone removed): the embedded IPv4 alone for
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

// internal reports whether a (already unwrapped and zone-free, see
// judgedAddrs) is non-public: the most specific special-purpose registry entry
// holding it is not globally reachable (specialBlock.global), or a
// beyondRegistry row holds it. localDev tells whether it also counts as local
// development (spec §A9.2): every refused registry entry but shared address
// space, and the beyondRegistry rows so marked.
func internal(a netip.Addr) (isInternal, localDev bool) {
	for _, r := range beyondRegistry {
		if r.p.Contains(a) {
			isInternal = true
			localDev = localDev || r.localDev
		}
	}
	if b, ok := specialEntry(a); ok && !b.global() {
		isInternal = true
		localDev = localDev || !cgnat.Contains(a)
	}
	return isInternal, localDev
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
// name (no '.' and no ':'), or an IP literal ClassifyAddr refuses as
// private (registry entries not globally reachable, CPython's reserved IPv6
// space, 2001::/23), except CGNAT, multicast and site-local literals, which
// are not local (CPython's is_private is false for them). host may carry IPv6 brackets, a trailing dot and
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
			if in, local := internal(p); in && local {
				return true
			}
		}
		return false
	}
	return !strings.ContainsAny(h, ".:")
}
