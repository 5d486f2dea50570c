package archtest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// TestNoDialBypassesEgress is "exactly one place dials" checked on the
// compiled program rather than on our source text: it builds the call graph
// of the gatehouse command and of the public package (go/ssa, VTA refined
// from CHA) and requires that no call to a connection-opening primitive
// (dialSinks) is reachable from the program's entry points except through
// internal/egress — dependencies included, so a WebSocket library or an
// SDK that dials with its own net.Dialer is caught even though our source
// never names net.Dial. Each path that passes the analysis only because a
// field is always set by our code is listed in dialAllowed with its reason,
// and that reason is checked too (the http.Transport and http.Client rules
// below).
//
// How the graph is made, and what that means:
//   - Entry points: main.main of cmd/gatehouse, every package initializer,
//     every exported function and method of the module root package (the
//     embedding API), and every function a body-less package may call back
//     (see below).
//   - Function bodies are built for the packages that can reach a dial: a
//     package that names a Dial identifier in its source (outside the sink
//     packages net and crypto/tls), and every package that imports one,
//     directly or not. The rest (parsers, sqlite's transpiled C, cobra, …)
//     are typed from export data without bodies, which keeps the test within
//     seconds. They cannot call a dial themselves; what they can do is call
//     back into code that can, so every function value and every method of a
//     type converted to an interface in a built package is an extra entry
//     point (over-approximation: it finds more paths, never fewer).
//   - internal/egress is the barrier: paths are not followed into it.
//   - Dynamic calls are resolved by VTA, which is flow-insensitive: a
//     library's fallback ("if the caller gave no dialer, use net.Dialer")
//     is found whatever the caller passes. Such fallbacks are either removed
//     from the program (by not using the library) or allowed in dialAllowed
//     together with a check that the field is always set.
func TestNamesDial(t *testing.T) {
	for src, want := range map[string]bool{
		"package p; var d net.Dialer":                              true,
		"package p; func f() { net.Dial(\"tcp\", a) }":             true,
		"package p; var t = http.Transport{DialContext: f}":        true,
		"package p; func f() { syscall.Connect(fd, sa) }":          true,
		"package p; // net.Dial in a comment":                      false,
		"package p; var s = \"Dial\"":                              false,
		"package p; type Dialog struct{}":                          false,
		"package p; func f(c driver.Connector) { c.Connect(ctx) }": false,
	} {
		if got := namesDial([]byte(src)); got != want {
			t.Errorf("namesDial(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestNoDialBypassesEgress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program's call graph (~20 s)")
	}
	if raceEnabled {
		// The analysis is single-threaded code of x/tools, four times
		// slower and three times larger under the race detector (34 s of
		// CPU and 1.8 GB instead of 8 s and 0.6 GB): run it in a plain
		// test binary of this package.
		cmd := exec.Command("go", "test", "-count=1", "-run", "^TestNoDialBypassesEgress$", ".")
		cmd.Dir = filepath.Join(root(t), "internal", "archtest")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test (without -race): %v\n%s", err, out)
		}
		return
	}
	start := time.Now()
	prog, roots := loadProgram(t)
	t.Logf("loaded and built SSA in %v", time.Since(start).Round(time.Millisecond))
	fns := ssautil.AllFunctions(prog)
	cg := vta.CallGraph(fns, cha.CallGraph(prog))
	t.Logf("call graph: %d nodes, %v", len(cg.Nodes), time.Since(start).Round(time.Millisecond))

	reach, dials := walk(prog, cg, roots)
	// The analysis is alive: it sees the program call egress's dial (the
	// direct backend's client, the CDP WebSocket). A loader that lost the
	// bodies would pass vacuously otherwise.
	if !reach.barrier["(*"+barrier+".Guard).DialContext"] || !reach.barrier["(*"+barrier+".Guard).Client"] {
		t.Fatalf("the call graph never reaches egress.Guard.DialContext and Guard.Client; the analysis is broken (egress calls seen: %v)", reach.barrier)
	}
	var findings []string
	for _, d := range dials {
		what := fmt.Sprintf("%s dials (%s) without passing through internal/egress", d.caller.Func, d.sink)
		ex, ok := dialAllowed[d.caller.Func.String()]
		if ok, broken := reach.excused(ex, ok, what); !ok {
			findings = append(findings, cmp.Or(broken, what)+"; reached by:\n\t"+pathTo(reach.parent, d.caller))
		}
	}
	findings = append(findings, checkHTTPDefaults(reach)...)
	sort.Strings(findings)
	findings = slices.Compact(findings)
	for _, f := range findings {
		t.Error(f)
	}
	t.Logf("%d functions reachable outside internal/egress; %d findings; %v", len(reach.fns), len(findings), time.Since(start).Round(time.Millisecond))
}

