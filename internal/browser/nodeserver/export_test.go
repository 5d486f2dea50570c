package nodeserver

import "github.com/gatehouse-dev/gatehouse/internal/egress"

// SpareProxies returns the ready spares' proxies (tests).
func (s *Server) SpareProxies() []*egress.ProxySession {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*egress.ProxySession
	for _, sp := range s.spare.ready {
		out = append(out, sp.p)
	}
	return out
}

// CloseOrphanHandles runs the heartbeat's orphan pass now (tests).
func (s *Server) CloseOrphanHandles() { s.closeOrphanHandles() }

// ExpireReservations runs the heartbeat's reservation expiry now (tests).
func (s *Server) ExpireReservations() { s.expireReservations() }
