package egress_test

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// A name whose DNS answer lies in a special-purpose block IANA's registries
// mark not globally reachable is refused by Guard.Check (issue 16 item 3:
// RFC 9637's 3fff::/20 passed), and so is the literal.
func TestCheckRefusesRegistrySpecialPurposeAnswers(t *testing.T) {
	res := newResolver()
	answers := map[string]string{
		"doc.test":   "3fff::1",         // RFC 9637 documentation
		"srv6.test":  "5f00::1",         // RFC 9602 SRv6 SIDs
		"dummy.test": "100:0:0:1::1",    // RFC 9780 dummy prefix
		"6a44.test":  "192.88.99.2",     // RFC 6751 6a44 relay
		"relay.test": "192.88.99.1",     // terminated 6to4 relay anycast
		"as112.test": "192.175.48.6",    // RFC 7534 AS112: globally reachable
		"as112.v6":   "2620:4f:8000::6", // same
	}
	for host, a := range answers {
		res.set(host, []string{a})
	}
	g := egress.New(egress.Options{Resolver: res})
	for host, a := range answers {
		want := reason.SSRFPrivate
		if host == "as112.test" || host == "as112.v6" {
			want = ""
		}
		for _, raw := range []string{"http://" + host + "/", "http://" + bracket(a) + "/"} {
			_, err := g.Check(context.Background(), mustParse(t, raw))
			if got := reason.Of(err); got != want {
				t.Errorf("%s (%s): %q (%v), want %q", raw, a, got, err, want)
			}
		}
	}
}

func bracket(a string) string {
	for _, c := range a {
		if c == ':' {
			return "[" + a + "]"
		}
	}
	return a
}