// dialSinks are the functions that open a network connection. A call to
// one from outside the packages net and crypto/tls is a dial.
var dialSinks = map[string]bool{
	"net.Dial": true, "net.DialTimeout": true, "net.DialTCP": true, "net.DialUDP": true,
	"net.DialIP": true, "net.DialUnix": true,
	"(*net.Dialer).Dial": true, "(*net.Dialer).DialContext": true,
	"crypto/tls.Dial": true, "crypto/tls.DialWithDialer": true,
	"(*crypto/tls.Dialer).Dial": true, "(*crypto/tls.Dialer).DialContext": true,
	"syscall.Connect": true, "golang.org/x/sys/unix.Connect": true,
}

// exception is why a function reached without passing through
// internal/egress may dial (dialAllowed) or use net/http's defaults
// (httpDefaultsAllowed). holds, when set, checks that the reason is true of
// this program and returns what breaks it ("" when it holds).
type exception struct {
	why   string
	holds func(p *reachable) string
}

// dialAllowed are the functions allowed to call a dial sink although they
// are reached without passing through internal/egress.
var dialAllowed = map[string]exception{
	"(*net/http.Transport).dial": {why: "net/http's Transport dials with Transport.DialContext when it is set and " +
		"with a zero net.Dialer when it is not; VTA also links its DialContext call to every function any " +
		"Transport stores there. Gatehouse's one Transport is egress.Guard.Client's (DialContext = " +
		"Guard.DialContext); checkHTTPDefaults proves no other Transport is made, no Client lacks a " +
		"Transport, and neither http.DefaultTransport nor http.DefaultClient is read"},
	"net/http.defaultTransportDialContext": {why: "builds http.DefaultTransport's dialer at init; it dials only " +
		"through http.DefaultTransport, which checkHTTPDefaults proves unused"},
	"(*net/http.http2Transport).dialTLSWithContext": {why: "the HTTP/2 transport bundled in net/http dials " +
		"itself only through a dialing connection pool, i.e. when used on its own; net/http configures it " +
		"for an http.Transport (ForceAttemptHTTP2, set by egress) with http2noDialClientConnPool, so its " +
		"connections are the ones Transport.dial made through egress"},
	"github.com/modelcontextprotocol/go-sdk/oauthex.newDiscoveryTransport": {why: "the MCP SDK builds, at init, " +
		"the transport of its OAuth metadata discovery client with a net.Dialer of its own; that client is " +
		"made only by oauthex.newDiscoveryClient, which Gatehouse never reaches (its MCP client, " +
		"web/provider/vendors/mcp.go, sets no OAuth handler)",
		holds: notReached("github.com/modelcontextprotocol/go-sdk/oauthex.newDiscoveryClient")},
	"(*github.com/gorilla/websocket.Dialer).DialContext$4": {why: "gorilla/websocket (the CDP WebSocket " +
		"client, backend.DialCDP) dials with a net.Dialer of its own only when Dialer.NetDialContext and " +
		"NetDial are nil; every websocket.Dialer Gatehouse makes sets NetDialContext (the egress guard's " +
		"dial), websocket.DefaultDialer (which sets none) is not read outside the library, and a nil " +
		"*Dialer (the library's nilDialer) is never used (DialCDP calls a local Dialer's method)",
		holds: gorillaDialers},
	"(github.com/gorilla/websocket.proxy_direct).Dial": {why: "gorilla/websocket's proxy path, taken only " +
		"when Dialer.Proxy returns a proxy URL; every websocket.Dialer Gatehouse makes leaves Proxy nil, " +
		"and websocket.DefaultDialer (Proxy: ProxyFromEnvironment) is not read outside the library",
		holds: gorillaDialers},
	"github.com/redis/go-redis/v9.NewDialer$1": {why: "go-redis (the shared state, internal/state) dials " +
		"with its own net.Dialer only through its default Options.Dialer (set by Options.init when Dialer is " +
		"nil) and through the maintenance-notification handler (optionsAdapter.NewDialer); every redis.Options " +
		"Gatehouse makes sets Dialer (the egress guard's dial, state.dialer) and turns maintenance " +
		"notifications off",
		holds: redisDialers},
	"github.com/redis/go-redis/v9.masterReplicaDialer$1": {why: "go-redis' Sentinel failover dialer, set only " +
		"by NewFailoverClient / NewFailoverClusterClient, which Gatehouse never calls (internal/state makes " +
		"one plain Client)",
		holds: redisDialers},
}

