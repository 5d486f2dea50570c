package browser

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Issue 16 item 1: a public page must not reach the private network through
// the local browser (Private Network Access in the egress proxy, pna.go).
//
// TestPrivateNetworkFromPublicPage runs itself again inside a network
// namespace it makes (unshare -n): loopback up, 198.18.0.1/32 added on it
// and declared in security.fake_ip_ranges, so that address is a "public"
// site; the private targets are servers on 127.0.0.1 that count every hit.
// No packet leaves the namespace.
const pnaNetnsEnv = "GATEHOUSE_PNA_NETNS"

// pnaPublicIP is the "public" site's address inside the namespace
// (198.18.0.0/15, RFC 2544 benchmarking space, declared fake-IP space).
const pnaPublicIP = "198.18.0.1"

// pnaLANIP is a private address that is not loopback: Chromium sends no
// Fetch Metadata to it over plain HTTP (not potentially trustworthy), like a
// CONNECT tunnel, so only the browser side's narrowing in time protects it.
const pnaLANIP = "10.0.0.1"

func TestPrivateNetworkFromPublicPage(t *testing.T) {
	if os.Getenv(pnaNetnsEnv) != "1" {
		pnaReexec(t)
		return
	}
	if _, err := backend.FindChromium(""); err != nil {
		t.Fatalf("inside the namespace: %v", err)
	}
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"addr", "add", pnaPublicIP + "/32", "dev", "lo"}, {"addr", "add", pnaLANIP + "/32", "dev", "lo"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	priv := newPrivateTargets(t)
	pub := newPublicSite(t, priv)

	t.Run("default config refuses every vector", func(t *testing.T) {
		m := pnaManager(t, false)
		const task = "pna-public"
		ctx := context.Background()

		// Sub-resources, frames, WebSocket, EventSource, a form POST and a
		// 302 from a public page.
		r := m.Navigate(ctx, task, NavigateInput{URL: pub.url("/vectors")})
		if !r.Success {
			t.Fatalf("navigate to the public page: %s %s", r.Reason, r.Error)
		}
		s, _ := m.Session(task)
		subVectors := []string{"img", "fetch", "websocket", "iframe", "form", "eventsource", "redirect"}
		waitRefused(t, s, priv, subVectors)

		// A JS navigation and a meta refresh into the private network.
		for _, v := range []string{"jsnav", "meta"} {
			r := m.Navigate(ctx, task, NavigateInput{URL: pub.url("/" + v)})
			waitRefused(t, s, priv, []string{v})
			pnaNoPrivateContent(t, m, task, v, r)
		}
		// The agent's own navigation of a public URL that redirects into
		// the private network.
		r = m.Navigate(ctx, task, NavigateInput{URL: pub.url("/redirect-top")})
		if r.Success || r.Reason != reason.PrivateNetworkFromPublic {
			t.Errorf("navigate to a public URL redirecting into the private network: success=%t reason=%q, want %s", r.Success, r.Reason, reason.PrivateNetworkFromPublic)
		}
		if r.URL != "about:blank" {
			t.Errorf("tab left on %q after the refused redirect, want about:blank", r.URL)
		}
		// The message says what was refused: the request the public page
		// led to, by host:port, not "the page's host" (breaker7 D10).
		pnaRefusalNamesTarget(t, "redirect-top", r, pub.addr, priv.adr["redirect"])
		// A public page that submits a form into the private network as
		// it loads: the same refusal, naming the form's target.
		r = m.Navigate(ctx, task, NavigateInput{URL: pub.url("/form-top")})
		waitRefused(t, s, priv, []string{"form"})
		pnaRefusalNamesTarget(t, "form-top", r, pub.addr, priv.adr["form"])
		pnaNoPrivateContent(t, m, task, "form-top", r)
		for name, n := range priv.hits() {
			if n != 0 {
				t.Errorf("private target %s was hit %d times from a public page", name, n)
			}
		}

		// Positive control: the agent's own navigation to a private page
		// works on the local backend, and its own sub-resources load.
		r = m.Navigate(ctx, task, NavigateInput{URL: priv.url("home", "/")})
		if !r.Success || !strings.Contains(r.Snapshot, "private home") {
			t.Fatalf("navigate to the private page: success=%t %s %s\n%s", r.Success, r.Reason, r.Error, r.Snapshot)
		}
		waitHits(t, priv, "home-img")
	})

	// breaker7 D1: the page the tab leaves queues keepalive fetches and
	// beacons to the private target the agent opens next; none may use
	// the navigation's allowance, and the navigation succeeds.
	t.Run("unload-time requests of the left page", func(t *testing.T) {
		m := pnaManager(t, false)
		const task = "pna-unload"
		ctx := context.Background()
		for _, target := range []string{"unload", "unload-lan"} {
			if r := m.Navigate(ctx, task, NavigateInput{URL: pub.url("/unload")}); !r.Success {
				t.Fatalf("navigate to the public page: %s %s", r.Reason, r.Error)
			}
			r := m.Navigate(ctx, task, NavigateInput{URL: priv.url(target, "/agent")})
			if !r.Success || !strings.Contains(r.Snapshot, "the agent's own private page") {
				t.Errorf("the agent's navigation to %s after the unload page: success=%t %s %s", target, r.Success, r.Reason, r.Error)
			}
		}
		time.Sleep(300 * time.Millisecond) // late beacons would land now
		for _, name := range []string{"unload", "unload-lan"} {
			if n := priv.hits()[name]; n != 0 {
				t.Errorf("private target %s was hit %d times by the left public page's unload-time requests", name, n)
			}
			if n := priv.hits()[name+"-agent"]; n == 0 {
				t.Errorf("the agent's own page on %s was never served", name)
			}
		}
	})

	// breaker7 D6: popups of a public page keep running; the agent's
	// navigation into the private network closes them first and says so.
	t.Run("popups of a public page", func(t *testing.T) {
		m := pnaManager(t, false)
		const task = "pna-popups"
		ctx := context.Background()
		r := m.Navigate(ctx, task, NavigateInput{URL: pub.url("/popups")})
		if !r.Success {
			t.Fatalf("navigate to the public page: %s %s", r.Reason, r.Error)
		}
		s, _ := m.Session(task)
		ref := regexp.MustCompile(`button "Open" \[ref=(e\d+)\]`).FindStringSubmatch(r.Snapshot)
		if ref == nil {
			t.Fatalf("no Open button in the snapshot:\n%s", r.Snapshot)
		}
		// The click opens a public popup; the session follows it, and the
		// opener keeps running.
		if c := m.Click(ctx, task, RefInput{Ref: ref[1]}); !c.Success || c.Popup == nil {
			t.Fatalf("click: success=%t popup=%+v %s %s", c.Success, c.Popup, c.Reason, c.Error)
		}
		waitRefused(t, s, priv, []string{"popup-lan"}) // the popup and its opener are polling
		r = m.Navigate(ctx, task, NavigateInput{URL: priv.url("popup-lan", "/agent")})
		if !r.Success || !strings.Contains(r.Snapshot, "the agent's own private page") {
			t.Errorf("the agent's navigation after the popups page: success=%t %s %s", r.Success, r.Reason, r.Error)
		}
		if r.PopupsClosed != 1 {
			t.Errorf("popups_closed = %d, want 1 (the public opener)", r.PopupsClosed)
		}
		time.Sleep(300 * time.Millisecond)
		if n := priv.hits()["popup-lan"]; n != 0 {
			t.Errorf("the private target was hit %d times by the public page's popups", n)
		}
	})

	t.Run("allow_private_urls lets the public page through", func(t *testing.T) {
		m := pnaManager(t, true)
		before := priv.hits()
		r := m.Navigate(context.Background(), "pna-allowed", NavigateInput{URL: pub.url("/vectors")})
		if !r.Success {
			t.Fatalf("navigate: %s %s", r.Reason, r.Error)
		}
		deadline := time.Now().Add(10 * time.Second)
		for _, v := range []string{"img", "fetch", "websocket", "iframe", "form", "eventsource", "redirect"} {
			for priv.hits()[v] <= before[v] && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if priv.hits()[v] <= before[v] {
				t.Errorf("with security.allow_private_urls the %s vector did not reach its private target", v)
			}
		}
	})
}

