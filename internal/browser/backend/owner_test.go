package backend_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// TestOwnerHelperProcess is not a test: run by the tests below as a separate
// Gatehouse process (GATEHOUSE_OWNER_HELPER=1) that launches Chromium, opens a
// session tab, prints "READY <user-data-dir> <chromium pid>" and waits to be
// killed.
func TestOwnerHelperProcess(t *testing.T) {
	if os.Getenv("GATEHOUSE_OWNER_HELPER") != "1" {
		t.Skip("helper process only")
	}
	path, err := backend.FindChromium("")
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	g := egress.New(egress.Options{Gate: urlsafe.Options{AllowPrivate: true}})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "helper", Guard: g, AllowPrivateFromPublic: true})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	if os.Getenv("GATEHOUSE_OWNER_NO_DEATHTIE") == "1" {
		// A browser whose death tie failed: started like Launch starts it (our
		// flags, the owner flag, the owner record) but over a debugging port
		// and without Pdeathsig, so it outlives this process.
		dir, pid, err := backend.LaunchUntiedForTest(path, p.URL(), os.Getenv("GATEHOUSE_OWNER_ROOT"))
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
		fmt.Printf("READY %s %d\n", dir, pid)
		select {}
	}
	l, err := backend.Launch(context.Background(), backend.Options{ExecPath: path, DefaultProxy: p.URL()})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	if _, err := l.NewTab(context.Background(), backend.TabOptions{ProxyURL: p.URL()}); err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	fmt.Printf("READY %s %d\n", l.UserDataDir(), l.PID())
	select {}
}

// startOwner runs the helper process and returns it with its profile dir and
// Chromium pid.
func startOwner(t *testing.T, noDeathTie bool, root string) (*exec.Cmd, string, int) {
	t.Helper()
	browser(t) // skip like the other tests when Chromium is missing
	cmd := exec.Command(os.Args[0], "-test.run=^TestOwnerHelperProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), "GATEHOUSE_OWNER_HELPER=1")
	if noDeathTie {
		cmd.Env = append(cmd.Env, "GATEHOUSE_OWNER_NO_DEATHTIE=1", "GATEHOUSE_OWNER_ROOT="+root)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "READY ") || strings.HasPrefix(sc.Text(), "ERR ") {
				lines <- sc.Text()
				return
			}
		}
		close(lines)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(60 * time.Second):
		t.Fatal("helper did not start")
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "READY" {
		t.Fatalf("helper: %q", line)
	}
	pid, _ := strconv.Atoi(f[2])
	return cmd, f[1], pid
}

