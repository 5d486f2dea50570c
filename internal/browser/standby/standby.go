// Package standby is a replica's standby duty for browser record sessions
// (issue 19, browser.standby_replicas; docs/browser.md "Standby
// attachments"). A replica that opens a record session announces it
// (Duty.Announce: a handle.Event on handle.EventsChannel); every other
// replica with the duty hears it, and up to K of them claim standby for it
// (handle.Store.ClaimStandby) and attach to its tab in the background
// (Options.Attach, the Manager's attach path), so the session's next call
// through one of them finds it attached instead of paying the CDP attach.
// An end event (the record closed, lost or reaped) drops the attachment
// (Options.Drop).
//
// The duty never blocks a call: announcements queue (bounded: one that
// does not fit is skipped) for a bounded number of workers; a call on a
// handle whose pre-attach is in flight waits for it (Duty.Wait) and then
// attaches itself if it failed. It drives no browser itself.
package standby

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
)

// Defaults of Options.
const (
	DefaultWorkers = 4  // pre-attaches in flight at once per replica
	DefaultQueue   = 64 // announcements waiting for a worker
	DefaultTimeout = 30 * time.Second
)

// Options configures Start.
type Options struct {
	// Store is the record store (Redis); required.
	Store *handle.Store
	// Replicas is K, browser.standby_replicas: the standby slots of one
	// session, over all replicas; ≤ 0 and Start returns nil (no duty).
	Replicas int
	// TTL is a claim's lifetime (the record's TTL, handle.RecordTTL).
	TTL time.Duration
	// Workers bounds the pre-attaches in flight; ≤ 0: DefaultWorkers.
	Workers int
	// Queue bounds the announcements waiting for a worker; ≤ 0:
	// DefaultQueue. One that does not fit is skipped (not claimed).
	Queue int
	// Timeout bounds one pre-attach; ≤ 0: DefaultTimeout.
	Timeout time.Duration
	// Attach attaches this replica to principal's handle h (it reads and
	// checks the record itself); called from the workers. An error is
	// logged at debug and forgotten.
	Attach func(ctx context.Context, principal, h string) error
	// Held reports whether this replica already holds h (then no claim).
	Held func(h string) bool
	// Drop drops this replica's attachment to h when its session ended
	// (an end event); true when there was one.
	Drop func(h string) bool
	// Logger receives the debug records; nil discards.
	Logger *slog.Logger
}

// Stats counts a duty's work since Start.
type Stats struct {
	Announced int64 // open events this replica published
	Claimed   int64 // standby slots this replica won
	Attached  int64 // pre-attaches that succeeded
	Failed    int64 // pre-attaches that failed (logged at debug)
	Skipped   int64 // announcements skipped: the queue was full
	Dropped   int64 // attachments dropped on an end event
}

type flight struct {
	done  chan struct{}
	ended bool // an end event came while in flight: drop what it attached
}

type job struct{ principal, handle string }

// Duty is one replica's standby duty. Its methods are safe for concurrent
// use; a nil *Duty has none (Announce and Wait do nothing).
type Duty struct {
	o      Options
	id     string
	ctx    context.Context
	cancel context.CancelFunc
	queue  chan job
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]*flight

	announced, claimed, attached, failed, skipped, dropped atomic.Int64
}

