package browser

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// userChromium starts a Chromium the way a user would for a CDP override
// (its own profile, a loopback debugging port) and returns its http root.
func userChromium(t *testing.T) (root string, cmd *exec.Cmd) {
	t.Helper()
	path, err := backend.FindChromium("")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	cmd = exec.Command(path, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+dir, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); backend.KillLeftovers(dir) })
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if l := strings.Split(strings.TrimSpace(string(b)), "\n"); err == nil && len(l) == 2 {
			return "http://127.0.0.1:" + l[0], cmd
		}
	}
	t.Fatal("no DevToolsActivePort")
	return "", nil
}

func TestCDPOverrideServesSessionsWithTheGuardOn(t *testing.T) {
	_, ps := manager(t)
	root, user := userChromium(t)
	cfg := config.Default()
	cfg.Browser.CDPURL = root
	ap := netip.MustParseAddrPort(ps.Listener.Addr().String())
	m, warns := New(Options{Config: cfg, Home: t.TempDir(), Resolver: hostResolver{}, AllowAddrPorts: []netip.AddrPort{ap}})
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	defer m.Close()
	ctx := context.Background()
	nr := m.Navigate(ctx, "cdp-task", NavigateInput{URL: ps.url("allowed.test", "/form")})
	if !nr.Success || !strings.Contains(nr.Snapshot, "Sign up") {
		t.Fatalf("navigate over the CDP override: %+v", nr)
	}
	if m.BrowserPID() != 0 {
		t.Errorf("a CDP override must not launch a browser (pid %d)", m.BrowserPID())
	}
	// Not a local backend: the SSRF guard is on for its sessions.
	other, _ := net.Listen("tcp", "127.0.0.1:0")
	defer other.Close()
	r := m.Navigate(ctx, "cdp-task", NavigateInput{URL: "http://" + other.Addr().String() + "/"})
	if r.Success || r.Reason != reason.SSRFPrivate {
		t.Errorf("private URL on a CDP backend: %+v", r)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(user.Process.Pid, 0); err != nil {
		t.Error("closing the Manager closed the user's browser")
	}
}

func TestCDPOverrideToMetadataHostIsRefused(t *testing.T) {
	_, ps := manager(t)
	cfg := config.Default()
	cfg.Browser.CDPURL = "http://169.254.169.254:9222"
	ap := netip.MustParseAddrPort(ps.Listener.Addr().String())
	m, _ := New(Options{Config: cfg, Home: t.TempDir(), Resolver: hostResolver{}, AllowAddrPorts: []netip.AddrPort{ap}})
	defer m.Close()
	r := m.Navigate(context.Background(), "t", NavigateInput{URL: ps.url("allowed.test", "/next")})
	if r.Success || r.Reason != reason.SSRFMetadata {
		t.Errorf("CDP URL on a metadata host: %+v", r)
	}
}
