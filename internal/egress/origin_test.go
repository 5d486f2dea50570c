package egress

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, &net404{}
}

type net404 struct{}

func (*net404) Error() string { return "no such host" }

// A configured self-hosted origin on a private address is reachable, and only
// that origin: another port, another private host and metadata stay refused.
func TestWithOriginAllowsOnlyThatOrigin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	ap := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
	res := mapResolver{
		"searx.lan": {ap.Addr()},
		"other.lan": {ap.Addr()},
		"meta.lan":  {netip.MustParseAddr("169.254.169.254")},
	}
	base := New(Options{Resolver: res})
	g := base.WithOrigin("searx.lan", ap.Port())

	get := func(g *Guard, u string) error {
		req, _ := http.NewRequest("GET", u, nil)
		resp, err := g.Client(ClientOptions{}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	port := ap.Port()
	okURL := "http://searx.lan:" + itoa(port) + "/"
	if err := get(g, okURL); err != nil {
		t.Fatalf("configured origin refused: %v", err)
	}
	if err := get(base, okURL); reason.Of(err) != reason.SSRFPrivate {
		t.Fatalf("base guard must still refuse: %v", err)
	}
	if err := get(g, "http://other.lan:"+itoa(port)+"/"); reason.Of(err) != reason.SSRFPrivate {
		t.Fatalf("other private host let through: %v", err)
	}
	if err := get(g, "http://searx.lan:1/"); reason.Of(err) != reason.SSRFPrivate {
		t.Fatalf("other port let through: %v", err)
	}
	gm := base.WithOrigin("meta.lan", 80)
	if err := get(gm, "http://meta.lan/"); reason.Of(err) != reason.SSRFMetadata {
		t.Fatalf("metadata must never be lifted: %v", err)
	}
	// An IP-literal origin passes CheckStatic too.
	gl := base.WithOrigin(ap.Addr().String(), port)
	u, _ := urlsafe.Parse(srv.URL + "/")
	if rerr := gl.CheckStatic(u); rerr != nil {
		t.Fatalf("literal origin: %v", rerr)
	}
	if rerr := base.CheckStatic(u); rerr == nil {
		t.Fatal("literal loopback must be refused without the allowance")
	}
}

func itoa(p uint16) string {
	var b [6]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + p%10)
		p /= 10
		if p == 0 {
			break
		}
	}
	return string(b[i:])
}
