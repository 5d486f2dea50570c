package camofox

import (
	"context"
	"encoding/json"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Tabs is the table of Camofox tabs that serve Gatehouse session keys (spec
// §B11): one tab per key, created by the first navigation (POST /tabs),
// closed by a cleanup, at shutdown or when idle (DELETE /tabs/{id}). It only
// keeps the table and carries the calls: the gates, the bindings and the
// expiry records are the browser Manager's.
type Tabs struct {
	C      *Client
	UserID string
	// SessionKey is CAMOFOX_SESSION_KEY / browser.camofox.session_key: the
	// sessionKey every tab is created with; "" means each tab's own key.
	SessionKey string

	mu   sync.Mutex
	tabs map[string]*Tab // by session key
}

// Tab is one Camofox tab serving a session key. Lock it for a call (one
// call at a time); Navs, LastSnap and LastURL are read and written under
// that lock.
type Tab struct {
	Key, Owner, ID string
	mu             sync.Mutex
	lastUsed       time.Time // under Tabs.mu
	closed         bool      // under mu
	// Navs counts successful navigations; LastSnap and LastURL are the
	// latest snapshot text and page URL (the base of a delta).
	Navs              int
	LastSnap, LastURL string
	ts                *Tabs
}

// Lookup returns key's tab.
func (ts *Tabs) Lookup(key string) (*Tab, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.tabs[key]
	return t, ok
}

// Open returns key's tab, creating it for owner (POST /tabs); created
// reports a new tab. When another call created it meanwhile, the stored one
// wins and the new one is closed.
func (ts *Tabs) Open(ctx context.Context, key, owner string) (t *Tab, created bool, err error) {
	ts.mu.Lock()
	if t, ok := ts.tabs[key]; ok {
		t.lastUsed = time.Now()
		ts.mu.Unlock()
		return t, false, nil
	}
	ts.mu.Unlock()
	sk := ts.SessionKey
	if sk == "" {
		sk = key
	}
	p, err := ts.C.CreateTab(ctx, ts.UserID, sk)
	if err != nil {
		return nil, false, err
	}
	t = &Tab{Key: key, Owner: owner, ID: p.TabID, lastUsed: time.Now(), ts: ts}
	ts.mu.Lock()
	if ts.tabs == nil {
		ts.tabs = map[string]*Tab{}
	}
	if old, ok := ts.tabs[key]; ok {
		ts.mu.Unlock()
		t.Close() //nolint:errcheck // a duplicate: best effort
		return old, false, nil
	}
	ts.tabs[key] = t
	ts.mu.Unlock()
	return t, true, nil
}

// Drop forgets key's tab (already gone on the server).
func (ts *Tabs) Drop(key string) (*Tab, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.tabs[key]
	delete(ts.tabs, key)
	return t, ok
}

// Take removes the tabs whose keys pick chooses among the table's keys and
// returns them (a cleanup closes them).
func (ts *Tabs) Take(pick func(keys []string) []string) []*Tab {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	keys := make([]string, 0, len(ts.tabs))
	for k := range ts.tabs {
		keys = append(keys, k)
	}
	var out []*Tab
	for _, k := range pick(keys) {
		if t, ok := ts.tabs[k]; ok {
			out = append(out, t)
			delete(ts.tabs, k)
		}
	}
	return out
}

// TakeIdle removes and returns, locked, the tabs unused for longer than idle
// and not in a call.
func (ts *Tabs) TakeIdle(idle time.Duration, now time.Time) []*Tab {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []*Tab
	for k, t := range ts.tabs {
		if now.Sub(t.lastUsed) > idle && t.mu.TryLock() {
			delete(ts.tabs, k)
			out = append(out, t)
		}
	}
	return out
}

// Restore puts back a tab TakeIdle removed (its close failed) unless the key
// was taken meanwhile.
func (ts *Tabs) Restore(t *Tab) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, taken := ts.tabs[t.Key]; !taken {
		ts.tabs[t.Key] = t
	}
}

// Lock takes t for one call; Unlock marks it used and gives it back.
func (t *Tab) Lock() { t.mu.Lock() }

// Unlock marks t used now and releases it.
func (t *Tab) Unlock() {
	t.ts.mu.Lock()
	t.lastUsed = time.Now()
	t.ts.mu.Unlock()
	t.mu.Unlock()
}

// UnlockUnused releases t without marking it used (a cleanup's or the
// janitor's hold: a tab whose close failed keeps its idle time).
func (t *Tab) UnlockUnused() { t.mu.Unlock() }

// LastUsed is when t was last used.
func (t *Tab) LastUsed() time.Time {
	t.ts.mu.Lock()
	defer t.ts.mu.Unlock()
	return t.lastUsed
}

// Closed reports whether t was closed (call with t locked).
func (t *Tab) Closed() bool { return t.closed }

// MarkClosed records that t is closed, so a call that waited for its lock
// fails (call with t locked).
func (t *Tab) MarkClosed() { t.closed = true }

// Close closes t's tab on the server (DELETE /tabs/{id}, 10 s; a tab already
// gone counts as closed).
func (t *Tab) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := t.ts.C.CloseTab(ctx, t.ID, t.ts.UserID)
	if TabGone(err) {
		err = nil
	}
	return err
}