// redisDialers checks the reasons of the go-redis entries: every
// redis.Options made outside the library sets Dialer and
// MaintNotificationsConfig, and no failover client is reachable.
func redisDialers(r *reachable) string {
	const pkg = "github.com/redis/go-redis/v9"
	var bad []string
	r.allocs(pkg+".Options", func(fn *ssa.Function, a *ssa.Alloc) {
		if pkgPath(fn) == pkg {
			return
		}
		if !storesField(a, "Dialer") || !storesField(a, "MaintNotificationsConfig") {
			bad = append(bad, fmt.Sprintf("%s makes a redis.Options without Dialer or MaintNotificationsConfig", fn))
		}
	})
	for _, fn := range []string{pkg + ".NewFailoverClient", pkg + ".NewFailoverClusterClient"} {
		if msg := notReached(fn)(r); msg != "" {
			bad = append(bad, msg)
		}
	}
	return strings.Join(bad, "; ")
}

// gorillaDialers checks the reasons of the gorilla/websocket entries: every
// websocket.Dialer made outside the library sets NetDialContext and leaves
// Proxy unset, and nothing outside the library reads DefaultDialer.
func gorillaDialers(r *reachable) string {
	const pkg = "github.com/gorilla/websocket"
	var bad []string
	r.allocs(pkg+".Dialer", func(fn *ssa.Function, a *ssa.Alloc) {
		if pkgPath(fn) == pkg {
			return
		}
		if !storesField(a, "NetDialContext") || storesField(a, "Proxy") {
			bad = append(bad, fmt.Sprintf("%s makes a websocket.Dialer without NetDialContext or with a Proxy", fn))
		}
	})
	for fn := range r.fns {
		if pkgPath(fn) == pkg {
			continue
		}
		for _, b := range fn.Blocks {
			for _, ins := range b.Instrs {
				for _, op := range ins.Operands(nil) {
					if g, ok := (*op).(*ssa.Global); ok && g.Pkg != nil && g.Pkg.Pkg.Path() == pkg && g.Name() == "DefaultDialer" {
						bad = append(bad, fmt.Sprintf("%s uses websocket.DefaultDialer", fn))
					}
				}
			}
		}
	}
	return strings.Join(bad, "; ")
}

// httpDefaultsAllowed are the functions outside internal/egress allowed to
// make an http.Transport or an http.Client without a Transport, or to read
// http.DefaultClient/http.DefaultTransport.
var httpDefaultsAllowed = map[string]exception{
	"github.com/modelcontextprotocol/go-sdk/oauthex.init": {why: "passes http.DefaultTransport to " +
		"newDiscoveryTransport (see dialAllowed), which clones it; used only by the discovery client",
		holds: notReached("github.com/modelcontextprotocol/go-sdk/oauthex.newDiscoveryClient")},
	"(*github.com/modelcontextprotocol/go-sdk/mcp.StreamableClientTransport).Connect": {why: "falls back to " +
		"http.DefaultClient when StreamableClientTransport.HTTPClient is nil; every one Gatehouse makes " +
		"(web/provider/vendors/mcp.go) carries an egress client",
		holds: setsField("github.com/modelcontextprotocol/go-sdk/mcp.StreamableClientTransport", "HTTPClient")},
	"(*golang.org/x/oauth2.Transport).base": {why: "an oauth2.Transport without Base uses " +
		"http.DefaultTransport; Gatehouse makes no oauth2.Transport (the path to it is VTA's " +
		"over-approximation of an http.RoundTripper call)",
		holds: noAlloc("golang.org/x/oauth2.Transport")},
	"golang.org/x/oauth2/internal.ContextClient": {why: "oauth2 fetches tokens with the client in the " +
		"context or http.DefaultClient; it runs only under an oauth2.Transport, and Gatehouse makes none",
		holds: noAlloc("golang.org/x/oauth2.Transport")},
}

// reachable is what the walk found: every function reached outside
// internal/egress, with the node it was first reached from.
type reachable struct {
	fns     map[*ssa.Function]*callgraph.Node
	parent  map[*callgraph.Node]*callgraph.Node
	barrier map[string]bool // the internal/egress functions called from outside it
}

