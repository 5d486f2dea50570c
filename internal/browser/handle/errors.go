package handle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// NotFound is the refusal of a handle that names no session of the caller:
// the same for one never issued, another principal's and a closed one.
func NotFound() *reason.Error {
	return reason.New(reason.SessionNotFound, "",
		"The session argument names no browser session of yours (never issued, closed with browser_close, or not yours). Call browser_navigate without session to start one; nothing was run.")
}

// NotFoundTask is session_not_found for a call WITHOUT a session argument
// whose task's session was closed with browser_close through its handle
// (on any replica).
func NotFoundTask() *reason.Error {
	return reason.New(reason.SessionNotFound, "",
		"This task's browser session was closed with browser_close (through its session handle), so its page, cookies and refs are gone. Call browser_navigate to start a new session; nothing was run.")
}

// Lost is session_lost for session key: why names what is gone (its
// node, its tab, its record in Redis), next where a new session would
// run now (Manager.nextSession: a node with room, this replica's own
// browser, or every node full).
func Lost(key, why, next string) *reason.Error {
	return reason.Newf(reason.SessionLost, "",
		"The browser session %q is lost: %s, so its page, cookies and refs are gone and its record was removed. Call browser_navigate again without session, or with this session to start over (the result names the new session); %s. Nothing was run.", key, why, next)
}

// WhyRecordGone is session_lost's why when a session's record vanished
// from Redis (a restart without persistence, an eviction) under a replica
// that still served it; the node ends such a session (its proxy's index
// key is gone too).
const WhyRecordGone = "its record in Redis is gone (Redis restarted or evicted it), and the browser node ends a session whose record is gone"

// ExpiredErr is session_expired for a session the janitor reaped after
// idle (timeout: browser.inactivity_timeout in effect).
func ExpiredErr(r Reaped, timeout time.Duration) *reason.Error {
	return reason.Newf(reason.SessionExpired, "",
		"The browser session %q was closed at %s after sitting idle for %s (browser.inactivity_timeout is %s); its page, cookies and refs are gone. Call browser_navigate without session to start a fresh session; nothing was run.",
		r.Key, r.At.UTC().Format(time.RFC3339), r.Idle.Round(time.Second), timeout)
}

// Gone is the refusal of principal p's handle h whose record is absent:
// session_expired (with the reap) when the janitor reaped it (its marker
// is there), session_lost (with the marker's why, and next: where a new
// session runs) when it was lost (Lose), else session_not_found; marked
// false when there is no marker at all (never issued, another
// principal's, or Redis lost the record and its marker).
func (s *Store) Gone(ctx context.Context, p, h string, timeout time.Duration, next string) (err *reason.Error, r *Reaped, marked bool) {
	ex, ok, _ := s.ExpiredOf(ctx, p, h)
	switch {
	case !ok:
		return NotFound(), nil, false
	case ex.Lost:
		why := ex.Why
		if why == "" {
			why = "its browser node or its tab went away"
		}
		return Lost(ex.Key, why, next), nil, true
	case ex.Closed:
		return NotFound(), nil, true
	}
	rp := Reaped{Key: ex.Key, Idle: time.Duration(ex.IdleMS) * time.Millisecond, At: time.UnixMilli(ex.AtMS)}
	return ExpiredErr(rp, timeout), &rp, true
}

// RetryAfter is carried (errors.As) by a refusal that tells the caller
// when to retry: session_busy's retry_after_s.
type RetryAfter interface{ RetryAfterS() int }

type busyCause struct {
	retry time.Duration
	err   error
}

func (b *busyCause) Error() string    { return b.err.Error() }
func (b *busyCause) Unwrap() error    { return b.err }
func (b *busyCause) RetryAfterS() int { return max(1, int((b.retry+time.Second-1)/time.Second)) }

// Busy is session_busy for the lock key: another call holds it after the
// call waited wait (retry: the lock's remaining TTL), or (junk) the key
// holds a value Gatehouse did not write, so no call of it will release it.
func Busy(key string, wait, retry time.Duration, junk bool) error {
	msg := fmt.Sprintf("Another call on this browser session (from any replica) holds its lock and did not finish within %s; nothing was run. Retry after %d s. If no call runs on the session, the lock key is stale: delete it in Redis (DEL %s).",
		wait.Round(time.Millisecond), (&busyCause{retry: retry}).RetryAfterS(), key)
	cause := errors.New("browser session lock held")
	if junk {
		msg = fmt.Sprintf("The lock of this browser session in Redis holds a value Gatehouse did not write, so no call of Gatehouse will release it; nothing was run. Delete the key in Redis (DEL %s) or wait for its TTL (%d s).",
			key, (&busyCause{retry: retry}).RetryAfterS())
		cause = errors.New("browser session lock holds a value Gatehouse did not write")
	}
	return reason.Wrap(reason.SessionBusy, "", msg, &busyCause{retry: retry, err: cause})
}
