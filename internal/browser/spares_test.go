package browser

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSparePoolFollowsDemand: the pool grows to the number of new sessions
// seen in its window, a burst of new tasks within that stock is served by
// spares ready at once (each in its own BrowserContext and proxy, seeing
// only its own page and cookie), and once the demand is older than the
// window the janitor trims the pool back to its floor; no Chromium process
// of the Manager survives Close.
func TestSparePoolFollowsDemand(t *testing.T) {
	_, ps := manager(t)
	m, _ := ownManager(t, LifecycleOptions{Tick: time.Hour}) // trimSpares is called below
	ctx := context.Background()
	const learn, burst = 6, 5
	for i := 0; i < learn; i++ {
		task := fmt.Sprintf("learn-%d", i)
		if nr := m.Navigate(ctx, task, NavigateInput{URL: ps.url("allowed.test", "/next")}); !nr.Success {
			t.Fatalf("navigate %d: %+v", i, nr)
		}
		m.CloseTask(task)
	}
	if st := m.SpareStats(); st.Target != learn {
		t.Fatalf("pool target %d after %d new sessions, want %d (%+v)", st.Target, learn, learn, st)
	}
	waitFor(t, "the pool to fill", 90*time.Second, func() bool { return m.SpareStats().Ready >= learn })
	before := m.SpareStats()
	proxies := map[string]bool{}
	for i := 0; i < burst; i++ {
		task := fmt.Sprintf("burst-%d", i)
		nr := m.Navigate(ctx, task, NavigateInput{URL: ps.url("allowed.test", "/session?task="+task)})
		if !nr.Success {
			t.Fatalf("burst navigate %d: %+v", i, nr)
		}
		s, ok := m.Session(task)
		if !ok {
			t.Fatalf("no session for %s", task)
		}
		if proxies[s.proxy.URL()] {
			t.Errorf("%s shares a proxy listener with an earlier session", task)
		}
		proxies[s.proxy.URL()] = true
		if st := s.ProxyStats(); st.Allowed == 0 {
			t.Errorf("%s: its proxy saw no request: %+v", task, st)
		}
	}
	for i := 0; i < burst; i++ {
		task := fmt.Sprintf("burst-%d", i)
		r := m.Console(ctx, task, ConsoleInput{Expression: "document.cookie"})
		if !r.Success {
			t.Fatalf("console %d: %+v", i, r)
		}
		got := string(r.Result)
		if !strings.Contains(got, "who="+task) || strings.Count(got, "who=") != 1 {
			t.Errorf("%s sees cookies %q, want only its own", task, got)
		}
	}
	after := m.SpareStats()
	if hits := after.Hits - before.Hits; hits != burst {
		t.Errorf("%d of %d burst sessions served by a ready spare (%+v → %+v)", hits, burst, before, after)
	}
	for i := 0; i < burst; i++ {
		m.CloseTask(fmt.Sprintf("burst-%d", i))
	}
	// The demand leaves the window (its records are made older than it).
	m.mu.Lock()
	for i := range m.spare.demand {
		m.spare.demand[i] = m.spare.demand[i].Add(-SpareDemandWindow)
	}
	m.mu.Unlock()
	waitFor(t, "the makers to stop", 60*time.Second, func() bool { return m.SpareStats().Making == 0 })
	m.trimSpares()
	if st := m.SpareStats(); st.Target != SpareSessions || st.Ready > SpareSessions {
		t.Errorf("after the window: %+v, want target and at most %d ready", st, SpareSessions)
	}
	m.mu.Lock()
	dir := m.local.UserDataDir()
	m.mu.Unlock()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := procsWithDir(dir); n != 0 {
		t.Errorf("%d Chromium processes left after Close", n)
	}
}
