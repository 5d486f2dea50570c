package handle

import (
	"sync"
	"time"
)

// Reaped says when and after how long idle the janitor closed a handle's
// session (the handle then reads session_expired).
type Reaped struct {
	Key  string // the session key
	Idle time.Duration
	At   time.Time
}

// Entry is an in-process handle: the session key it names for the
// principal that got it.
type Entry struct {
	Principal, Key string
	Reaped         *Reaped // non-nil: the janitor closed its session
}

// Table is a process's handles (without Redis, and for the sessions this
// process holds): handle → session key, one handle per key. Safe for
// concurrent use; the zero value is ready.
type Table struct {
	mu    sync.Mutex
	byH   map[string]*Entry
	byKey map[string]string
}

func (t *Table) initLocked() {
	if t.byH == nil {
		t.byH, t.byKey = map[string]*Entry{}, map[string]string{}
	}
}

// Issue returns key's handle for principal p: the live one, else a new one
// (a handle of another principal for key is forgotten).
func (t *Table) Issue(p, key string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.initLocked()
	if h, ok := t.byKey[key]; ok {
		if e := t.byH[h]; e != nil && e.Principal == p && e.Reaped == nil {
			return h
		}
		delete(t.byH, h)
	}
	h := New()
	t.byH[h], t.byKey[key] = &Entry{Principal: p, Key: key}, h
	return h
}

// Bind records h (a record session's own handle) as key's, for p.
func (t *Table) Bind(h, p, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.initLocked()
	t.byH[h], t.byKey[key] = &Entry{Principal: p, Key: key}, h
}

// Lookup returns h's entry.
func (t *Table) Lookup(h string) (Entry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byH[h]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

// Drop forgets key's handle (its session was closed: the handle names
// nothing from now on); with r set it is kept as reaped instead.
func (t *Table) Drop(key string, r *Reaped) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.byKey[key]
	if !ok {
		return
	}
	delete(t.byKey, key)
	if e := t.byH[h]; e != nil && r != nil {
		e.Reaped = r
		return
	}
	delete(t.byH, h)
}

// Prune forgets the handles reaped more than MarkerTTL before now.
func (t *Table) Prune(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for h, e := range t.byH {
		if e.Reaped != nil && now.Sub(e.Reaped.At) > MarkerTTL {
			delete(t.byH, h)
		}
	}
}
