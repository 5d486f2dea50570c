// Package backend runs Chromium over CDP (github.com/chromedp/chromedp) for the
// browser toolset: one browser process per Local backend, one isolated
// BrowserContext (own cookies, storage, cache, proxy) per session, one tab per
// session. chromedp contexts never leave this package; callers hold a *Local and
// *Tab values with explicit Close methods (STYLE.md §3, house style 10).
package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// ProfileMarker is the prefix of every user-data-dir this package creates
// (under os.TempDir), followed by the owning process id and "-":
// gatehouse-chromium-<pid>-<random>. Chromium passes --user-data-dir to every
// child process, so a process whose command line carries it is ours and the
// pid names its owner; the orphan reaper and the leak tests look for it in
// /proc.
const ProfileMarker = "gatehouse-chromium-"

// DefaultChromiumPath is where Debian's chromium package puts the real binary;
// /usr/bin/chromium is a wrapper script that adds its own flags (DESIGN.md §3).
const DefaultChromiumPath = "/usr/lib/chromium/chromium"

// DefaultHeadlessShellPath is where Debian's chromium-headless-shell package
// puts Chromium's headless shell: the same Chromium (Blink, V8, the network
// stack, site isolation, CDP) without the desktop browser's windows, tab strip
// and per-profile UI services. A new BrowserContext and its first tab cost it
// ~0.4 × the CPU and ~0.6 × the memory of full Chromium's, whose every
// context gets a window (bench/newsession: createTarget ~8 ms vs 135–235 ms,
// usable in ~200 ms vs 600–1,300 ms, at load 33). FindBrowser prefers it for a
// headless browser.
const DefaultHeadlessShellPath = "/usr/lib/chromium/chromium-headless-shell"

// InstallHint is the fix named by a chromium_missing error.
const InstallHint = "install Chromium (Debian/Ubuntu: apt-get install -y chromium), or set browser.executable_path or CHROME_PATH to a Chromium/Chrome binary"

