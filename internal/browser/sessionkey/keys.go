// Package sessionkey names browser sessions and binds tasks to them (spec
// §B3): the task id, the session key a navigation uses (hybrid routing sends
// a private URL to the task's ::local sidecar), the last-active binding of a
// task to a key with its ownership check, and which keys a cleanup reaps. It
// holds no browsers: the Manager in package browser owns the sessions.
package sessionkey

import (
	"context"
	"net/netip"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// LocalSuffix marks the hybrid local sidecar session of a task (spec §B3).
const LocalSuffix = "::local"

// DefaultTaskID is the task id of a call that names none (spec §B3).
const DefaultTaskID = "default"

// Route holds the facts hybrid routing depends on (spec §B3).
type Route struct {
	CloudProvider bool // a cloud browser provider is configured
	AutoLocal     bool // browser.auto_local_for_private_urls (default true)
	CDPOverride   bool // browser.cdp_url / BROWSER_CDP_URL is set
	Camofox       bool // Camofox mode
}

// TaskID returns id, or DefaultTaskID when id is empty.
func TaskID(id string) string {
	if id == "" {
		return DefaultTaskID
	}
	return id
}

// NavigationKey returns the session key browser_navigate uses for rawURL
// (spec §B3): "<task>::local" only when no CDP override, not Camofox, a cloud
// provider is configured, AutoLocal is on, and private(rawURL) holds;
// otherwise the bare task id. It is decided before the safety gates, so a
// refused URL still has a key. private may be nil when no cloud provider is
// configured.
func NavigationKey(taskID, rawURL string, r Route, private func(string) bool) string {
	task := TaskID(taskID)
	if !r.CDPOverride && !r.Camofox && r.CloudProvider && r.AutoLocal && private != nil && private(rawURL) {
		return task + LocalSuffix
	}
	return task
}

// IsSidecar reports whether key is a hybrid local sidecar key.
func IsSidecar(key string) bool { return strings.HasSuffix(key, LocalSuffix) }

// BareTask returns the task id of a session key (the key without LocalSuffix).
func BareTask(key string) string { return strings.TrimSuffix(key, LocalSuffix) }

// privateSuffixes are host suffixes routed to the local sidecar without DNS
// (spec §B3).
var privateSuffixes = []string{".localhost", ".local", ".lan", ".internal"}

// URLIsPrivate is the routing oracle of spec §B3 — not a security check: an IP
// literal is private when it is private, loopback, link-local, CGNAT or any
// other non-public class (an address inside a declared fake-IP range counts as
// not private); "localhost" and the suffixes .localhost, .local, .lan and
// .internal are private; any other host is resolved with r and is private when
// any answer is. A DNS failure, an unparseable URL and an empty host are not
// private (the configured backend reports the error).
func URLIsPrivate(ctx context.Context, rawURL string, r egress.Resolver, fakeIP []netip.Prefix) bool {
	u, err := urlsafe.Parse(rawURL)
	if err != nil || u.Host == "" {
		return false
	}
	classPrivate := func(a netip.Addr) bool {
		if urlsafe.ClassifyAddr(a) == urlsafe.ClassPublic {
			return false
		}
		ua := urlsafe.Unwrap4(a.WithZone(""))
		for _, p := range fakeIP {
			if p.Contains(ua) {
				return false
			}
		}
		return true
	}
	if u.Addr.IsValid() {
		return classPrivate(u.Addr)
	}
	h := strings.ToLower(strings.TrimSuffix(u.Host, "."))
	if h == "localhost" {
		return true
	}
	for _, s := range privateSuffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	if r == nil {
		return false
	}
	addrs, lerr := r.LookupNetIP(ctx, "ip", h)
	if lerr != nil {
		return false
	}
	for _, a := range addrs {
		if classPrivate(a) {
			return true
		}
	}
	return false
}

// Owner is the ownership metadata of a live session record (spec §B3).
type Owner struct {
	SessionKey  string // "" for a record without metadata (legacy)
	OwnerTaskID string // "" for a record without metadata (legacy)
}

// Bindings is the per-task last-active binding: which session key served the
// task's last successful, non-blocked navigation. It is safe for concurrent use.
type Bindings struct {
	mu sync.Mutex
	m  map[string]string
}

// Set records key as task's last-active session. Call it only after a
// successful, non-blocked navigation (spec §B3).
func (b *Bindings) Set(task, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]string{}
	}
	b.m[TaskID(task)] = key
}

// Get returns task's binding, if any.
func (b *Bindings) Get(task string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.m[TaskID(task)]
	return k, ok
}

// Snapshot returns a copy of every binding (for tests and diagnostics).
func (b *Bindings) Snapshot() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.m))
	for k, v := range b.m {
		out[k] = v
	}
	return out
}

// Drop removes task's binding.
func (b *Bindings) Drop(task string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, TaskID(task))
}

// DropIf removes task's binding only when it points at key.
func (b *Bindings) DropIf(task, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m[TaskID(task)] == key {
		delete(b.m, TaskID(task))
	}
}

// Resolve returns the session key a non-navigation tool of task uses (spec §B3
// _last_session_key): the bound key when lookup finds that session live and its
// ownership metadata matches (or is absent); otherwise the binding is dropped
// (fail closed) and the bare task id is returned. dropped reports a drop.
// lookup returns the live session's Owner and whether it exists.
func (b *Bindings) Resolve(task string, lookup func(key string) (Owner, bool)) (key string, dropped bool) {
	task = TaskID(task)
	bound, ok := b.Get(task)
	if !ok {
		return task, false
	}
	o, live := lookup(bound)
	if live && Owned(o, task, bound) {
		return bound, false
	}
	b.DropIf(task, bound)
	return task, true
}

// Owned is the ownership check of spec §B3 (_session_info_owned_by_task): a
// record without metadata is owned (legacy); otherwise both its owner task and
// its session key must match.
func Owned(o Owner, task, key string) bool {
	if o.OwnerTaskID == "" && o.SessionKey == "" {
		return true
	}
	return o.OwnerTaskID == TaskID(task) && o.SessionKey == key
}

// CleanupKeys returns which of the active session keys a cleanup of key reaps
// (spec §B3): a bare task id reaps itself and its sidecar; a sidecar key reaps
// only itself.
func CleanupKeys(key string, active []string) []string {
	want := map[string]bool{key: true}
	if !IsSidecar(key) {
		want[key+LocalSuffix] = true
	}
	var out []string
	for _, k := range active {
		if want[k] {
			out = append(out, k)
		}
	}
	return out
}

// DropAfterCleanup applies the binding rule of a cleanup of key (spec §B3): a
// bare task id always drops its binding; a sidecar key drops it only when the
// sidecar was the recorded owner.
func (b *Bindings) DropAfterCleanup(key string) {
	if IsSidecar(key) {
		b.DropIf(BareTask(key), key)
		return
	}
	b.Drop(key)
}
