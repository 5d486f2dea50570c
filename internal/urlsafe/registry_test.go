package urlsafe_test

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe/iana"
)

// refusedDespiteRegistry are the registry entries marked globally reachable
// that Gatehouse refuses all the same, and why (iana/README.md has the
// table). Every other globally reachable entry is allowed.
var refusedDespiteRegistry = map[string]string{
	"64:ff9b::/96":    "NAT64 well-known prefix: inside ::/8, CPython is_reserved (docs/gates.md: DNS64 answers are refused)",
	"2001:1::1/128":   "inside 2001::/23, CPython 3.11.7 is_private",
	"2001:1::2/128":   "inside 2001::/23, CPython 3.11.7 is_private",
	"2001:1::3/128":   "inside 2001::/23, CPython 3.11.7 is_private",
	"2001:3::/32":     "inside 2001::/23, CPython 3.11.7 is_private",
	"2001:4:112::/48": "inside 2001::/23, CPython 3.11.7 is_private",
	"2001:20::/28":    "inside 2001::/23, CPython 3.11.7 is_private",
	"2001:30::/28":    "inside 2001::/23, CPython 3.11.7 is_private",
}

// TestSpecialPurposeRegistry runs the whole of IANA's IPv4 and IPv6
// special-purpose registries (the copies in iana/) through the static SSRF
// gate: for the first, middle and last address of every block, in every
// literal form of the URL host (IPv4: dotted, integer and IPv4-mapped IPv6;
// IPv6: compressed and fully written), the verdict is the one of the most
// specific entry holding the address: refused (ssrf_private; ssrf_metadata in
// link-local space) unless it is globally reachable and not terminated, with
// the exceptions of refusedDespiteRegistry and of the IPv4-mapped block,
// judged by the IPv4 it carries. Before the registry copies, RFC
// 9637's 3fff::/20, 192.88.99.2/32 (6a44) and the terminated
// 192.88.99.0/24 were allowed.
func TestSpecialPurposeRegistry(t *testing.T) {
	v4, v6, err := iana.Registries()
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Concat(v4, v6)
	mostSpecific := func(a netip.Addr) iana.Entry {
		var best iana.Entry
		for _, e := range all {
			if e.Prefix.Contains(a) && (!best.Prefix.IsValid() || e.Prefix.Bits() > best.Prefix.Bits()) {
				best = e
			}
		}
		return best
	}
	for block := range refusedDespiteRegistry {
		i := slices.IndexFunc(all, func(e iana.Entry) bool { return e.Block == block })
		if i < 0 || all[i].GloballyReachable != "True" || all[i].IsTerminated() {
			t.Errorf("refusedDespiteRegistry names %s, which the registry does not call globally reachable", block)
		}
	}
	link := netip.MustParsePrefix("169.254.0.0/16")
	refused, allowed := 0, 0
	for _, e := range all {
		for _, a := range firstMiddleLast(e.Prefix) {
			// ::ffff:0:0/96 (IPv4-mapped, not globally reachable) is the one
			// entry judged otherwise: by the IPv4 address it carries, as
			// every IPv4 address is in its mapped form too (spec §A6.2).
			m := mostSpecific(a.Unmap())
			want := reason.SSRFPrivate
			switch {
			case !m.Prefix.IsValid(): // an ordinary address (::ffff:128.0.0.0)
				want = ""
			case m.GloballyReachable == "True" && !m.IsTerminated() && refusedDespiteRegistry[m.Block] == "":
				want = ""
			case link.Contains(a.Unmap()):
				want = reason.SSRFMetadata
			}
			for _, raw := range literalURLs(a) {
				u, err := urlsafe.Parse(raw)
				if err != nil {
					t.Errorf("%s (%s): Parse(%s): %v", e.Block, e.Name, raw, err)
					continue
				}
				var got reason.Code
				if rerr := (urlsafe.Options{}).CheckStatic(u); rerr != nil {
					got = rerr.Code
				}
				if got != want {
					t.Errorf("%s (%s, Globally Reachable %q): %s → %q, want %q (entry %s)", e.Block, e.Name, e.GloballyReachable, raw, got, want, m.Block)
				}
				if want == "" {
					allowed++
				} else {
					refused++
				}
			}
		}
	}
	t.Logf("%d registry blocks, %d URLs refused, %d allowed", len(all), refused, allowed)
}

// TestDocumentationAndSRv6Refused: the newest entries through the whole
// static gate, as a user writes them.
func TestDocumentationAndSRv6Refused(t *testing.T) {
	for _, raw := range []string{
		"http://[3fff::1]/",                    // RFC 9637 documentation (2024)
		"https://[3fff:fff:ffff::abcd]:8443/x", // same /20, its upper end
		"http://[5f00::1]/",                    // RFC 9602 SRv6 SIDs (2024)
		"http://[100:0:0:1::1]/",               // RFC 9780 dummy prefix (2025)
		"http://192.88.99.2/",                  // RFC 6751 6a44 relay
		"http://[::ffff:192.88.99.1]/",         // terminated 6to4 relay anycast, IPv4-mapped
	} {
		u, err := urlsafe.Parse(raw)
		if err != nil {
			t.Fatalf("Parse(%s): %v", raw, err)
		}
		if rerr := (urlsafe.Options{}).CheckStatic(u); rerr == nil || rerr.Code != reason.SSRFPrivate {
			t.Errorf("%s: %v, want ssrf_private", raw, rerr)
		}
		if (urlsafe.Options{AllowPrivate: true}).CheckStatic(u) != nil {
			t.Errorf("%s: refused with security.allow_private_urls on", raw)
		}
	}
	// Just outside RFC 9637's /20: ordinary global unicast.
	if u, _ := urlsafe.Parse("http://[3fff:1000::1]/"); (urlsafe.Options{}).CheckStatic(u) != nil {
		t.Error("3fff:1000::1 (outside 3fff::/20) refused")
	}
}

// firstMiddleLast returns the first address of p, the first of its upper
// half and its last, without repeats.
func firstMiddleLast(p netip.Prefix) []netip.Addr {
	first := p.Masked().Addr()
	b := first.AsSlice()
	last := slices.Clone(b)
	for i := p.Bits(); i < len(b)*8; i++ {
		last[i/8] |= 0x80 >> (i % 8)
	}
	out := []netip.Addr{first}
	if p.Bits() < len(b)*8 {
		mid := slices.Clone(b)
		mid[p.Bits()/8] |= 0x80 >> (p.Bits() % 8)
		m, _ := netip.AddrFromSlice(mid)
		l, _ := netip.AddrFromSlice(last)
		out = append(out, m, l)
		if l == m {
			out = out[:2]
		}
	}
	return out
}

// literalURLs writes a as URL hosts in every literal form a user may give.
func literalURLs(a netip.Addr) []string {
	if a.Is4() {
		v4 := a.As4()
		return []string{
			"http://" + a.String() + "/",
			"http://" + strconv.FormatUint(uint64(binary.BigEndian.Uint32(v4[:])), 10) + "/",
			"http://[::ffff:" + a.String() + "]/",
		}
	}
	return []string{
		fmt.Sprintf("http://[%s]/", a),
		fmt.Sprintf("http://[%s]/", a.StringExpanded()),
	}
}
