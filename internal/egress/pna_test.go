package egress_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// pnaRig is a proxy session over the browser's open guard (private
// addresses allowed by the guard itself, as for the local backend), a
// private target on loopback that counts hits, and a "public" site: a
// loopback server listed in AllowAddrPorts, which the guard treats as
// public.
type pnaRig struct {
	p        *egress.ProxySession
	c        *http.Client
	priv     string // "127.0.0.1:PORT" of the private target
	privPort uint16
	pub      string // "127.0.0.1:PORT" of the public site
	hits     func() int64
	res      *fakeResolver
}

func newPNARig(t *testing.T, allow bool) *pnaRig {
	t.Helper()
	return newPNARigWait(t, allow, 100*time.Millisecond)
}

// newPNARigWait is newPNARig with ProxyOptions.CommitWait set to wait.
func newPNARigWait(t *testing.T, allow bool, wait time.Duration) *pnaRig {
	t.Helper()
	_, hits, privAP := countingServer(t, nil)
	_, _, pubAP := countingServer(t, nil)
	res := newResolver()
	g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}, Resolver: res, AllowAddrPorts: []netip.AddrPort{pubAP}})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "pna", Guard: g, AllowPrivateFromPublic: allow, CommitWait: wait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &pnaRig{p: p, c: proxyClient(t, p), priv: privAP.String(), privPort: privAP.Port(), pub: pubAP.String(),
		hits: hits.Load, res: res}
}

// get fetches url through the proxy: status and the proxy's reason header.
func (r *pnaRig) get(t *testing.T, url string) (int, reason.Code) {
	t.Helper()
	resp, err := r.c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, reason.Code(resp.Header.Get(egress.ProxyReasonHeader))
}

func (r *pnaRig) wantGet(t *testing.T, what, url string, status int, code reason.Code) {
	t.Helper()
	if st, got := r.get(t, url); st != status || got != code {
		t.Errorf("%s: GET %s = %d %q, want %d %q", what, url, st, got, status, code)
	}
}

func (r *pnaRig) wantConnect(t *testing.T, what, target string, status int) {
	t.Helper()
	st, conn, _ := connect(t, r.p, target)
	conn.Close()
	if st != status {
		t.Errorf("%s: CONNECT %s = %d, want %d", what, target, st, status)
	}
}

// TestPNADecision walks the Private Network Access decision of one proxy
// session through the states the browser side reports.
func TestPNADecision(t *testing.T) {
	r := newPNARig(t, false)
	privURL := "http://" + r.priv + "/"
	const refused = reason.PrivateNetworkFromPublic

	// No document known: public; fail closed for plain requests and tunnels.
	r.wantGet(t, "no document", privURL, 403, refused)
	r.wantConnect(t, "no document", r.priv, 403)
	r.wantGet(t, "public site always reachable", "http://"+r.pub+"/", 200, "")

	// A public top-level document: refused.
	r.p.TopLevelCommitted("tab", "http://"+r.pub+"/page", "")
	r.wantGet(t, "public document", privURL, 403, refused)
	r.wantGet(t, "localhost name from a public document", fmt.Sprintf("http://localhost:%d/", r.privPort), 403, refused)
	r.wantConnect(t, "IPv6 loopback literal from a public document", fmt.Sprintf("[::1]:%d", r.privPort), 403)

	// The agent's own navigation: exactly that host:port, until it commits.
	done := r.p.AllowNavigation("tab", "127.0.0.1", r.privPort)
	r.wantGet(t, "agent navigation target", privURL, 200, "")
	r.wantConnect(t, "agent navigation target (tunnel)", r.priv, 200)
	r.wantGet(t, "another private port during the agent navigation", "http://127.0.0.1:1/", 403, refused)
	done()
	r.wantGet(t, "allowance ended", privURL, 403, refused)

	// The commit of an http(s) document in the allowance's frame ends it.
	r.p.AllowNavigation("tab", "127.0.0.1", r.privPort)
	r.p.TopLevelCommitted("tab", "http://"+r.pub+"/redirected", "")
	r.wantGet(t, "allowance consumed by a commit", privURL, 403, refused)

	// A private top-level document: its requests into the private network go through.
	r.p.TopLevelCommitted("tab", privURL, "")
	if !r.p.PrivateDocuments() {
		t.Fatal("PrivateDocuments false after a private commit")
	}
	r.wantGet(t, "private document", privURL, 200, "")
	r.wantConnect(t, "private document (tunnel)", r.priv, 200)

	// A popup's initial about:blank belongs to its opener: private here.
	r.p.TopLevelCommitted("popup", "about:blank", "tab")
	r.wantGet(t, "blank popup of a private opener", privURL, 200, "")
	// A popup on a public page makes the whole session public (fail closed).
	r.p.TopLevelCommitted("popup", "http://"+r.pub+"/", "tab")
	r.wantGet(t, "public popup in the session", privURL, 403, refused)
	r.p.TopLevelCommitted("popup2", "about:blank", "popup")
	r.p.TopLevelGone("popup")
	r.wantGet(t, "blank popup of a public opener", privURL, 403, refused)
	r.p.TopLevelGone("popup2")
	r.wantGet(t, "popups closed", privURL, 200, "")

	// A navigation away starts public, before its document commits.
	r.p.TopLevelNavigating("tab")
	r.wantGet(t, "navigating", privURL, 403, refused)

	wantHits := int64(4) // the four allowed GETs (tunnels sent nothing)
	if got := r.hits(); got != wantHits {
		t.Errorf("private target hits = %d, want %d", got, wantHits)
	}
	n := 0
	for _, rf := range r.p.Refusals() {
		if rf.Reason == refused {
			n++
		}
	}
	if n != 11 {
		t.Errorf("private_network_from_public refusals = %d, want 11: %+v", n, r.p.Refusals())
	}
}

