package provider

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// RingOrder is the keyless free-tier ring (spec §A5.3).
var RingOrder = []string{"exa", "parallel", "firecrawl", "keenable"}

// RingIndex returns vendor's index in RingOrder, or 0 for a name not in the
// ring (spec §A5.3: an unknown pinned name starts at index 0).
func RingIndex(vendor string) int {
	if i := slices.Index(RingOrder, Canonical(vendor)); i >= 0 {
		return i
	}
	return 0
}

// RingWalk returns the vendors a keyless call tries, in order (spec §A5.3): a
// pinned call starts at entry (index 0 when entry is not in the ring), an
// unpinned one at cursor (mod 4); vendors pinned to their paid tier are left out.
func RingWalk(entry string, pinned bool, cursor int, paidPinned []string) []string {
	start := ((cursor % len(RingOrder)) + len(RingOrder)) % len(RingOrder)
	if pinned {
		start = RingIndex(entry)
	}
	var out []string
	for k := range RingOrder {
		v := RingOrder[(start+k)%len(RingOrder)]
		if !slices.Contains(paidPinned, v) {
			out = append(out, v)
		}
	}
	return out
}

// Cursor is the per-process ring cursor (spec §A5.3). It starts at a value
// derived from a seed (a session id) so a fleet of processes spreads across
// vendors, deterministically for a given seed; every unpinned keyless call
// takes the current value and advances it by one. Safe for concurrent use.
type Cursor struct {
	mu sync.Mutex
	n  int
}

// NewCursor seeds a cursor from seed: the first 8 bytes of sha256(seed), mod 4.
func NewCursor(seed string) *Cursor {
	h := sha256.Sum256([]byte(seed))
	return &Cursor{n: int(binary.BigEndian.Uint64(h[:8]) % uint64(len(RingOrder)))}
}

// Next returns the current position and advances the cursor.
func (c *Cursor) Next() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = (c.n + 1) % len(RingOrder)
	return n
}

// Peek returns the current position without advancing.
func (c *Cursor) Peek() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

var rateMarkers = []string{"rate limit", "rate-limit", "ratelimit", "too many requests", "429", "quota exceeded", "slow down"}

// structured401or403 is spec §A5.4's "structured HTTP 401/403": a status word
// followed by optional ':' '=' or quote and the number.
var structured401or403 = lazyregexp.New(`(?i)(http|status code|status|client error|error code)\s*[:='"]?\s*(401|403)\b`)

// RateLimitish reports whether an error text looks like throttling (spec §A5.4
// marker list, case-insensitive).
func RateLimitish(msg string) bool {
	m := strings.ToLower(msg)
	for _, k := range rateMarkers {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

// SearchFailoverEligible is the described system's search classifier (spec
// §A5.4): throttling text, or a structured HTTP 401/403.
func SearchFailoverEligible(msg string) bool {
	return RateLimitish(msg) || structured401or403.MatchString(msg)
}

// capMarkers are the known gaps of spec §A5.4 (#96185, #91609, #113892):
// daily caps and IP-reputation blocks of a free tier, which the described
// system's marker list misses so they stop the ring.
var capMarkers = []string{"daily_cap", "daily cap", "daily limit", "credits", "insufficient credit", "payment required", "ip reputation", "ip-reputation", "blocked your ip", "ip address has been blocked"}

// MovesRing reports whether a failed keyless vendor call should move on to the
// next ring vendor. Gatehouse decides on the structured code first: the
// vendor refused the caller (vendor_auth: 401/403, which includes IP-reputation
// blocks), is out of credit or capped (vendor_quota: 402, daily caps) or is
// throttling (vendor_rate_limited) — these are about the vendor, not the query,
// so the next vendor may well answer. For an error without a code the
// described system's text classifier applies, plus the cap/IP-block markers it
// lacks. Every other code (a bad query, a malformed answer, a page's own
// status) stops the walk.
func MovesRing(err error) bool {
	if err == nil {
		return false
	}
	switch reason.Of(err) {
	case reason.VendorAuth, reason.VendorQuota, reason.VendorRateLimited:
		return true
	case "":
		return SearchFailoverEligible(err.Error()) || capMarked(err.Error())
	}
	// A coded error is judged by its code alone: a page's own HTTP 403
	// (http_status) is the page's problem, whatever its text says.
	return false
}

func capMarked(msg string) bool {
	m := strings.ToLower(msg)
	for _, k := range capMarkers {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

// ExtractMovesRing reports whether a keyless extract batch should move to the
// next vendor (spec §A5.4): only when every row failed for a vendor-side
// reason (MovesRing). A batch with any success, or with page-level failures
// (a page's own 403 or 404), is returned as it is.
func ExtractMovesRing(pages []Page) bool {
	if len(pages) == 0 {
		return false
	}
	for _, p := range pages {
		if p.Err == nil || !MovesRing(p.Err) {
			return false
		}
	}
	return true
}