func notReached(fn string) func(*reachable) string {
	return func(r *reachable) string {
		for f, n := range r.fns {
			if f.String() == fn {
				return fn + " is reachable:\n\t" + pathTo(r.parent, n)
			}
		}
		return ""
	}
}

// allocs calls f for each allocation of the named struct type in a
// reachable function.
func (r *reachable) allocs(typ string, f func(fn *ssa.Function, a *ssa.Alloc)) {
	for fn := range r.fns {
		for _, b := range fn.Blocks {
			for _, ins := range b.Instrs {
				if a, ok := ins.(*ssa.Alloc); ok && namedType(a.Type()) == typ {
					f(fn, a)
				}
			}
		}
	}
}

func setsField(typ, field string) func(*reachable) string {
	return func(r *reachable) string {
		var bad []string
		r.allocs(typ, func(fn *ssa.Function, a *ssa.Alloc) {
			if !storesField(a, field) {
				bad = append(bad, fmt.Sprintf("%s makes a %s without %s", fn, typ, field))
			}
		})
		return strings.Join(bad, "; ")
	}
}

func noAlloc(typ string) func(*reachable) string {
	return func(r *reachable) string {
		var bad []string
		r.allocs(typ, func(fn *ssa.Function, _ *ssa.Alloc) { bad = append(bad, fmt.Sprintf("%s makes a %s", fn, typ)) })
		return strings.Join(bad, "; ")
	}
}

// excused reports whether ex lifts a finding, and a finding when its
// reason does not hold.
func (r *reachable) excused(ex exception, ok bool, what string) (bool, string) {
	if !ok {
		return false, ""
	}
	if ex.holds != nil {
		if broken := ex.holds(r); broken != "" {
			return false, fmt.Sprintf("%s: the allowance (%s) no longer holds: %s", what, ex.why, broken)
		}
	}
	return true, ""
}

// sinkPkgs hold the dial sinks; their bodies are not needed (a call into
// them is judged by the sink it names) and their internal dials (the DNS
// resolver's) are theirs.
var sinkPkgs = map[string]bool{"net": true, "crypto/tls": true, "syscall": true, "golang.org/x/sys/unix": true}

func isSink(fn *ssa.Function) bool {
	return dialSinks[strings.TrimSuffix(strings.TrimSuffix(fn.String(), "$bound"), "$thunk")]
}

func pkgPath(fn *ssa.Function) string {
	if fn.Pkg != nil {
		return fn.Pkg.Pkg.Path()
	}
	if o := fn.Origin(); o != nil && o.Pkg != nil {
		return o.Pkg.Pkg.Path()
	}
	if obj := fn.Object(); obj != nil && obj.Pkg() != nil {
		return obj.Pkg().Path()
	}
	return ""
}

var barrier = mod + "/internal/egress"

// walk follows the call graph from roots, never into internal/egress, and
// returns every function reached and each call of a dial sink.
// dial is a call of sink by caller.Func, reached outside internal/egress.
type dial struct {
	caller *callgraph.Node
	sink   *ssa.Function
}

func walk(prog *ssa.Program, cg *callgraph.Graph, roots []*ssa.Function) (*reachable, []dial) {
	parent := map[*callgraph.Node]*callgraph.Node{}
	seen := map[*callgraph.Node]bool{}
	var queue []*callgraph.Node
	for _, r := range roots {
		n := cg.Nodes[r]
		if n == nil || seen[n] || isSink(r) || pkgPath(r) == barrier {
			continue
		}
		seen[n] = true
		queue = append(queue, n)
	}
	reach := map[*ssa.Function]*callgraph.Node{}
	reachedBarrier := map[string]bool{}
	seenT := map[types.Type]bool{}
	var findings []dial
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		reach[n.Func] = n
		// Calls made from code without a body are not in the graph:
		// what n hands to such code counts as called from n.
		callees := []*callgraph.Node{}
		for _, e := range n.Out {
			callees = append(callees, e.Callee)
		}
		for _, f := range escapes(prog, n.Func, seenT) {
			if c := cg.Nodes[f]; c != nil {
				callees = append(callees, c)
			}
		}
		for _, c := range callees {
			if isSink(c.Func) {
				p := pkgPath(n.Func)
				if p == "net" || p == "crypto/tls" {
					continue
				}
				findings = append(findings, dial{caller: n, sink: c.Func})
				continue
			}
			if pkgPath(c.Func) == barrier {
				reachedBarrier[strings.TrimSuffix(c.Func.String(), "$bound")] = true
				continue
			}
			if seen[c] {
				continue
			}
			seen[c] = true
			parent[c] = n
			queue = append(queue, c)
		}
	}
	return &reachable{fns: reach, parent: parent, barrier: reachedBarrier}, findings
}

