package urlsafe

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe/iana"
)

// registryEntries is the registry copies as iana parses them, the reference
// the generated table is held to.
func registryEntries(t testing.TB) []iana.Entry {
	v4, v6, err := iana.Registries()
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat(v4, v6)
}

// referenceEntry is the most specific registry entry holding a, by
// netip.Prefix.Contains, or the zero Entry.
func referenceEntry(es []iana.Entry, a netip.Addr) iana.Entry {
	var best iana.Entry
	for _, e := range es {
		if e.Prefix.Contains(a) && (!best.Prefix.IsValid() || e.Prefix.Bits() > best.Prefix.Bits()) {
			best = e
		}
	}
	return best
}

// The generated table decodes to the registry: same blocks in the same
// order, same reachability and termination.
func TestSpecialTableMatchesRegistry(t *testing.T) {
	es := registryEntries(t)
	if len(es) != len(specialPurpose) {
		t.Fatalf("%d generated rows, %d registry blocks", len(specialPurpose), len(es))
	}
	reach := map[reachability]string{reachTrue: "True", reachFalse: "False", reachNA: "N/A", reachBlank: ""}
	for i, e := range es {
		b := specialPurpose[i]
		a := netip.AddrFrom16(b.addr)
		if b.is4 {
			a = netip.AddrFrom4([4]byte(b.addr[:4]))
		}
		if got := netip.PrefixFrom(a, int(b.bits)); got != e.Prefix || reach[b.reach] != e.GloballyReachable || b.terminated != e.IsTerminated() {
			t.Errorf("row %d: %s %q terminated=%v, registry %s %q terminated=%v", i, got, reach[b.reach], b.terminated, e.Prefix, e.GloballyReachable, e.IsTerminated())
		}
	}
}

// FuzzSpecialEntry: the generated table's byte-wise lookup finds the same
// most specific entry as netip.Prefix.Contains over the parsed registry,
// for any IPv4 or IPv6 address.
func FuzzSpecialEntry(f *testing.F) {
	for _, s := range []string{"192.0.0.9", "192.0.0.11", "192.88.99.2", "3fff:fff::1", "3fff:1000::", "2001:1::3", "2001::1", "100:0:0:1::", "fe80::1", "::ffff:10.0.0.1", "8.8.8.8"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	es := registryEntries(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		want := referenceEntry(es, a)
		got, found := specialEntry(a)
		if found != want.Prefix.IsValid() {
			t.Fatalf("%s: found %v, registry entry %v", a, found, want.Prefix)
		}
		if found && (int(got.bits) != want.Prefix.Bits() || got.is4 != want.Prefix.Addr().Is4()) {
			t.Fatalf("%s: /%d, registry entry %s", a, got.bits, want.Prefix)
		}
	})
}
