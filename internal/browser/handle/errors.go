package handle

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// NotFound is the refusal of a handle that names no session of the caller:
// the same for one never issued, another principal's and a closed one.
func NotFound() *reason.Error {
	return reason.New(reason.SessionNotFound, "",
		"The session argument names no browser session of yours (never issued, closed with browser_close, or not yours). Call browser_navigate without session to start one; nothing was run.")
}

// Lost is session_lost for session key, why naming what is gone.
func Lost(key, why string) *reason.Error {
	return reason.Newf(reason.SessionLost, "",
		"The browser session %q is lost: %s, so its page, cookies and refs are gone and its record was removed. Call browser_navigate again without session, or with this session to start over (the result names the new session); a new session lands on a surviving node. Nothing was run.", key, why)
}

// ExpiredErr is session_expired for a session the janitor reaped after
// idle (timeout: browser.inactivity_timeout in effect).
func ExpiredErr(r Reaped, timeout time.Duration) *reason.Error {
	return reason.Newf(reason.SessionExpired, "",
		"The browser session %q was closed at %s after sitting idle for %s (browser.inactivity_timeout is %s); its page, cookies and refs are gone. Call browser_navigate without session to start a fresh session; nothing was run.",
		r.Key, r.At.UTC().Format(time.RFC3339), r.Idle.Round(time.Second), timeout)
}

// Gone is the refusal of principal p's handle h whose record is absent:
// session_expired (with the reap) when the janitor reaped it (its marker
// is there), session_lost when its node went (Lose), else
// session_not_found.
func (s *Store) Gone(ctx context.Context, p, h string, timeout time.Duration) (*reason.Error, *Reaped) {
	if ex, ok, _ := s.ExpiredOf(ctx, p, h); ok && ex.Lost {
		return Lost(ex.Key, "its browser node went away"), nil
	} else if ok {
		r := Reaped{Key: ex.Key, Idle: time.Duration(ex.IdleMS) * time.Millisecond, At: time.UnixMilli(ex.AtMS)}
		return ExpiredErr(r, timeout), &r
	}
	return NotFound(), nil
}