// Start subscribes to the record session events and starts the workers;
// Close (or ctx ending) stops them. nil when o.Replicas ≤ 0.
func Start(ctx context.Context, o Options) *Duty {
	if o.Replicas <= 0 || o.Store == nil || o.Attach == nil {
		return nil
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Held == nil {
		o.Held = func(string) bool { return false }
	}
	if o.Drop == nil {
		o.Drop = func(string) bool { return false }
	}
	var b [16]byte
	rand.Read(b[:])
	d := &Duty{o: o, id: hex.EncodeToString(b[:]), queue: make(chan job, o.Queue), inflight: map[string]*flight{}}
	d.ctx, d.cancel = context.WithCancel(ctx)
	events := o.Store.Subscribe(d.ctx)
	d.wg.Add(1 + o.Workers)
	go d.listen(events)
	for range o.Workers {
		go d.work()
	}
	return d
}

// ID is this replica's id in the events it publishes (32 hex).
func (d *Duty) ID() string { return d.id }

// Close stops the duty and waits for its workers (a pre-attach in flight
// is cancelled). Idempotent.
func (d *Duty) Close() {
	if d == nil {
		return
	}
	d.cancel()
	d.wg.Wait()
}

// Announce publishes, in the background, that this replica opened
// principal's record session h (its record is in Redis now): other
// replicas may stand by for it. A failure is logged at debug.
func (d *Duty) Announce(principal, h string) {
	if d == nil || d.ctx.Err() != nil {
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		err := d.o.Store.Announce(d.ctx, handle.Event{Kind: handle.EventOpen, Handle: h, From: d.id, Principal: principal})
		if err != nil {
			d.o.Logger.Debug("browser session not announced for standby", "err", err)
			return
		}
		d.announced.Add(1)
	}()
}

// MaxWait bounds Wait. A pre-attach takes well under a second; one that
// takes longer is stuck, typically behind a JavaScript dialog that opened
// while it ran (Chromium answers no Page.enable while a dialog blocks the
// page), and the call does better attaching itself: that attach asks the
// node about dialogs first and reports one (dialog_pending).
const MaxWait = 3 * time.Second

// Wait blocks while a pre-attach of h is in flight here, until it ends,
// ctx does or MaxWait passed; true when it waited for one (the caller then
// looks for the attachment again, and attaches itself when there is none).
func (d *Duty) Wait(ctx context.Context, h string) bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	f := d.inflight[h]
	d.mu.Unlock()
	if f == nil {
		return false
	}
	t := time.NewTimer(MaxWait)
	defer t.Stop()
	select {
	case <-f.done:
	case <-ctx.Done():
	case <-t.C:
	}
	return true
}

// Stats returns the duty's counters (zero for nil).
func (d *Duty) Stats() Stats {
	if d == nil {
		return Stats{}
	}
	return Stats{Announced: d.announced.Load(), Claimed: d.claimed.Load(), Attached: d.attached.Load(),
		Failed: d.failed.Load(), Skipped: d.skipped.Load(), Dropped: d.dropped.Load()}
}

func (d *Duty) listen(events <-chan handle.Event) {
	defer d.wg.Done()
	for e := range events {
		switch {
		case e.Kind == handle.EventEnd:
			d.mu.Lock()
			if f := d.inflight[e.Handle]; f != nil {
				f.ended = true
			}
			d.mu.Unlock()
			if d.o.Drop(e.Handle) {
				d.dropped.Add(1)
			}
		case e.From == d.id || e.From == "":
			// this replica's own session (or no announcer): never stood by
		default:
			select {
			case d.queue <- job{e.Principal, e.Handle}:
			default:
				d.skipped.Add(1)
				d.o.Logger.Debug("browser session standby skipped: pre-attaches queued to the limit", "queue", d.o.Queue)
			}
		}
	}
}

func (d *Duty) work() {
	defer d.wg.Done()
	for {
		select {
		case <-d.ctx.Done():
			return
		case j := <-d.queue:
			d.preAttach(j)
		}
	}
}

func (d *Duty) preAttach(j job) {
	d.mu.Lock()
	if d.inflight[j.handle] != nil {
		d.mu.Unlock()
		return
	}
	// In flight before the Held check: a call that finds nothing held
	// from here on waits for this attach instead of making its own.
	f := &flight{done: make(chan struct{})}
	d.inflight[j.handle] = f
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.inflight, j.handle)
		ended := f.ended
		d.mu.Unlock()
		if ended && d.o.Drop(j.handle) { // before a waiting call looks
			d.dropped.Add(1)
		}
		close(f.done)
	}()
	if d.o.Held(j.handle) {
		return
	}
	ok, err := d.o.Store.ClaimStandby(d.ctx, j.principal, j.handle, d.id, d.o.Replicas, d.o.TTL)
	if err != nil || !ok {
		if err != nil {
			d.o.Logger.Debug("browser session standby not claimed", "err", err)
		}
		return
	}
	d.claimed.Add(1)
	ctx, cancel := context.WithTimeout(d.ctx, d.o.Timeout)
	defer cancel()
	if err := d.o.Attach(ctx, j.principal, j.handle); err != nil {
		d.failed.Add(1)
		d.o.Logger.Debug("browser session standby attach failed", "err", err)
		return
	}
	d.attached.Add(1)
}