// FindChromium returns the Chromium binary to run, looked up in order:
// configured (browser.executable_path), $CHROME_PATH, DefaultChromiumPath, then
// chromium, chromium-browser, google-chrome, google-chrome-stable and chrome on
// PATH. A configured path or CHROME_PATH that is not an executable file is an
// error (never silently skipped). None found → a chromium_missing *reason.Error
// naming InstallHint.
func FindChromium(configured string) (string, error) {
	for _, src := range []struct{ name, path string }{
		{"browser.executable_path", configured},
		{"CHROME_PATH", os.Getenv("CHROME_PATH")},
	} {
		if src.path == "" {
			continue
		}
		if isExecutable(src.path) {
			return src.path, nil
		}
		return "", reason.New(reason.ChromiumMissing, "",
			fmt.Sprintf("%s is set to %q, which is not an executable file; fix it or %s.", src.name, src.path, InstallHint))
	}
	if isExecutable(DefaultChromiumPath) {
		return DefaultChromiumPath, nil
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", reason.New(reason.ChromiumMissing, "", "Chromium was not found; "+InstallHint+".")
}

// FindBrowser is FindChromium for a browser run headless (headed false) or
// with a window: headless, when neither browser.executable_path nor
// CHROME_PATH is set, Chromium's headless shell (DefaultHeadlessShellPath, then
// chromium-headless-shell on PATH) comes before full Chromium, being the same
// engine at a fraction of the cost per session (see
// DefaultHeadlessShellPath); without it, or headed, FindChromium's order.
// Errors are FindChromium's.
func FindBrowser(configured string, headed bool) (string, error) {
	if headed || configured != "" || os.Getenv("CHROME_PATH") != "" {
		return FindChromium(configured)
	}
	if isExecutable(DefaultHeadlessShellPath) {
		return DefaultHeadlessShellPath, nil
	}
	if p, err := exec.LookPath("chromium-headless-shell"); err == nil {
		return p, nil
	}
	return FindChromium(configured)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Options configures Launch.
type Options struct {
	// ExecPath is the Chromium binary (see FindChromium); required.
	ExecPath string
	// DefaultProxy is the proxy of the browser's default BrowserContext
	// (--proxy-server); sessions get their own per-context proxy. Required: the
	// browser never gets a direct route to the network.
	DefaultProxy string
	// Headed shows a window (browser.headed); default headless.
	Headed bool
	// Logger receives launch notes (the sandbox downgrade); nil discards.
	Logger *slog.Logger
	// Prepare, when set, fills the fresh user-data-dir before Chromium starts
	// (the real-profile copy, profile.go); its error aborts the launch and is
	// returned as is.
	Prepare func(userDataDir string) error
	// Debugf, when set, receives every CDP message sent ("-> {…}") and
	// received ("<- {…}") on the browser connection (profiling, bench/newsession).
	Debugf func(format string, args ...any)
	// DebugDial, when set, makes Chromium open its CDP debugging port on
	// loopback only (127.0.0.1, port chosen by Chromium) instead of the
	// pipe, and this package's own connection is dialed through it (pass an
	// egress guard allowing that loopback port); Local.DebugURL returns the
	// browser's WebSocket URL for a relay (gatehouse browser-node, issue 19).
	// nil: the pipe transport, no port is opened.
	DebugDial DialFunc
	// ExtraFlags are added to Flags' list, a value replacing Flags' own for the
	// same name (experiments: bench/newsession -flag); nil adds none.
	ExtraFlags map[string]any
}

// Flags returns Gatehouse's own Chromium flag list (not chromedp's defaults,
// which turn off site isolation and popup blocking and add enable-automation).
// Every network path is pinned to the egress proxy: --proxy-server with
// --proxy-bypass-list=<-loopback> (loopback goes through the proxy too), QUIC
// off, DNS prefetch and network prediction off, WebRTC limited to proxied TCP
// (no UDP around the proxy), background networking and component updates off.
// sandbox reports whether the setuid/namespace sandbox stays on: as root
// Chromium refuses to start with it, so the caller passes false and logs why.
func Flags(o Options, userDataDir string, sandbox bool) map[string]any {
	f := map[string]any{
		"no-first-run":             true,
		"no-default-browser-check": true,
		"user-data-dir":            userDataDir,
		// Site isolation on, said explicitly (it is the default of both full
		// Chromium and the headless shell; chromedp's defaults turn it off).
		"site-per-process":                       true,
		"proxy-server":                           o.DefaultProxy,
		"proxy-bypass-list":                      "<-loopback>",
		"disable-quic":                           true,
		"dns-prefetch-disable":                   true,
		"no-pings":                               true,
		"force-webrtc-ip-handling-policy":        "disable_non_proxied_udp",
		"webrtc-ip-handling-policy":              "disable_non_proxied_udp",
		"disable-background-networking":          true,
		"disable-component-update":               true,
		"disable-default-apps":                   true,
		"disable-sync":                           true,
		"disable-extensions":                     true,
		"disable-breakpad":                       true,
		"disable-crash-reporter":                 true, // no crashpad handler writing under ~/.config
		"disable-client-side-phishing-detection": true,
		"disable-domain-reliability":             true,
		"disable-hang-monitor":                   true,
		"disable-prompt-on-repost":               true,
		"metrics-recording-only":                 true,
		"password-store":                         "basic",
		"use-mock-keychain":                      true,
		"disable-dev-shm-usage":                  true, // /dev/shm is 64 MB in default containers
		"mute-audio":                             true,
		"hide-scrollbars":                        true,
		"window-size":                            "1280,800",
		// Sessions run in parallel tabs; a background tab must not be throttled.
		"disable-background-timer-throttling":    true,
		"disable-backgrounding-occluded-windows": true,
		"disable-renderer-backgrounding":         true,
		// WebUIOmniboxPopup and WebUIOmniboxAimPopup: every new window (each
		// session's BrowserContext gets one) would load two chrome://omnibox-popup
		// WebUI pages in a renderer of their own, never shown headless: ~100 MB
		// and ~40 % of the CPU a new session costs (bench/newsession).
		// AimEnabled, AimServerEligibilityEnabled and the search engine
		// preconnectors: Chromium 148 fetches www.google.com/async/folae
		// (AI Mode eligibility) and preconnects to the default search
		// engine from every new BrowserContext, through the session's own
		// proxy: traffic no page asked for, counted as the session's
		// (TestProxyCredentialAttributesRequests; seen in a NetLog).
		"disable-features": "Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider," +
			"NetworkPrediction,InterestFeedContentSuggestions,CertificateTransparencyComponentUpdater," +
			"AutofillServerCommunication,PrivacySandboxSettings4,WebUIOmniboxPopup,WebUIOmniboxAimPopup," +
			"AimEnabled,AimServerEligibilityEnabled,SearchEnginePreconnector,SearchEnginePreconnector2,PreconnectToSearch",
	}
	if !o.Headed {
		f["headless"] = "new"
	}
	f["no-sandbox"] = !sandbox
	return f
}

// Local is one Chromium process. It is safe for concurrent use.
type Local struct {
	logger  *slog.Logger
	dataDir string

	allocCtx    context.Context
	allocCancel context.CancelFunc
	browserCtx  context.Context
	cancel      context.CancelFunc

	attaches atomic.Int64 // AttachTab calls (Attaches)
	mu       sync.Mutex
	tabs     map[*Tab]struct{}
	closed   bool
	pid      int
	exited   chan struct{} // closed by Close once Chromium is gone (ends the launch thread's lock)
	remote   bool          // attached over a CDP URL (Connect): not ours to stop
	debugURL string        // the browser's ws:// URL on loopback (Options.DebugDial), else ""
}

// Launch starts Chromium with Flags and waits until it answers over CDP
// (the pipe transport: no debugging port is opened). The process gets
// Pdeathsig=SIGKILL (it dies with us); Close kills every leftover child that
// carries the profile marker and removes the user-data-dir. Errors:
// chromium_missing for a missing binary, browser_failed otherwise.
func Launch(ctx context.Context, o Options) (*Local, error) {
	if o.ExecPath == "" || !isExecutable(o.ExecPath) {
		return nil, reason.New(reason.ChromiumMissing, "", "Chromium was not found; "+InstallHint+".")
	}
	if o.DefaultProxy == "" {
		return nil, errors.New("backend: DefaultProxy is required")
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	setSubreaper()
	startReaper()
	ReapOrphans()
	dir, err := os.MkdirTemp("", ProfileMarker+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, reason.Wrap(reason.BrowserFailed, "", "Could not create the browser profile directory.", err)
	}
	if o.Prepare != nil {
		if err := o.Prepare(dir); err != nil {
			removeAllRetry(dir)
			return nil, err
		}
	}
	sandbox := os.Geteuid() != 0
	if !sandbox {
		// Chromium refuses to run its sandbox as root; the only way to start it
		// as root is --no-sandbox. The egress proxy stays the network boundary,
		// but a renderer exploit is not contained: run Gatehouse as an
		// unprivileged user to keep the sandbox on.
		lg.Warn("browser sandbox disabled: running as root (Chromium cannot sandbox as root); run as an unprivileged user to keep it on")
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(o.ExecPath), chromedp.Flag(OwnerFlag, ownerFlagValue()), deathTie()}
	flags := Flags(o, dir, sandbox)
	for k, v := range o.ExtraFlags {
		flags[k] = v
	}
	var debugURL string
	if o.DebugDial != nil {
		flags["remote-debugging-address"] = "127.0.0.1"
		flags["remote-debugging-port"] = "0"
		opts = append(opts, chromedp.WithDialer(func(ctx context.Context, wsURL string) (chromedp.Transport, error) {
			debugURL = wsURL
			dctx, cancel := context.WithTimeout(ctx, cdpDialTimeout)
			defer cancel()
			return DialCDP(dctx, wsURL, o.DebugDial)
		}))
	}
	for k, v := range flags {
		opts = append(opts, chromedp.Flag(k, v))
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	var copts []chromedp.ContextOption
	if o.Debugf != nil {
		copts = append(copts, chromedp.WithBrowserOption(chromedp.WithBrowserDebugf(o.Debugf)))
	}
	bctx, cancel := chromedp.NewContext(allocCtx, copts...)
	l := &Local{logger: lg, dataDir: dir, allocCtx: allocCtx, allocCancel: allocCancel, browserCtx: bctx, cancel: cancel, tabs: map[*Tab]struct{}{}, exited: make(chan struct{})}
	startErr := make(chan error, 1)
	go startLocked(bctx, startErr, l.exited)
	select {
	case err = <-startErr:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(30 * time.Second):
		err = errors.New("no answer from Chromium within 30 s")
	}
	if err != nil {
		l.Close()
		return nil, reason.Wrap(reason.BrowserFailed, "", "Chromium failed to start: "+firstLine(err.Error()), err)
	}
	if c := chromedp.FromContext(bctx); c != nil && c.Browser != nil {
		if p := c.Browser.Process(); p != nil {
			l.pid = p.Pid
			mainPIDs.Store(p.Pid, true)
		}
	}
	l.debugURL = debugURL
	if err := writeOwner(dir, l.pid); err != nil {
		lg.Warn("browser owner record not written; the orphan reaper cannot identify this browser", "dir", dir, "err", err)
	}
	return l, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// DebugURL returns the browser's CDP WebSocket URL on loopback when it was
// launched with Options.DebugDial, else "".
func (l *Local) DebugURL() string { return l.debugURL }

// UserDataDir returns the profile directory (it carries ProfileMarker).
func (l *Local) UserDataDir() string { return l.dataDir }

// PID returns the browser process id (0 if unknown).
func (l *Local) PID() int { return l.pid }

// Alive reports whether the browser connection is still up.
func (l *Local) Alive() bool {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	return !closed && l.browserCtx.Err() == nil
}

// Close closes every tab and BrowserContext, stops Chromium (gracefully, then
// by context cancellation), kills leftover children carrying the profile
// marker, reaps them, and removes the user-data-dir. It is idempotent and
// returns the first cleanup error.
func (l *Local) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	tabs := l.tabs
	l.tabs = map[*Tab]struct{}{}
	l.mu.Unlock()
	for t := range tabs {
		t.close(false)
	}
	if l.remote {
		// Not our browser: disconnect, never close it.
		l.cancel()
		l.allocCancel()
		close(l.exited)
		return nil
	}
	cctx, ccancel := context.WithTimeout(l.browserCtx, 5*time.Second)
	err := chromedp.Cancel(cctx)
	ccancel()
	l.cancel()
	l.allocCancel()
	KillLeftovers(l.dataDir)
	close(l.exited)
	if l.pid != 0 {
		mainPIDs.Delete(l.pid)
	}
	if rerr := removeAllRetry(l.dataDir); err == nil && rerr != nil {
		err = rerr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, chromedp.ErrInvalidContext) {
		err = nil
	}
	return err
}

func removeAllRetry(dir string) error {
	var err error
	for i := 0; i < 50; i++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// KillLeftovers SIGKILLs every process whose command line carries
// --user-data-dir=dir (Chromium's children outlive a killed parent), reaps those
// that are our children, and repeats until a few passes find none (at most
// 2 s). It never touches a process without that exact argument.
func KillLeftovers(dir string) {
	deadline := time.Now().Add(2 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n := killUsing("--user-data-dir=" + dir); n == 0 {
			quiet++
		} else {
			quiet = 0
		}
		reapZombies()
	}
}

// MarkedProcesses returns the pids of live (non-zombie) processes whose command
// line carries a --user-data-dir made by a Launch in process owner
// (os.TempDir()/ProfileMarker<owner>-…).
func MarkedProcesses(owner int) []int {
	var out []int
	for pid, o := range markedProcs() {
		if o.owner == owner {
			out = append(out, pid)
		}
	}
	return out
}

type marked struct {
	owner int
	dir   string
}

// markedProcs maps each process carrying the profile marker to its owner pid
// and profile directory.
func markedProcs() map[int]marked {
	prefix := "--user-data-dir=" + filepath.Join(os.TempDir(), ProfileMarker)
	out := map[int]marked{}
	forEachProc(func(pid int, args [][]byte) {
		for _, a := range args {
			if rest, ok := bytes.CutPrefix(a, []byte(prefix)); ok {
				ownerStr, _, _ := strings.Cut(string(rest), "-")
				owner, err := strconv.Atoi(ownerStr)
				if err != nil {
					return
				}
				out[pid] = marked{owner: owner, dir: strings.TrimPrefix(string(a), "--user-data-dir=")}
				return
			}
		}
	})
	return out
}

// ReapOrphans runs the orphan reaper with no grace for live owners
// (ReapOrphanDirs): the browsers and profile dirs of Gatehouse processes that
// are gone are removed, identity-checked.
func ReapOrphans() { ReapOrphanDirs(ReapOptions{}) }

func forEachProc(fn func(pid int, args [][]byte)) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		fn(pid, procArgs(b))
	}
}

// procArgs splits a /proc/<pid>/cmdline into its arguments. A process the
// zygote forked (renderers, some utilities) rewrites its command line as one
// space-joined string (setproctitle), so a single argument with spaces is
// split on the spaces: our flags' values (the user-data-dir under
// os.TempDir) carry none.
func procArgs(b []byte) [][]byte {
	args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
	if len(args) == 1 && bytes.IndexByte(args[0], ' ') >= 0 {
		args = bytes.Fields(args[0])
	}
	return args
}

func killUsing(want string) int {
	n := 0
	forEachProc(func(pid int, args [][]byte) {
		for _, a := range args {
			if string(a) == want {
				syscall.Kill(pid, syscall.SIGKILL)
				n++
				return
			}
		}
	})
	return n
}

// Zombies returns the pids of exited, unreaped Chromium children of this
// process (for leak tests: the reaper keeps the list empty).
func Zombies() []int {
	var out []int
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		rp, lp := strings.LastIndexByte(s, ')'), strings.IndexByte(s, '(')
		if rp < 0 || lp < 0 {
			continue
		}
		f := strings.Fields(s[rp+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(self) && strings.Contains(strings.ToLower(s[lp+1:rp]), "chrom") {
			out = append(out, pid)
		}
	}
	return out
}

// mainPIDs holds the pids of running browser main processes: os/exec waits
// for those, so the reaper must never take their exit status.
var mainPIDs sync.Map

var reaperOnce sync.Once

// startReaper reaps, every 500 ms, Chromium processes re-parented to this
// process (the subreaper) that have exited, so no zombie lingers while the
// program runs (a renderer outliving its zygote, a crash handler).
func startReaper() {
	reaperOnce.Do(func() {
		go func() {
			for range time.Tick(500 * time.Millisecond) {
				reapZombies()
			}
		}()
	})
}

// reapZombies waits for zombie children of this process whose name says they
// are Chromium (re-parented to us as subreaper), except browser main processes
// (os/exec waits for those).
func reapZombies() {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		s := string(b)
		rp := strings.LastIndexByte(s, ')')
		lp := strings.IndexByte(s, '(')
		if rp < 0 || lp < 0 || rp+4 > len(s) {
			continue
		}
		comm := s[lp+1 : rp]
		fields := strings.Fields(s[rp+1:])
		if len(fields) < 2 || fields[0] != "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		if ppid != self || !strings.Contains(strings.ToLower(comm), "chrom") {
			continue
		}
		if _, main := mainPIDs.Load(pid); main {
			continue
		}
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}