func pathTo(parent map[*callgraph.Node]*callgraph.Node, n *callgraph.Node) string {
	var p []string
	for ; n != nil && len(p) < 40; n = parent[n] {
		p = append(p, n.Func.String())
	}
	slices.Reverse(p)
	return strings.Join(p, "\n\t→ ")
}

// checkHTTPDefaults is the condition of dialAllowed's net/http entry: in
// the functions reached outside internal/egress, no http.Transport is made
// (its DialContext would not be egress's), no http.Client is made without
// setting its Transport (it would use http.DefaultTransport), and
// http.DefaultClient and http.DefaultTransport are not read (net/http's
// helpers http.Get, http.Post, … read them and are reported through that).
func checkHTTPDefaults(reach *reachable) []string {
	var out []string
	for fn, n := range reach.fns {
		if fn.Blocks == nil {
			continue
		}
		for _, b := range fn.Blocks {
			for _, ins := range b.Instrs {
				var what string
				switch v := ins.(type) {
				case *ssa.Alloc:
					switch namedType(v.Type()) {
					case "net/http.Transport":
						what = "makes an http.Transport (its dials would not go through egress)"
					case "net/http.Client":
						if !storesField(v, "Transport") {
							what = "makes an http.Client without a Transport (it would use http.DefaultTransport)"
						}
					}
				case *ssa.UnOp:
					if g, ok := v.X.(*ssa.Global); ok && g.Pkg != nil && g.Pkg.Pkg.Path() == "net/http" &&
						(g.Name() == "DefaultClient" || g.Name() == "DefaultTransport") {
						what = "reads http." + g.Name()
					}
				}
				if what == "" {
					continue
				}
				if pkgPath(fn) == "net/http" && !isHTTPHelper(fn) {
					// net/http's own fallbacks (Client.transport's
					// DefaultTransport when Transport is nil) are
					// covered by the Client rule above.
					continue
				}
				what = fmt.Sprintf("%s %s outside internal/egress", fn, what)
				ex, ok := httpDefaultsAllowed[fn.String()]
				if ok, broken := reach.excused(ex, ok, what); !ok {
					out = append(out, cmp.Or(broken, what)+"; reached by:\n\t"+pathTo(reach.parent, n))
				}
			}
		}
	}
	return out
}

// isHTTPHelper reports the package-level helpers of net/http that send
// with http.DefaultClient.
func isHTTPHelper(fn *ssa.Function) bool {
	if fn.Signature.Recv() != nil {
		return false
	}
	switch fn.Name() {
	case "Get", "Head", "Post", "PostForm":
		return true
	}
	return false
}

func namedType(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// storesField reports whether some store writes field name of the struct
// that alloc allocates, or of the composite literal copied into it whole
// (d := T{…} builds the literal in an Alloc of its own, then copies it).
func storesField(alloc *ssa.Alloc, name string) bool {
	for _, r := range *alloc.Referrers() {
		if st, ok := r.(*ssa.Store); ok && st.Addr == alloc {
			if ld, ok := st.Val.(*ssa.UnOp); ok && ld.Op == token.MUL {
				if src, ok := ld.X.(*ssa.Alloc); ok && src != alloc && storesField(src, name) {
					return true
				}
			}
		}
		fa, ok := r.(*ssa.FieldAddr)
		if !ok {
			continue
		}
		st := fa.X.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct)
		if st.Field(fa.Field).Name() != name {
			continue
		}
		for _, rr := range *fa.Referrers() {
			if s, ok := rr.(*ssa.Store); ok && s.Addr == fa {
				return true
			}
		}
	}
	return false
}

type listedPkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Standard   bool
}

// dialIdent is how code that can dial names it: net.Dial…, a Dialer and
// its Dial/DialContext, tls.Dial…, a DialContext or DialTLS… field, and
// syscall/unix Connect (matched as the identifier after those packages).
var dialIdent = regexp.MustCompile(`^Dial(er|Context|TCP|UDP|IP|Unix|Timeout|WithDialer|TLS\w*)?$`)

