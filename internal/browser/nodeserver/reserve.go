package nodeserver

import (
	"crypto/rand"
	"encoding/hex"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"net/http"
	"strconv"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
)

// Reserved spares (issue 19: navigate on a node as fast as in one
// process). Taking a spare at open time still leaves the replica's
// attach to its tab on the call's path: ~13 sequential CDP round trips
// through the relay, 150–180 ms on a loaded 2-core machine. A replica
// therefore reserves ready spares ahead of demand (POST /v1/spares),
// attaches to each in the background, and binds one when a session
// starts (POST /v1/sessions with node.OpenRequest.Spare): one HTTP call
// on the call's path.
//
// Rules:
//   - A reservation belongs to the relay that made it (node.HeaderRelay,
//     a secret of that replica's connection): only that relay may bind,
//     renew or release it; another relay's bind is refused (403), a
//     second bind too (409: the id names a session now). Its proxy is the
//     spare's Unbound one: it refuses every request until the bind gives
//     it the replica's policy, once, before the open answers.
//   - It ends with its relay (the replica is gone), when released, and
//     node.ReserveTTL (Options.ReserveTTL) after it was made or last
//     renewed: the node closes it and disposes its BrowserContext.
//   - Capacity: a reserved spare keeps its slot (the node never holds more
//     than --max-sessions contexts), counts among the node's spares
//     (ready + reserved ≤ --max-spares: spareTargetLocked) and not among
//     its sessions (the record's count, browser_capacity). It never keeps
//     a session out: an open that finds no free slot reclaims the
//     reservation closest to expiry (the replica that held it finds its
//     tab gone, or its bind answered 404, and opens as before).

