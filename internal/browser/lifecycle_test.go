package browser

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/browser/lifespec"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

func TestVectorInactivityAndOrphan(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.inactivity_and_orphan", 5) {
		var in map[string]*int
		var want struct {
			Inactivity int `json:"inactivity_s"`
			Grace      int `json:"orphan_grace_s"`
			Cycles     int `json:"reap_every_cycles"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		// Through the real config loader (its floor) and the lifecycle's own.
		yaml := "browser: {}\n"
		if n := in["browser.inactivity_timeout"]; n != nil {
			yaml = fmt.Sprintf("browser:\n  inactivity_timeout: %d\n", *n)
		}
		cfg := loadConfig(t, yaml)
		m := &Manager{cfg: cfg}
		idle := m.idleTimeout()
		if got := lifespec.InactivityTimeout(in["browser.inactivity_timeout"]); got != idle {
			t.Errorf("%v: InactivityTimeout %v, config path %v", in, got, idle)
		}
		if int(idle.Seconds()) != want.Inactivity || int(lifespec.OrphanGrace(idle).Seconds()) != want.Grace || lifespec.ReapEveryCycles(lifespec.JanitorTick) != want.Cycles {
			t.Errorf("%v: inactivity %v grace %v cycles %d, want %+v", in, idle, lifespec.OrphanGrace(idle), lifespec.ReapEveryCycles(lifespec.JanitorTick), want)
		}
	}
	if lifespec.ReapEveryCycles(100*time.Millisecond) != 3000 || lifespec.ReapEveryCycles(0) != 10 {
		t.Error("ReapEveryCycles scales with the tick")
	}
}

// syncBuf is a goroutine-safe log sink.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ownManager starts a Manager of its own (own Chromium) with lifecycle
// options, for tests that reap or stop the browser.
func ownManager(t *testing.T, lo LifecycleOptions) (*Manager, *syncBuf) {
	t.Helper()
	manager(t) // skips or fails like the shared tests when Chromium is missing
	logs := &syncBuf{}
	m, warns := New(Options{Config: config.Default(), Home: t.TempDir(), Resolver: hostResolver{}, Lifecycle: lo,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m, logs
}

// procsWithDir counts live processes whose command line carries
// --user-data-dir=dir.
func procsWithDir(dir string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && st[i+2] == 'Z' {
			continue
		}
		args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
		if len(args) == 1 {
			args = bytes.Fields(args[0]) // a zygote child's space-joined command line
		}
		for _, a := range args {
			if string(a) == "--user-data-dir="+dir {
				n++
				break
			}
		}
	}
	return n
}

func waitFor(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestJanitorReapThenSessionExpiredThenNavigate(t *testing.T) {
	_, ps := manager(t)
	m, logs := ownManager(t, LifecycleOptions{Tick: 100 * time.Millisecond, Idle: 400 * time.Millisecond})
	ctx := context.Background()
	task := "idle-task"
	nr := m.Navigate(ctx, task, NavigateInput{URL: ps.url("allowed.test", "/form")})
	if !nr.Success {
		t.Fatalf("navigate: %+v", nr)
	}
	ref := refOf(t, nr.Snapshot, "button", "Send")
	m.mu.Lock()
	dir := m.local.UserDataDir()
	m.mu.Unlock()
	if procsWithDir(dir) == 0 {
		t.Fatal("no Chromium process found for the session")
	}
	waitFor(t, "the janitor's reap", 5*time.Second, func() bool { return strings.Contains(logs.String(), "Cleaning up inactive session") })
	time.Sleep(300 * time.Millisecond) // a few more ticks: still one record
	if n := strings.Count(logs.String(), "Cleaning up inactive session"); n != 1 {
		t.Errorf("%d reap log records, want 1:\n%s", n, logs.String())
	}
	// The last session gone, the browser is stopped: no Chromium left.
	waitFor(t, "Chromium to exit", 5*time.Second, func() bool { return procsWithDir(dir) == 0 })

	c := m.Click(ctx, task, RefInput{Ref: ref})
	if c.Success || c.Reason != reason.SessionExpired || !strings.Contains(c.Error, "idle for") || !strings.Contains(c.Error, "browser_navigate") {
		t.Fatalf("click after reap: %+v", c)
	}
	if s := m.Snapshot(ctx, task, SnapshotInput{}); s.Reason != reason.SessionExpired {
		t.Errorf("snapshot after reap: %+v", s)
	}
	if len(m.Keys()) != 0 || m.BrowserPID() != 0 {
		t.Errorf("an expired call created a session or browser: keys %v pid %d", m.Keys(), m.BrowserPID())
	}
	nr = m.Navigate(ctx, task, NavigateInput{URL: ps.url("allowed.test", "/form")})
	if !nr.Success {
		t.Fatalf("navigate after reap: %+v", nr)
	}
	if c := m.Click(ctx, task, RefInput{Ref: refOf(t, nr.Snapshot, "button", "Send")}); !c.Success {
		t.Errorf("click after a fresh navigate: %+v", c)
	}
	m.mu.Lock()
	dir2 := m.local.UserDataDir()
	m.mu.Unlock()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := procsWithDir(dir2) + procsWithDir(dir); n != 0 {
		t.Errorf("%d Chromium processes left", n)
	}
}

func TestJanitorForceReapsAfterFailedCleanups(t *testing.T) {
	_, ps := manager(t)
	var mu sync.Mutex
	calls := 0
	m, logs := ownManager(t, LifecycleOptions{Tick: 80 * time.Millisecond, Idle: 200 * time.Millisecond,
		CloseSession: func(string) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			return fmt.Errorf("simulated cleanup failure %d", calls)
		}})
	if nr := m.Navigate(context.Background(), "stuck", NavigateInput{URL: ps.url("allowed.test", "/next")}); !nr.Success {
		t.Fatal(nr)
	}
	waitFor(t, "the forced reap", 5*time.Second, func() bool { return strings.Contains(logs.String(), "Cleaning up inactive session") })
	if len(m.Keys()) != 0 {
		t.Errorf("keys after the forced reap: %v", m.Keys())
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != lifespec.ForceReapAfter {
		t.Errorf("%d cleanup attempts before the forced reap, want %d", calls, lifespec.ForceReapAfter)
	}
	l := logs.String()
	if strings.Count(l, "cleanup failed; retrying") != lifespec.ForceReapAfter-1 || !strings.Contains(l, "forced=true") {
		t.Errorf("logs:\n%s", l)
	}
}

// A page whose load never finishes hits command_timeout; the next call
// recycles the session and says so, and the task works again.
func TestCommandTimeoutMarksSuspectAndNextCallRecycles(t *testing.T) {
	_, ps := manager(t)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/never" {
			select { // the load event never fires while this image loads
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		html(w, "Hanging", `<h1>Loading forever</h1><img src="/never">`)
	}))
	defer hang.Close()
	defer close(release)
	m, _ := ownManager(t, LifecycleOptions{})
	m.timeouts = lifespec.Timeouts{Command: 1, Open: 1, FirstOpen: 1}
	ctx := context.Background()
	task := "hang-task"
	_, port, _ := strings.Cut(strings.TrimPrefix(hang.URL, "http://"), ":")
	// Start the browser first (another task), so the timing below is the
	// command's alone.
	if nr := m.Navigate(ctx, "warm", NavigateInput{URL: ps.url("allowed.test", "/next")}); !nr.Success {
		t.Fatal(nr)
	}
	start := time.Now()
	nr := m.Navigate(ctx, task, NavigateInput{URL: "http://hang.test:" + port + "/"})
	if nr.Success || nr.Reason != reason.CommandTimeout {
		t.Fatalf("hanging navigate: %+v", nr)
	}
	if el := time.Since(start); el > 6*time.Second { // 1 s timeout plus a loaded machine's slack
		t.Errorf("timeout took %v", el)
	}
	old, _ := m.Session(task)
	if !old.suspect.Load() {
		t.Error("the timed-out session is not marked suspect")
	}
	s := m.Snapshot(ctx, task, SnapshotInput{})
	if !s.Success || !strings.Contains(s.Recycled, "recycled") || !strings.Contains(s.Recycled, "timed out") {
		t.Fatalf("next call: %+v", s)
	}
	if cur, _ := m.Session(task); cur == old {
		t.Error("the suspect session was reused")
	}
	if s := m.Snapshot(ctx, task, SnapshotInput{}); s.Recycled != "" {
		t.Errorf("recycled reported twice: %+v", s)
	}
	if nr := m.Navigate(ctx, task, NavigateInput{URL: ps.url("allowed.test", "/next")}); !nr.Success || nr.Recycled != "" {
		t.Errorf("navigate after recycle: %+v", nr)
	}
	_ = backend.ProfileMarker
}