// Navigate is POST /tabs/{id}/navigate.
func (t *Tab) Navigate(ctx context.Context, u string) (Page, error) {
	return t.ts.C.Navigate(ctx, t.ID, t.ts.UserID, u)
}

// Snapshot is GET /tabs/{id}/snapshot.
func (t *Tab) Snapshot(ctx context.Context) (Snapshot, error) {
	return t.ts.C.Snapshot(ctx, t.ID, t.ts.UserID)
}

// Stats is GET /tabs/{id}/stats (the page URL).
func (t *Tab) Stats(ctx context.Context) (Page, error) { return t.ts.C.Stats(ctx, t.ID, t.ts.UserID) }

// Click is POST /tabs/{id}/click on ref ("e5").
func (t *Tab) Click(ctx context.Context, ref string) error {
	_, err := t.ts.C.Click(ctx, t.ID, t.ts.UserID, ref)
	return err
}

// Type is POST /tabs/{id}/type into ref.
func (t *Tab) Type(ctx context.Context, ref, text string) error {
	return t.ts.C.Type(ctx, t.ID, t.ts.UserID, ref, text)
}

// Scroll is POST /tabs/{id}/scroll by amount pixels.
func (t *Tab) Scroll(ctx context.Context, direction string, amount int) error {
	return t.ts.C.Scroll(ctx, t.ID, t.ts.UserID, direction, amount)
}

// Press is POST /tabs/{id}/press.
func (t *Tab) Press(ctx context.Context, key string) error {
	return t.ts.C.Press(ctx, t.ID, t.ts.UserID, key)
}

// Back is POST /tabs/{id}/back.
func (t *Tab) Back(ctx context.Context) error {
	_, err := t.ts.C.Back(ctx, t.ID, t.ts.UserID)
	return err
}

// Evaluate is POST /tabs/{id}/evaluate.
func (t *Tab) Evaluate(ctx context.Context, expression string) (json.RawMessage, error) {
	return t.ts.C.Evaluate(ctx, t.ID, t.ts.UserID, expression)
}

// Screenshot is GET /tabs/{id}/screenshot.
func (t *Tab) Screenshot(ctx context.Context) ([]byte, error) {
	return t.ts.C.Screenshot(ctx, t.ID, t.ts.UserID)
}

// IsLoopbackHost reports whether h is localhost, a *.localhost name or a
// loopback address.
func IsLoopbackHost(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// RewriteLoopback maps a loopback URL onto alias, keeping its port (a
// Camofox in Docker reaches the host as host.docker.internal;
// browser.camofox.rewrite_loopback_urls, spec §B11); other URLs unchanged.
func RewriteLoopback(href, alias string) string {
	u, err := url.Parse(href)
	if err != nil || !IsLoopbackHost(u.Hostname()) {
		return href
	}
	if p := u.Port(); p != "" {
		u.Host = alias + ":" + p
	} else {
		u.Host = alias
	}
	return u.String()
}

// JSONType names a JSON value's type like spec §B8.3's result_type (Python
// type names: dict, list, str, bool, int, float, NoneType).
func JSONType(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "str"
	}
	switch n := x.(type) {
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	case string:
		return "str"
	case bool:
		return "bool"
	case float64:
		if n == float64(int64(n)) && !strings.ContainsAny(string(v), ".eE") {
			return "int"
		}
		return "float"
	}
	return "NoneType"
}