// pnaReexec runs the test binary again, this test only, in a new network
// namespace. Without root or unshare it skips, unless CI=true.
func pnaReexec(t *testing.T) {
	miss := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot make a network namespace (%s); CI must run this test as root with unshare(1) and ip(8)", why)
		}
		t.Skipf("skipping: this test needs a network namespace of its own (%s); run it as root with unshare(1) and ip(8)", why)
	}
	if os.Geteuid() != 0 {
		miss("not root")
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			miss(tool + " not found")
		}
	}
	if _, err := backend.FindChromium(""); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Chromium missing (CI unset): %v", err)
		}
		t.Fatal(err)
	}
	if out, err := exec.Command("unshare", "-n", "true").CombinedOutput(); err != nil {
		miss(fmt.Sprintf("unshare -n failed: %v: %s", err, strings.TrimSpace(string(out))))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", "--", os.Args[0],
		"-test.run=^TestPrivateNetworkFromPublicPage$", "-test.count=1", "-test.v", "-test.timeout=80s")
	cmd.Env = append(os.Environ(), pnaNetnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("inside the network namespace:\n%s", out)
	if err != nil {
		t.Fatalf("the test failed inside its network namespace: %v", err)
	}
}

// pnaManager is a Manager on the default config (local Chromium) with the
// public site's range declared fake-IP space, and private URLs allowed or not.
func pnaManager(t *testing.T, allowPrivate bool) *Manager {
	t.Helper()
	cfg := config.Default()
	cfg.Security.FakeIPRanges = []string{"198.18.0.0/15"}
	cfg.Security.AllowPrivateURLs = allowPrivate
	m, warns := New(Options{Config: cfg, Home: t.TempDir()})
	if len(warns) > 0 {
		t.Fatalf("warnings: %v", warns)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// privateTargets are one loopback server per vector (so a refusal names its
// vector by port), plus "home", a private page with its own sub-resource.
type privateTargets struct {
	srv map[string]*http.Server
	adr map[string]string // name → "127.0.0.1:PORT"
	n   map[string]*atomic.Int64
}

var pnaVectors = []string{"img", "fetch", "websocket", "iframe", "form", "eventsource", "redirect", "jsnav", "meta", "home", "home-img",
	"unload", "unload-agent", "unload-lan", "unload-lan-agent", "popup-lan", "popup-lan-agent"}

// pnaListenAddr: the LAN targets listen on pnaLANIP, the others on loopback.
func pnaListenAddr(name string) string {
	if strings.HasSuffix(name, "-lan") {
		return pnaLANIP + ":0"
	}
	return "127.0.0.1:0"
}

func newPrivateTargets(t *testing.T) *privateTargets {
	p := &privateTargets{srv: map[string]*http.Server{}, adr: map[string]string{}, n: map[string]*atomic.Int64{}}
	for _, name := range pnaVectors {
		p.n[name] = &atomic.Int64{}
	}
	for _, name := range pnaVectors {
		if name == "home-img" || strings.HasSuffix(name, "-agent") {
			continue // served by "home", or by the target the agent opens
		}
		ln, err := net.Listen("tcp", pnaListenAddr(name))
		if err != nil {
			t.Fatal(err)
		}
		name := name
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if name == "home" && r.URL.Path == "/own.png" {
				p.n["home-img"].Add(1)
				w.Header().Set("Content-Type", "image/gif")
				w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
				return
			}
			if r.URL.Path == "/agent" && p.n[name+"-agent"] != nil {
				p.n[name+"-agent"].Add(1)
				// A slow server keeps the navigation (and its allowance)
				// pending long enough for a running page to try it.
				time.Sleep(300 * time.Millisecond)
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, `<title>agent</title><h1>the agent's own private page</h1>`)
				return
			}
			p.n[name].Add(1)
			if name == "websocket" && r.Header.Get("Sec-WebSocket-Key") != "" {
				wsAccept(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if name == "home" {
				fmt.Fprint(w, `<title>home</title><h1>private home</h1><img src="/own.png" alt="">`)
				return
			}
			fmt.Fprint(w, `<title>PRIVATE</title><h1>PRIVATE-SECRET `+name+`</h1>`)
		})}
		go srv.Serve(ln) //nolint:errcheck // closed by Cleanup
		t.Cleanup(func() { srv.Close() })
		p.srv[name], p.adr[name] = srv, ln.Addr().String()
	}
	return p
}