// TestPNAJudgesDialedIP: a name is placed by the IP it is dialed to, after
// DNS — a name resolving into loopback is refused from a public document
// (rebinding), and a host:port once dialed to a private IP stays refused
// from a public document although the proxy's upstream connection to it is
// pooled (no new dial).
func TestPNAJudgesDialedIP(t *testing.T) {
	r := newPNARig(t, false)
	r.res.set("rebind.test", []string{"127.0.0.1"})
	name := fmt.Sprintf("http://rebind.test:%d/", r.privPort)
	r.p.TopLevelCommitted("tab", "http://"+r.pub+"/", "")
	r.wantGet(t, "name resolving to loopback, public document", name, 403, reason.PrivateNetworkFromPublic)

	r.p.TopLevelCommitted("tab", "http://"+r.priv+"/", "")
	r.wantGet(t, "same name, private document", name, 200, "")
	// A document at that name is placed by the proxy's dial: private.
	r.p.TopLevelCommitted("tab", name+"app", "")
	if !r.p.PrivateDocuments() {
		t.Error("a document at a name last dialed to loopback is not private")
	}
	r.p.TopLevelCommitted("tab", "http://"+r.pub+"/", "")
	r.wantGet(t, "pooled upstream connection, public document", name, 403, reason.PrivateNetworkFromPublic)
	// A name the proxy never dialed places a document as public.
	r.p.TopLevelCommitted("tab", "http://never-dialed.test/", "")
	if r.p.PrivateDocuments() {
		t.Error("a document at a never-dialed name is private")
	}
	if got := r.hits(); got != 1 {
		t.Errorf("private target hits = %d, want 1", got)
	}
}