// reservation is a spare reserved by a relay.
type reservation struct {
	sp      *spare
	relay   string
	expires time.Time
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// reserveTTL is the reservations' lifetime (Options.ReserveTTL).
func (s *Server) reserveTTL() time.Duration {
	if s.o.ReserveTTL > 0 {
		return s.o.ReserveTTL
	}
	return node.ReserveTTL
}

// reserveWait bounds how long a reservation waits for a spare being made.
const reserveWait = 10 * time.Second

// reserve answers POST /v1/spares: a ready spare, reserved for the
// request's relay (node.OpenResponse with Context, Target and TTLMS). The
// request counts as demand (the node makes more); with none ready it
// waits, at most reserveWait, while one is being made, then answers 503
// with Retry-After. 409 without a live relay; 501 when spares are off
// (--max-spares 0).
func (s *Server) reserve(w http.ResponseWriter, r *http.Request) {
	rid := relayID(r)
	ttl := s.reserveTTL()
	id := newID()
	deadline := time.NewTimer(reserveWait)
	defer deadline.Stop()
	var sp *spare
	for first := true; ; first = false {
		s.mu.Lock()
		if rid == "" || s.relays[rid] == 0 {
			s.mu.Unlock()
			http.Error(w, "browser-node: open the CDP relay first and name it in "+node.HeaderRelay, http.StatusConflict)
			return
		}
		if s.closed {
			s.mu.Unlock()
			break
		}
		if first {
			sp = s.takeSpareLocked()
		} else {
			sp = s.popSpareLocked()
		}
		if sp != nil {
			s.reserved[id] = &reservation{sp: sp, relay: rid, expires: time.Now().Add(ttl)}
			s.spare.stats.Reservations++
			s.mu.Unlock()
			s.fillSpares()
			break
		}
		s.mu.Unlock()
		s.fillSpares()
		s.mu.Lock()
		var made chan struct{}
		if s.spare.making > 0 {
			if s.spare.made == nil {
				s.spare.made = make(chan struct{})
			}
			made = s.spare.made
		}
		s.mu.Unlock()
		if made == nil {
			break // none is being made: no free slot, or spares are off
		}
		select {
		case <-made:
			continue
		case <-deadline.C:
		case <-r.Context().Done():
		case <-s.stop:
		}
		break
	}
	if _, ceil := s.spareLimits(); sp == nil && ceil == 0 {
		http.Error(w, "browser-node: spares are off on this node (--max-spares 0); open sessions without one", http.StatusNotImplemented)
		return
	}
	if sp == nil {
		w.Header().Set("Retry-After", strconv.Itoa(int(node.CapacityRetry/time.Second)))
		http.Error(w, "browser-node: no spare session is ready; retry later (the node is making one when it has room)", http.StatusServiceUnavailable)
		return
	}
	user, pass := sp.p.Credentials()
	writeJSON(w, http.StatusOK, node.OpenResponse{ID: id, Proxy: sp.p.URL(), User: user, Pass: pass, Context: sp.bctx, Target: sp.target, TTLMS: ttl.Milliseconds()})
}

// ownedLocked returns reservation id when the request's relay holds it,
// else the refusal's status and message. s.mu is held.
func (s *Server) ownedLocked(id, rid string) (res *reservation, status int, msg string) {
	res = s.reserved[id]
	switch {
	case res != nil && (rid == "" || res.relay != rid):
		return nil, http.StatusForbidden, "browser-node: the spare is reserved by another relay (" + node.HeaderRelay + "): only the replica connection that reserved it may use it"
	case res != nil:
		return res, http.StatusOK, ""
	}
	if _, ok := s.sessions[id]; ok {
		return nil, http.StatusConflict, "browser-node: the spare is already bound to a session; open a new session without it"
	}
	return nil, http.StatusNotFound, "browser-node: no such spare is reserved (it expired, was reclaimed for a session or its relay closed); open a session without it"
}

// claimLocked takes reservation id for an open by relay rid (a bind): the
// spare, or nil with the refusal's status and message. s.mu is held.
func (s *Server) claimLocked(id, rid string) (*spare, int, string) {
	if s.closed {
		return nil, http.StatusServiceUnavailable, "browser-node: the node is shutting down"
	}
	res, status, msg := s.ownedLocked(id, rid)
	if res == nil {
		return nil, status, msg
	}
	delete(s.reserved, id)
	s.spare.stats.Binds++
	return res.sp, http.StatusOK, ""
}

// renew answers POST /v1/spares/{id}: the reservation lives another TTL.
func (s *Server) renew(w http.ResponseWriter, r *http.Request) {
	ttl := s.reserveTTL()
	s.mu.Lock()
	res, status, msg := s.ownedLocked(r.PathValue("id"), relayID(r))
	if res != nil {
		res.expires = time.Now().Add(ttl)
	}
	s.mu.Unlock()
	if res == nil {
		http.Error(w, msg, status)
		return
	}
	writeJSON(w, http.StatusOK, node.OpenResponse{ID: r.PathValue("id"), TTLMS: ttl.Milliseconds()})
}

// release answers DELETE /v1/spares/{id}: the spare is closed and its
// context disposed (the slot is free for a new spare).
func (s *Server) release(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rid := relayID(r)
	s.mu.Lock()
	res, status, msg := s.ownedLocked(id, rid)
	var bound *nodeSession
	if res != nil {
		delete(s.reserved, id)
	} else if ns := s.sessions[id]; ns != nil && rid != "" && ns.spareRelay == rid {
		// Bound by this relay, whose bind answer was lost (its call was
		// cancelled): the replica never had the session, so it ends here,
		// or its slot would stay taken until its handle key expires.
		bound = ns
		delete(s.sessions, id)
	}
	s.mu.Unlock()
	if bound != nil {
		s.closeSession(bound)
		if bound.handle {
			handle.DeleteProxy(r.Context(), s.o.Registry.Client(), s.id, id)
		}
		s.refresh(r.Context())
		s.fillSpares()
		writeJSON(w, http.StatusOK, struct{}{})
		return
	}
	if res == nil {
		http.Error(w, msg, status)
		return
	}
	s.closeSpare(res.sp)
	s.fillSpares()
	writeJSON(w, http.StatusOK, struct{}{})
}

// dropReservationsLocked removes the reservations drop selects and
// returns their spares (the caller closes them). s.mu is held.
func (s *Server) dropReservationsLocked(drop func(*reservation) bool) []*spare {
	var out []*spare
	for id, res := range s.reserved {
		if drop(res) {
			out = append(out, res.sp)
			delete(s.reserved, id)
		}
	}
	return out
}

// reclaimLocked frees a slot for an open that found none (sessions, the
// open's own reserved slot included, and reservations over
// --max-sessions): it removes the reservation closest to expiry and
// returns its spare (the caller closes it), or nil when no reservation
// holds a slot the open needs. s.mu is held.
func (s *Server) reclaimLocked() *spare {
	if len(s.sessions)+len(s.reserved) <= s.o.MaxSessions {
		return nil
	}
	var id string
	var oldest *reservation
	for rid, res := range s.reserved {
		if oldest == nil || res.expires.Before(oldest.expires) {
			id, oldest = rid, res
		}
	}
	if oldest == nil {
		return nil
	}
	delete(s.reserved, id)
	s.spare.stats.Reclaimed++
	return oldest.sp
}

// expireReservations closes the reservations neither bound nor renewed
// within their TTL (the heartbeat loop calls it).
func (s *Server) expireReservations() {
	now := time.Now()
	s.mu.Lock()
	gone := s.dropReservationsLocked(func(r *reservation) bool { return now.After(r.expires) })
	s.spare.stats.Expired += len(gone)
	s.mu.Unlock()
	for _, sp := range gone {
		s.closeSpare(sp)
	}
	if len(gone) > 0 {
		s.lg.Info("browser node: reserved spares neither bound nor renewed were closed", "node", s.id, "spares", len(gone))
	}
}