func (p *privateTargets) url(name, path string) string { return "http://" + p.adr[name] + path }

func (p *privateTargets) hits() map[string]int64 {
	out := map[string]int64{}
	for k, c := range p.n {
		out[k] = c.Load()
	}
	return out
}

// publicSite serves the attacking pages on 198.18.0.1.
type publicSite struct{ addr string }

func (s *publicSite) url(path string) string { return "http://" + s.addr + path }

func newPublicSite(t *testing.T, p *privateTargets) *publicSite {
	ln, err := net.Listen("tcp", pnaPublicIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	mux.HandleFunc("/vectors", func(w http.ResponseWriter, r *http.Request) {
		page(w, fmt.Sprintf(`<title>public</title><h1>public page</h1>
<img src="%s">
<img src="/302">
<iframe src="%s"></iframe>
<iframe name="sink"></iframe>
<form id="f" method="POST" action="%s" target="sink"><input name="x" value="1"></form>
<script>
fetch(%q, {mode: "no-cors"}).catch(() => {});
try { new WebSocket(%q); } catch (e) {}
try { new EventSource(%q); } catch (e) {}
document.getElementById("f").submit();
</script>`, p.url("img", "/x.png"), p.url("iframe", "/"), p.url("form", "/post"),
			p.url("fetch", "/api"), "ws://"+p.adr["websocket"]+"/ws", p.url("eventsource", "/events")))
	})
	mux.HandleFunc("/form-top", func(w http.ResponseWriter, r *http.Request) {
		page(w, fmt.Sprintf(`<title>public form</title><h1>public form</h1>
<form id="f" method="POST" action="%s"><input name="csrf" value="1"></form>
<script>document.getElementById("f").submit();</script>`, p.url("form", "/post-top")))
	})
	mux.HandleFunc("/302", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p.url("redirect", "/landing"), http.StatusFound)
	})
	mux.HandleFunc("/redirect-top", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p.url("redirect", "/top"), http.StatusFound)
	})
	mux.HandleFunc("/jsnav", func(w http.ResponseWriter, r *http.Request) {
		page(w, fmt.Sprintf(`<title>public js</title><h1>public js</h1><script>setTimeout(() => { location.href = %q; }, 50);</script>`, p.url("jsnav", "/")))
	})
	mux.HandleFunc("/meta", func(w http.ResponseWriter, r *http.Request) {
		page(w, fmt.Sprintf(`<title>public meta</title><meta http-equiv="refresh" content="0;url=%s"><h1>public meta</h1>`, p.url("meta", "/")))
	})
	// Unload-time requests (breaker7 D1): keepalive fetches and beacons
	// queued as the page is left, to the private targets the agent opens
	// next (a loopback one, with Fetch Metadata, and a LAN one, without).
	mux.HandleFunc("/unload", func(w http.ResponseWriter, r *http.Request) {
		page(w, fmt.Sprintf(`<title>public unload</title><h1>public unload</h1>
<script>
const targets = [%q, %q];
function go(tag) {
  for (const t of targets) for (let i = 0; i < 3; i++) {
    try { fetch(t + "/KA-" + tag + i, {mode: "no-cors", keepalive: true}).catch(() => {}); } catch (e) {}
    try { navigator.sendBeacon(t + "/BEACON-" + tag + i, "csrf=1"); } catch (e) {}
  }
}
addEventListener("pagehide", () => go("ph"));
addEventListener("beforeunload", () => go("bu"));
addEventListener("unload", () => go("un"));
document.addEventListener("visibilitychange", () => go("vis"));
</script>`, p.url("unload", ""), p.url("unload-lan", "")))
	})
	// A public page and the popup it opens (on a click: the popup blocker
	// is on) polling a private target (breaker7 D6).
	mux.HandleFunc("/popups", func(w http.ResponseWriter, r *http.Request) {
		t := p.url("popup-lan", "")
		poll := fmt.Sprintf(`<script>setInterval(() => { fetch(%q + "/POP-" + location.protocol, {mode: "no-cors"}).catch(() => {}); new Image().src = %q + "/POPIMG-" + Date.now(); }, 50);</script>`, t, t)
		page(w, fmt.Sprintf(`<title>public popups</title><h1>public popups</h1>
<button onclick="window.open('/popup-page')">Open</button>%s`, poll))
	})
	mux.HandleFunc("/popup-page", func(w http.ResponseWriter, r *http.Request) {
		t := p.url("popup-lan", "")
		page(w, fmt.Sprintf(`<title>popup</title><h1>popup</h1>
<script>setInterval(() => { new Image().src = %q + "/POPIMG-" + Date.now(); }, 50);</script>`, t))
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln) //nolint:errcheck // closed by Cleanup
	t.Cleanup(func() { srv.Close() })
	return &publicSite{addr: ln.Addr().String()}
}