// TestPNACutsPrivateTunnels: a tunnel opened while the session was private
// is closed when the session turns public, so the browser cannot reuse it
// for the public page that follows.
func TestPNACutsPrivateTunnels(t *testing.T) {
	r := newPNARig(t, false)
	r.p.TopLevelCommitted("tab", "http://"+r.priv+"/", "")
	st, conn, br := connect(t, r.p, r.priv)
	if st != 200 {
		t.Fatalf("CONNECT from a private document = %d", st)
	}
	defer conn.Close()
	stPub, pubConn, _ := connect(t, r.p, r.pub)
	if stPub != 200 {
		t.Fatalf("CONNECT to the public site = %d", stPub)
	}
	defer pubConn.Close()
	r.p.TopLevelNavigating("tab")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil || isTimeout(err) {
		t.Errorf("private tunnel still open after the session turned public (read err %v)", err)
	}
	// The public tunnel stays: write a request, get an answer.
	fmt.Fprintf(pubConn, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	pubConn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(pubConn); len(b) == 0 {
		t.Errorf("public tunnel cut too: %v", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(interface{ Timeout() bool })
	return ok && ne.Timeout()
}

// TestPNAOffWithAllowPrivate: security.allow_private_urls turns the rule off.
func TestPNAOffWithAllowPrivate(t *testing.T) {
	r := newPNARig(t, true)
	r.p.TopLevelCommitted("tab", "http://"+r.pub+"/", "")
	r.wantGet(t, "allow_private_urls", "http://"+r.priv+"/", 200, "")
	r.wantConnect(t, "allow_private_urls (tunnel)", r.priv, 200)
}

// TestPNANavigationNarrowedByFetchMetadata: the agent's navigation
// allowance (AllowNavigation) serves only the navigation itself and its
// document's same-origin requests when the browser sent Fetch Metadata; a
// keepalive fetch or beacon of the page the tab left, or a public popup's
// navigation, says cross-site and is refused (breaker7 D1, D6).
func TestPNANavigationNarrowedByFetchMetadata(t *testing.T) {
	r := newPNARig(t, false)
	privURL := "http://" + r.priv + "/"
	r.p.TopLevelCommitted("tab", "http://"+r.pub+"/page", "")
	done := r.p.AllowNavigation("tab", "127.0.0.1", r.privPort)
	defer done()
	for _, c := range []struct {
		what             string
		site, mode, dest string
		want             int
	}{
		{"the agent's navigation (Page.navigate)", "none", "navigate", "document", 200},
		{"the new document's own image", "same-origin", "no-cors", "image", 200},
		{"keepalive fetch of the page the tab left", "cross-site", "no-cors", "empty", 403},
		{"sendBeacon of the page the tab left", "cross-site", "no-cors", "empty", 403},
		{"a public popup's navigation", "cross-site", "navigate", "document", 403},
		{"a public popup's same-site navigation", "same-site", "navigate", "document", 403},
		{"a browser-initiated sub-resource (not a navigation)", "none", "no-cors", "empty", 403},
	} {
		req, _ := http.NewRequest(http.MethodGet, privURL, nil)
		req.Header.Set("Sec-Fetch-Site", c.site)
		req.Header.Set("Sec-Fetch-Mode", c.mode)
		req.Header.Set("Sec-Fetch-Dest", c.dest)
		resp, err := r.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s during the agent's navigation: %d %s, want %d", c.what, resp.StatusCode, resp.Header.Get(egress.ProxyReasonHeader), c.want)
		}
	}
	if got := r.hits(); got != 2 {
		t.Errorf("private target hits = %d, want 2", got)
	}
}

// TestProxyDrain: Drain cuts the browser's open connections to the proxy
// and returns once nothing arrived for the quiet period.
func TestProxyDrain(t *testing.T) {
	r := newPNARig(t, false)
	r.wantGet(t, "public site", "http://"+r.pub+"/", 200, "") // leaves a keep-alive connection
	st, conn, _ := connect(t, r.p, r.pub)
	defer conn.Close()
	if st != 200 {
		t.Fatalf("CONNECT public = %d", st)
	}
	start := time.Now()
	if !r.p.Drain(context.Background(), 50*time.Millisecond, 2*time.Second) {
		t.Fatal("Drain: not quiet")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("Drain returned after %v, before the quiet period", d)
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("the tunnel survived Drain")
	}
	// A busy session is not quiet within max.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if resp, err := r.c.Get("http://" + r.pub + "/"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if r.p.Drain(context.Background(), 100*time.Millisecond, 300*time.Millisecond) {
		t.Error("Drain reported quiet while the browser kept asking")
	}
}

// TestPNAHoldsRequestsUntilTheCommit: while the agent's own navigation into
// the private network is pending, a request to another private host:port
// (the new page's sub-resource, sent before the browser reported the commit)
// is held and decided when the commit arrives, instead of refused at once
// (which made a dev page's first requests to its API fail under load).
func TestPNAHoldsRequestsUntilTheCommit(t *testing.T) {
	r := newPNARigWait(t, false, 10*time.Second)
	_, otherHits, otherAP := countingServer(t, nil)
	done := r.p.AllowNavigation("tab", "127.0.0.1", r.privPort)
	defer done()
	type answer struct {
		status int
		code   reason.Code
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := r.c.Get("http://" + otherAP.String() + "/api")
		if err != nil {
			got <- answer{-1, ""}
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got <- answer{resp.StatusCode, reason.Code(resp.Header.Get(egress.ProxyReasonHeader))}
	}()
	select {
	case a := <-got:
		t.Fatalf("request answered %d %q before the commit; want it held", a.status, a.code)
	case <-time.After(300 * time.Millisecond):
	}
	r.p.TopLevelCommitted("tab", "http://"+r.priv+"/", "")
	select {
	case a := <-got:
		if a.status != 200 || otherHits.Load() != 1 {
			t.Fatalf("held request after a private commit: %d %q, %d hits; want 200 and 1 hit", a.status, a.code, otherHits.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("held request not released by the commit")
	}

	// Held, then the navigation ends without a private commit: refused.
	r.p.TopLevelNavigating("tab")
	done2 := r.p.AllowNavigation("tab", "127.0.0.1", r.privPort)
	go func() {
		st, code := r.get(t, "http://"+otherAP.String()+"/api")
		got <- answer{st, code}
	}()
	time.Sleep(100 * time.Millisecond) // the request is in flight (held or not, the answer below decides)
	done2()
	select {
	case a := <-got:
		if a.status != 403 || a.code != reason.PrivateNetworkFromPublic {
			t.Fatalf("held request after the navigation ended: %d %q, want 403 private_network_from_public", a.status, a.code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("held request not released when the navigation ended")
	}
}