// usersOf counts live (non-zombie) processes whose argv carries
// --user-data-dir=dir.
func usersOf(dir string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(st), ')'); i < 0 || len(st) < i+3 || st[i+2] == 'Z' {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		for _, a := range strings.Split(string(b), "\x00") {
			if a == "--user-data-dir="+dir {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func waitUntil(d time.Duration, ok func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(25 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

func TestOwnerRecordAndArgvMarker(t *testing.T) {
	l := browser(t)
	rec, err := backend.ReadOwner(l.UserDataDir())
	if err != nil {
		t.Fatal(err)
	}
	if rec.OwnerPID != os.Getpid() || rec.ChromiumPID != l.PID() || rec.OwnerStart == 0 || rec.ChromiumStart == 0 {
		t.Errorf("owner record: %+v", rec)
	}
	st, _ := os.Stat(filepath.Join(l.UserDataDir(), backend.OwnerFile))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("owner record mode %v", st.Mode())
	}
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(l.PID()) + "/cmdline")
	want := fmt.Sprintf("--%s=%d:%d", backend.OwnerFlag, rec.OwnerPID, rec.OwnerStart)
	if !strings.Contains(string(b), want+"\x00") {
		t.Errorf("browser argv lacks %s", want)
	}
	// A sweep never touches this process's own browser.
	res := backend.ReapOrphanDirs(backend.ReapOptions{Grace: time.Nanosecond})
	for _, d := range res.Removed {
		if d == l.UserDataDir() {
			t.Fatal("the reaper removed a live owner's own dir")
		}
	}
	if len(usersOf(l.UserDataDir())) == 0 {
		t.Fatal("the reaper killed our own browser")
	}
}

// A SIGKILLed owner leaves no Chromium behind (Pdeathsig on the launch
// thread, the CDP pipe's EOF); the next sweep removes its profile dir.
func TestSIGKILLedOwnerLeavesNoBrowser(t *testing.T) {
	cmd, dir, pid := startOwner(t, false, "")
	if len(usersOf(dir)) == 0 || pid == 0 {
		t.Fatal("helper's Chromium not found")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !waitUntil(5*time.Second, func() bool { return len(usersOf(dir)) == 0 }) {
		t.Fatalf("Chromium of a SIGKILLed owner still runs: %v", usersOf(dir))
	}
	res := backend.ReapOrphanDirs(backend.ReapOptions{})
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("dead owner's dir not removed: %+v", res)
	}
}

// A SIGKILLed owner whose browser survived (death tie off, as if it failed)
// is reaped by a fresh process, which leaves alone a decoy Chromium without
// our marks: one with its own profile dir, and one whose dir has our name
// prefix but no owner record.
func TestFreshProcessReapsOrphanNotDecoys(t *testing.T) {
	// The orphan and the prefixed decoy live under a root of this test, so the
	// sweeps other test processes run at their launches (os.TempDir()) do not
	// race this one.
	root := t.TempDir()
	cmd, dir, chromePID := startOwner(t, true, root)
	path, _ := backend.FindChromium("")
	decoy := func(udd string) *exec.Cmd {
		c := exec.Command(path, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--user-data-dir="+udd, "--remote-debugging-port=0", "about:blank")
		// Its own process group, so cleanup ends the decoy's helper
		// processes too (they write into udd until they exit, which made the
		// TempDir removal fail now and then).
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			c.Wait()
			deadline := time.Now().Add(5 * time.Second)
			for syscall.Kill(-c.Process.Pid, 0) == nil && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
		})
		return c
	}
	userDir := t.TempDir()
	d1 := decoy(userDir)
	prefixed := filepath.Join(root, backend.ProfileMarker+"999999999-decoy")
	os.MkdirAll(prefixed, 0o700)
	t.Cleanup(func() { os.RemoveAll(prefixed) })
	d2 := decoy(prefixed)
	if !waitUntil(30*time.Second, func() bool { return len(usersOf(userDir)) > 0 && len(usersOf(prefixed)) > 0 }) {
		t.Fatal("decoys did not start")
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(300 * time.Millisecond)
	if len(usersOf(dir)) == 0 {
		t.Skip("Chromium exited with its owner even without Pdeathsig (the CDP pipe's EOF ended it): no orphan to reap")
	}
	// The fresh process is this one: it does not own the helper's dir.
	res := backend.ReapOrphanDirs(backend.ReapOptions{Root: root})
	if left := usersOf(dir); len(left) != 0 {
		t.Errorf("orphan processes left: %v (result %+v)", left, res)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("orphan dir left: %s", dir)
	}
	found := false
	for _, p := range res.Killed {
		found = found || p == chromePID
	}
	if !found {
		t.Errorf("the orphan browser %d was not among the killed %v", chromePID, res.Killed)
	}
	for _, c := range []*exec.Cmd{d1, d2} {
		if err := c.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("decoy %d was killed", c.Process.Pid)
		}
	}
	if len(usersOf(userDir)) == 0 || len(usersOf(prefixed)) == 0 {
		t.Error("a decoy's processes were killed")
	}
	if _, err := os.Stat(prefixed); err != nil {
		t.Error("the prefixed decoy's dir (no owner record, in use) was removed")
	}
}