// waitRefused waits (up to 10 s) until the session's proxy has refused a
// request to each vector's private target with private_network_from_public.
func waitRefused(t *testing.T, s *Session, p *privateTargets, vectors []string) {
	t.Helper()
	want := map[uint16]string{}
	for _, v := range vectors {
		want[egress.PortOfHost(p.adr[v], 0)] = v
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := map[string]bool{}
		for _, rf := range s.proxy.(*egress.ProxySession).Refusals() {
			if v, ok := want[rf.Port]; ok && rf.Reason == reason.PrivateNetworkFromPublic {
				got[v] = true
			}
		}
		if len(got) == len(want) {
			return
		}
		if time.Now().After(deadline) {
			var miss []string
			for _, v := range vectors {
				if !got[v] {
					miss = append(miss, v)
				}
			}
			t.Errorf("no private_network_from_public refusal for %v (refusals: %+v; private hits: %v)", miss, s.proxy.(*egress.ProxySession).Refusals(), p.hits())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitHits(t *testing.T, p *privateTargets, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.hits()[name] == 0 {
		if time.Now().After(deadline) {
			t.Errorf("private target %s never hit", name)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pnaRefusalNamesTarget: a navigation the public page at pubAddr led into
// the private network is refused with private_network_from_public, and
// the message names both the page and the refused request's host:port,
// and the fix; never "the page's host", which was not what was refused.
func pnaRefusalNamesTarget(t *testing.T, vector string, r NavigateResult, pubAddr, privAddr string) {
	t.Helper()
	if r.Success || r.Reason != reason.PrivateNetworkFromPublic {
		t.Errorf("%s: success=%t reason=%q, want %s", vector, r.Success, r.Reason, reason.PrivateNetworkFromPublic)
		return
	}
	if !strings.Contains(r.Error, "http://"+pubAddr) || !strings.Contains(r.Error, "http://"+privAddr) ||
		!strings.Contains(r.Error, "security.allow_private_urls") || strings.Contains(r.Error, "page's host") {
		t.Errorf("%s: message %q; want it to name the page %s, the refused request http://%s and the fix", vector, r.Error, pubAddr, privAddr)
	}
}

// pnaNoPrivateContent: after a refused navigation into the private network,
// neither the navigation's result nor a new snapshot shows private content.
func pnaNoPrivateContent(t *testing.T, m *Manager, task, vector string, r NavigateResult) {
	t.Helper()
	if strings.Contains(r.Snapshot, "PRIVATE-SECRET") {
		t.Errorf("%s: browser_navigate's snapshot shows private content:\n%s", vector, r.Snapshot)
	}
	sr := m.Snapshot(context.Background(), task, SnapshotInput{Full: true})
	if strings.Contains(sr.Snapshot, "PRIVATE-SECRET") || sr.Title == "PRIVATE" {
		t.Errorf("%s: the tab shows private content (url %s):\n%s", vector, sr.URL, sr.Snapshot)
	}
}
