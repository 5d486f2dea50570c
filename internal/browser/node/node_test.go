package node

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

func goodRecord() Record {
	return Record{Version: RecordVersion, ID: strings.Repeat("ab", 16), Addr: "127.0.0.1:9222", Capacity: 4, Sessions: 1, Heartbeat: 1764633600000}
}

func TestDecodeRoundTrip(t *testing.T) {
	r := goodRecord()
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(r.Key(), b)
	if err != nil || got != r {
		t.Fatalf("Decode(Encode(r)) = %+v, %v; want %+v", got, err, r)
	}
}

func TestDecodeRejects(t *testing.T) {
	r := goodRecord()
	key := r.Key()
	for name, v := range map[string]string{
		"empty":          ``,
		"not json":       `nope`,
		"truncated":      `{"v":1,"id":"` + r.ID,
		"wrong type":     `{"v":"1","id":"` + r.ID + `","addr":"127.0.0.1:1","capacity":1,"sessions":0,"heartbeat_ms":1764633600000}`,
		"unknown field":  `{"v":1,"id":"` + r.ID + `","addr":"127.0.0.1:1","capacity":1,"sessions":0,"heartbeat_ms":1764633600000,"x":1}`,
		"trailing":       `{"v":1,"id":"` + r.ID + `","addr":"127.0.0.1:1","capacity":1,"sessions":0,"heartbeat_ms":1764633600000} {}`,
		"version":        `{"v":2,"id":"` + r.ID + `","addr":"127.0.0.1:1","capacity":1,"sessions":0,"heartbeat_ms":1764633600000}`,
		"id other key":   `{"v":1,"id":"` + strings.Repeat("cd", 16) + `","addr":"127.0.0.1:1","capacity":1,"sessions":0,"heartbeat_ms":1764633600000}`,
		"port 0":         `{"v":1,"id":"` + r.ID + `","addr":"127.0.0.1:0","capacity":1,"sessions":0,"heartbeat_ms":1764633600000}`,
		"url not addr":   `{"v":1,"id":"` + r.ID + `","addr":"http://127.0.0.1:1/","capacity":1,"sessions":0,"heartbeat_ms":1764633600000}`,
		"zone":           `{"v":1,"id":"` + r.ID + `","addr":"[fe80::1%eth0]:1","capacity":1,"sessions":0,"heartbeat_ms":1764633600000}`,
		"host with path": `{"v":1,"id":"` + r.ID + `","addr":"a/b:1","capacity":1,"sessions":0,"heartbeat_ms":1764633600000}`,
		"capacity 0":     `{"v":1,"id":"` + r.ID + `","addr":"127.0.0.1:1","capacity":0,"sessions":0,"heartbeat_ms":1764633600000}`,
		"over capacity":  `{"v":1,"id":"` + r.ID + `","addr":"127.0.0.1:1","capacity":1,"sessions":2,"heartbeat_ms":1764633600000}`,
		"negative":       `{"v":1,"id":"` + r.ID + `","addr":"127.0.0.1:1","capacity":1,"sessions":-1,"heartbeat_ms":1764633600000}`,
		"too long":       `{"v":1,"id":"` + r.ID + `","addr":"` + strings.Repeat("a", MaxRecordBytes) + `:1"}`,
	} {
		if _, err := Decode(key, []byte(v)); !errors.Is(err, ErrRecord) {
			t.Errorf("%s: Decode = %v, want an ErrRecord", name, err)
		}
	}
}

// FuzzDecode: no input panics, and whatever decodes re-encodes to a record
// that decodes to itself and passes Validate.
func FuzzDecode(f *testing.F) {
	r := goodRecord()
	b, _ := r.Encode()
	f.Add(r.Key(), b)
	f.Add(r.Key(), []byte(`{"v":1}`))
	f.Add(KeyPrefix+"x", []byte(`[]`))
	f.Fuzz(func(t *testing.T, key string, b []byte) {
		got, err := Decode(key, b)
		if err != nil {
			return
		}
		if got.Validate() != nil || got.Key() != key {
			t.Fatalf("Decode accepted an invalid record %+v", got)
		}
		enc, err := got.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if again, err := Decode(key, enc); err != nil || again != got {
			t.Fatalf("round trip: %+v, %v", again, err)
		}
	})
}

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestAllow(t *testing.T) {
	res := fakeResolver{
		"node1.internal": {netip.MustParseAddr("10.1.2.3")},
		"mixed.internal": {netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("169.254.169.254")},
		"lo.internal":    {netip.MustParseAddr("127.0.0.1")},
	}
	empty, _ := ParseAllow(nil)
	cidr, _ := ParseAllow([]string{"10.0.0.0/8"})
	host, _ := ParseAllow([]string{"node1.internal", "mixed.internal", "169.254.0.0/16"})
	_, bad := ParseAllow([]string{"10.0.0.0/8", "not a host", "[::1]"})
	if len(bad) != 2 {
		t.Errorf("ParseAllow bad = %q, want the two malformed entries", bad)
	}
	for _, c := range []struct {
		name  string
		allow Allow
		addr  string
		ok    bool
	}{
		{"empty: loopback v4", empty, "127.0.0.1:9", true},
		{"empty: loopback v6", empty, "[::1]:9", true},
		{"empty: a name resolving to loopback", empty, "lo.internal:9", true},
		{"empty: private", empty, "10.0.0.1:9", false},
		{"empty: public", empty, "192.0.2.1:9", false},
		{"empty: metadata", empty, "169.254.169.254:80", false},
		{"cidr: inside", cidr, "10.200.0.1:9", true},
		{"cidr: loopback no longer implied", cidr, "127.0.0.1:9", false},
		{"cidr: v4-mapped v6 form of an allowed address", cidr, "[::ffff:10.0.0.1]:9", true},
		{"host: listed name", host, "node1.internal:9", true},
		{"host: its address literally is not the name", host, "10.1.2.3:9", false},
		{"host: one metadata answer fails the name", host, "mixed.internal:9", false},
		{"host: metadata never, even inside a listed CIDR", host, "169.254.169.254:80", false},
		{"host: unresolvable", host, "nope.internal:9", false},
		{"metadata host name", host, "metadata.google.internal:80", false},
	} {
		_, err := c.allow.Resolve(context.Background(), res, c.addr)
		if (err == nil) != c.ok {
			t.Errorf("%s: Resolve(%s) = %v, want ok %v", c.name, c.addr, err, c.ok)
		}
		if err != nil && reason.As(err).Code != reason.BrowserNodeRefused {
			t.Errorf("%s: code %s, want browser_node_refused", c.name, reason.As(err).Code)
		}
	}
}

func TestPick(t *testing.T) {
	mk := func(id byte, sessions, capacity int) Record {
		r := goodRecord()
		r.ID = strings.Repeat(string([]byte{'a' + id}), 32)
		r.Sessions, r.Capacity = sessions, capacity
		return r
	}
	a, b, c := mk(0, 3, 4), mk(1, 1, 2), mk(2, 2, 8)
	got, err := Pick([]Record{a, b, c}, nil)
	if err != nil || got.ID != c.ID {
		t.Fatalf("Pick = %v, %v; want the node with the lowest load (2/8)", got.ID, err)
	}
	if got, _ := Pick([]Record{a, b, c}, map[string]bool{c.ID: true}); got.ID != b.ID {
		t.Errorf("Pick skipping c = %v, want b (1/2 < 3/4)", got.ID)
	}
	if _, err := Pick([]Record{mk(0, 2, 2)}, nil); !errors.Is(err, ErrNoRoom) {
		t.Errorf("Pick of full nodes = %v, want ErrNoRoom", err)
	}
}
