package handle

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/strictjson"
)

// Standby (browser.standby_replicas; docs/browser.md "Standby
// attachments"): a replica that opens a record session announces it on
// EventsChannel; up to K other replicas claim standby duty for it
// (ClaimStandby) and attach to its tab before its next call. Every end of
// a record (Delete, Lose, Reap) is announced too, so a replica drops its
// attachment to a session that is gone at once.
const (
	// EventsChannel is the Redis pub/sub channel of record session events
	// (JSON Event).
	EventsChannel = state.KeyPrefix + "browser-session-events"
	// StandbyPrefix + <p> ":" <handle> ":" <i>: standby slot i of a record
	// session (SET NX, the record's TTL), the id of the replica holding it.
	StandbyPrefix = state.KeyPrefix + "browser-session-standby:"
	// MaxEventBytes bounds an event read from the channel.
	MaxEventBytes = 2 << 10
)

// Event kinds.
const (
	EventOpen = "open" // a replica opened a record session (its record is in Redis)
	EventEnd  = "end"  // a record session ended (closed, lost or reaped)
)

// Event is one record session event on EventsChannel. Principal is the
// principal's name (open only: a standby replica attaches for it, and
// checks it against the record as Get does); From is the announcing
// replica's id (32 hex), so it skips its own announcements.
type Event struct {
	Kind      string `json:"kind"`
	Handle    string `json:"handle"`
	From      string `json:"from,omitempty"`
	Principal string `json:"principal,omitempty"`
}

// DecodeEvent parses an event read from EventsChannel: at most
// MaxEventBytes of one JSON object with exactly Event's fields, a known
// kind, a valid handle, From "" or 32 hex and a printable principal of at
// most 512 bytes; anything else is an error wrapping ErrRecord.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	if len(b) > MaxEventBytes {
		return Event{}, fmt.Errorf("%w: event longer than %d bytes", ErrRecord, MaxEventBytes)
	}
	if err := strictjson.Decode(b, &e); err != nil {
		return Event{}, fmt.Errorf("%w: event: %v", ErrRecord, err)
	}
	switch {
	case e.Kind != EventOpen && e.Kind != EventEnd:
		return Event{}, fmt.Errorf("%w: event kind %q", ErrRecord, e.Kind)
	case !Valid(e.Handle):
		return Event{}, fmt.Errorf("%w: event handle is not 32 hex digits", ErrRecord)
	case e.From != "" && !nodeIDRe.MatchString(e.From):
		return Event{}, fmt.Errorf("%w: event from is not 32 hex digits", ErrRecord)
	case !text(e.Principal):
		return Event{}, fmt.Errorf("%w: event principal is not printable text", ErrRecord)
	}
	return e, nil
}

// Announce publishes e on EventsChannel; an error is state_unavailable.
func (s *Store) Announce(ctx context.Context, e Event) error {
	b, _ := json.Marshal(e)
	c, cancel := octx(ctx)
	defer cancel()
	return s.fail(s.rdb.Publish(c, EventsChannel, b).Err())
}

// endEvent is the Event a record's end publishes (Store.end, Store.Reap).
func endEvent(h string) []byte {
	b, _ := json.Marshal(Event{Kind: EventEnd, Handle: h})
	return b
}

// StandbyKey is the key of standby slot i of principal p's handle h.
func StandbyKey(p, h string, i int) string {
	return StandbyPrefix + suffix(p, h) + ":" + strconv.Itoa(i)
}

// ClaimStandby takes one of the k standby slots of principal p's handle h
// for replica id (SET NX on slots 0…k-1, in order, each with ttl): ok
// false when all k are taken (or k ≤ 0). An error is state_unavailable.
func (s *Store) ClaimStandby(ctx context.Context, p, h, id string, k int, ttl time.Duration) (ok bool, err error) {
	c, cancel := octx(ctx)
	defer cancel()
	for i := range k {
		got, err := s.rdb.SetNX(c, StandbyKey(p, h, i), id, ttl).Result()
		if err != nil {
			return false, s.fail(err)
		}
		if got {
			return true, nil
		}
	}
	return false, nil
}

// Subscribe subscribes to EventsChannel until ctx ends: every event that
// decodes (DecodeEvent) is sent on the returned channel, which is closed
// when ctx ends; one that does not is logged and dropped. The subscription
// (go-redis PubSub) reconnects by itself after Redis restarts; events
// published meanwhile are lost (a standby is an optimisation). A slow
// reader loses events past go-redis's buffer (100), never blocks Redis.
func (s *Store) Subscribe(ctx context.Context) <-chan Event {
	ps := s.rdb.Subscribe(ctx, EventsChannel)
	out := make(chan Event)
	go func() {
		defer close(out)
		defer ps.Close()
		in := ps.Channel(redis.WithChannelSendTimeout(time.Second))
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-in:
				if !ok {
					return
				}
				e, err := DecodeEvent([]byte(m.Payload))
				if err != nil {
					s.lg.Debug("browser session event dropped", "err", err)
					continue
				}
				select {
				case out <- e:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}
