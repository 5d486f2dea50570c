package main

import (
	"bytes"
	"os"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

// defaultConfigReload is how often a running `gatehouse mcp` looks at
// config.yaml (spec §A8: the parsed policy is cached 30 s, then re-read).
const defaultConfigReload = 30 * time.Second

// configReload re-reads config.yaml for a long-running server: at the start
// of a tool call, at most once per every, it compares the file's bytes with
// the ones the served tools were built from. A change rebuilds the tools from
// the new config and swaps them in (tools.Registry.Replace; the old tools'
// browser is closed once their calls end); a config that no longer loads
// makes every call refuse with config_invalid (fail closed, as at start-up)
// until a later change loads again.
type configReload struct {
	a     *app
	reg   *tools.Registry
	every time.Duration
	path  string

	// reloaded, if set, runs after the tools were rebuilt from a changed
	// config (a.cfg is then the new one).
	reloaded func()

	mu     sync.Mutex
	next   time.Time // no look before this
	seen   []byte    // the bytes the served tools come from
	exists bool
}

func newConfigReload(a *app, reg *tools.Registry, every time.Duration) *configReload {
	w := &configReload{a: a, reg: reg, every: every, path: config.Path(a.home)}
	w.seen, w.exists = w.read()
	w.next = time.Now().Add(every)
	return w
}

func (w *configReload) read() ([]byte, bool) {
	b, err := os.ReadFile(w.path)
	return b, err == nil || !os.IsNotExist(err)
}

// poll is the registry's before-call hook. Calls arriving during a reload
// wait for it, so none runs on half-swapped tools.
func (w *configReload) poll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if now.Before(w.next) {
		return
	}
	w.next = now.Add(w.every)
	b, exists := w.read()
	if exists == w.exists && bytes.Equal(b, w.seen) {
		return
	}
	w.seen, w.exists = b, exists
	next, err := w.a.registry()
	if err != nil {
		rerr := reason.As(err)
		if rerr == nil {
			rerr = config.Invalid(w.path, err)
		}
		w.a.logger.Warn("config.yaml changed and cannot be used: every tool call is refused until it is fixed", "path", w.path, "error", rerr.Message)
		w.reg.RefuseAll(rerr)
		return
	}
	closeOld := w.reg.Replace(next)
	w.reg.RefuseAll(nil)
	go closeOld() //nolint:errcheck // the old browser's close errors are not the caller's
	if w.reloaded != nil {
		w.reloaded()
	}
	w.a.logger.Info("config.yaml changed: tools rebuilt from the new config", "path", w.path)
}