// namesDial reports whether Go source src names a dial in code (comments
// and strings are not code).
func namesDial(src []byte) bool {
	var sc scanner.Scanner
	fset := token.NewFileSet()
	sc.Init(fset.AddFile("", fset.Base(), len(src)), src, nil, 0)
	var prev, prev2 string
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			return false
		}
		if tok == token.IDENT {
			if dialIdent.MatchString(lit) || lit == "Connect" && prev == "." && (prev2 == "syscall" || prev2 == "unix") {
				return true
			}
		}
		prev2, prev = prev, lit
		if tok == token.PERIOD {
			prev = "."
		}
	}
}

// loadProgram loads the program's packages (bodies only where a dial can
// be reached, see TestNoDialBypassesEgress), builds their SSA and returns
// the entry points.
func loadProgram(t *testing.T) (*ssa.Program, []*ssa.Function) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json", "./cmd/gatehouse", ".")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var all []listedPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		all = append(all, p)
	}
	// A package dials itself when its source names a dial (sink packages
	// excluded: their functions are the sinks).
	body := map[string]bool{}
	for _, p := range all {
		if sinkPkgs[p.ImportPath] {
			continue
		}
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if namesDial(b) {
				body[p.ImportPath] = true
				break
			}
		}
	}
	// … and so can every package that imports one (go list -deps lists
	// dependencies before their importers).
	for _, p := range all {
		if sinkPkgs[p.ImportPath] {
			continue
		}
		for _, imp := range p.Imports {
			if body[imp] {
				body[p.ImportPath] = true
			}
		}
	}
	body[mod] = true
	body[mod+"/cmd/gatehouse"] = true
	var patterns []string
	for _, p := range all {
		if body[p.ImportPath] {
			patterns = append(patterns, p.ImportPath)
		}
	}
	cfg := &packages.Config{Mode: packages.LoadSyntax, Dir: root(t)}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		t.Fatalf("%d package load errors", n)
	}
	prog, ssaPkgs := ssautil.Packages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	t.Logf("%d of %d packages built with bodies: %s", len(patterns), len(all), strings.Join(patterns, " "))

	var roots []*ssa.Function
	for _, p := range prog.AllPackages() {
		if f := p.Func("init"); f != nil {
			roots = append(roots, f)
		}
	}
	for _, p := range ssaPkgs {
		if p == nil {
			continue
		}
		switch p.Pkg.Path() {
		case mod + "/cmd/gatehouse":
			roots = append(roots, p.Func("main"))
		case mod:
			for _, m := range p.Members {
				if f, ok := m.(*ssa.Function); ok && f.Object() != nil && f.Object().Exported() {
					roots = append(roots, f)
				}
				if ty, ok := m.(*ssa.Type); ok && ty.Object().Exported() {
					roots = append(roots, methodsOf(prog, ty.Type())...)
					roots = append(roots, methodsOf(prog, types.NewPointer(ty.Type()))...)
				}
			}
		}
	}
	return prog, roots
}

// escapes returns the functions that code without a body (a package loaded
// from export data, or the runtime) may call once fn has run: every
// function fn uses as a value, and every method of a type fn converts to
// an interface.
func escapes(prog *ssa.Program, fn *ssa.Function, seenT map[types.Type]bool) []*ssa.Function {
	var out []*ssa.Function
	for _, b := range fn.Blocks {
		for _, ins := range b.Instrs {
			if mi, ok := ins.(*ssa.MakeInterface); ok && !seenT[mi.X.Type()] {
				seenT[mi.X.Type()] = true
				out = append(out, methodsOf(prog, mi.X.Type())...)
			}
			var ops [8]*ssa.Value
			for i, op := range ins.Operands(ops[:0]) {
				if call, ok := ins.(ssa.CallInstruction); ok && i == 0 && !call.Common().IsInvoke() {
					continue // the callee of a static call is no escaping value
				}
				if op == nil {
					continue
				}
				if f, ok := (*op).(*ssa.Function); ok {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func methodsOf(prog *ssa.Program, t types.Type) []*ssa.Function {
	if types.IsInterface(t) {
		return nil
	}
	if n, ok := t.(*types.Named); ok && n.TypeParams().Len() > 0 && n.TypeArgs().Len() == 0 {
		return nil
	}
	var out []*ssa.Function
	ms := prog.MethodSets.MethodSet(t)
	for i := 0; i < ms.Len(); i++ {
		if f := prog.MethodValue(ms.At(i)); f != nil {
			out = append(out, f)
		}
	}
	return out
}
