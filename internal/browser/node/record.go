// Package node is the replica's side of Gatehouse's browser nodes (issue
// 19): a node (gatehouse browser-node) runs one Chromium and its egress
// proxy and registers a Record in Redis; replicas read the records
// (Registry), judge the address a record names against browser.node_allow
// (Allow) before dialing it, and drive the node's sessions over CDP and the
// node's proxy control API (Client, Proxy). The node's own serving side is
// internal/browser/nodeserver.
//
// A record in Redis is data, not trust (DESIGN.md §3b): Decode rejects
// anything Gatehouse would not have written, and no address a record names
// is dialed unless Allow allows it.
package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/strictjson"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Key layout in Redis: KeyPrefix + Record.ID, a JSON Record whose TTL is
// the heartbeat's (HeartbeatTTL): a node that stops refreshing it is gone
// within HeartbeatTTL.
const (
	KeyPrefix = "gatehouse:browser-node:"
	// HeartbeatTTL is the lifetime of a node's record; the node refreshes it
	// every HeartbeatTTL/3.
	HeartbeatTTL = 6 * time.Second
	// MaxRecordBytes bounds a record read from Redis; a longer value is
	// rejected unread.
	MaxRecordBytes = 4096
	// MaxCapacity bounds Record.Capacity (sessions per node).
	MaxCapacity = 10000
	// RecordVersion is the record format written by this version.
	RecordVersion = 1
)

// Record is one browser node as registered in Redis.
type Record struct {
	Version int `json:"v"`
	// ID is the node's random id, 32 lowercase hex digits; it is also the
	// key's suffix.
	ID string `json:"id"`
	// Addr is where replicas reach the node: host:port of its listener (an
	// IP literal or a DNS name). The CDP endpoint is ws://Addr/cdp and the
	// proxy control API http://Addr/v1/.
	Addr string `json:"addr"`
	// Capacity is the node's --max-sessions (1–MaxCapacity).
	Capacity int `json:"capacity"`
	// Sessions is the number of sessions open on the node when the record
	// was written (0–Capacity).
	Sessions int `json:"sessions"`
	// Heartbeat is when the record was written (Unix milliseconds).
	Heartbeat int64 `json:"heartbeat_ms"`
}

// Key returns the record's Redis key.
func (r Record) Key() string { return KeyPrefix + r.ID }

// Load is Sessions/Capacity, the placement order (fewest sessions relative
// to capacity first).
func (r Record) Load() float64 { return float64(r.Sessions) / float64(r.Capacity) }

// Full reports whether the node has no room for another session.
func (r Record) Full() bool { return r.Sessions >= r.Capacity }

// Encode returns r as JSON after Validate.
func (r Record) Encode() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

var idRe = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ErrRecord is wrapped by every error of Decode and Validate.
var ErrRecord = errors.New("browser node record")

// Validate checks every field: version, id, addr (host:port with a port
// 1–65535 and a host that is an IP literal without zone or an LDH DNS name),
// capacity 1–MaxCapacity, sessions 0–capacity, a heartbeat after 2020.
func (r Record) Validate() error {
	bad := func(f string, a ...any) error { return fmt.Errorf("%w: %s", ErrRecord, fmt.Sprintf(f, a...)) }
	switch {
	case r.Version != RecordVersion:
		return bad("version %d is not %d", r.Version, RecordVersion)
	case !idRe.MatchString(r.ID):
		return bad("id is not 32 hex digits")
	case r.Capacity < 1 || r.Capacity > MaxCapacity:
		return bad("capacity %d is outside 1–%d", r.Capacity, MaxCapacity)
	case r.Sessions < 0 || r.Sessions > r.Capacity:
		return bad("sessions %d is outside 0–capacity", r.Sessions)
	case r.Heartbeat < 1577836800000:
		return bad("heartbeat is not a time")
	}
	if _, _, err := SplitAddr(r.Addr); err != nil {
		return bad("%v", err)
	}
	return nil
}

// SplitAddr parses a node address host:port: host an IP literal (no zone;
// IPv6 in brackets) or a lowercase LDH DNS name of at most 253 chars, port
// 1–65535. ip is valid when host is an IP literal.
func SplitAddr(addr string) (host string, port uint16, err error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("addr is not host:port")
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != p {
		return "", 0, fmt.Errorf("addr port is not 1–65535")
	}
	if a, perr := netip.ParseAddr(h); perr == nil {
		if a.Zone() != "" {
			return "", 0, fmt.Errorf("addr has an IPv6 zone")
		}
		return a.Unmap().String(), uint16(n), nil
	}
	if !validHost(h) {
		return "", 0, fmt.Errorf("addr host is not an IP address or DNS name")
	}
	return h, uint16(n), nil
}

// validHost reports whether s is a lowercase LDH DNS name (RFC 1123).
func validHost(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Decode parses a record read from Redis under key: at most MaxRecordBytes
// of one JSON object with exactly the fields of Record (an unknown field, a
// wrong type, trailing data or a failed Validate is an error wrapping
// ErrRecord), whose id matches key's suffix. It never panics (FuzzDecode).
func Decode(key string, b []byte) (Record, error) {
	var r Record
	if len(b) > MaxRecordBytes {
		return r, fmt.Errorf("%w: longer than %d bytes", ErrRecord, MaxRecordBytes)
	}
	if err := strictjson.Decode(b, &r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrRecord, err)
	}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	if key != r.Key() {
		return Record{}, fmt.Errorf("%w: id does not match the key", ErrRecord)
	}
	return r, nil
}
