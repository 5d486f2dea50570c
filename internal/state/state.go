// Package state is Gatehouse's shared-state switch (issue 18, "One
// shared-state switch"): with GATEHOUSE_REDIS_URL (or config state.redis_url)
// set, every replica keeps what a call can reach across calls in one Redis:
// the extract cache (cache.SharedEntries), the search memo and its single
// flight (cache.SharedFlight), stored full texts (truncate.PageStore) and
// the per-principal call limits (principal.Limiter). Without it nothing here
// is used and Gatehouse runs as the embedded default (disk cache, one
// process), unchanged.
//
// Rules (docs/state.md):
//   - Redis down is a typed refusal, state_unavailable, naming the Redis
//     host (never the password); never a silent fallback to per-replica
//     state. The client reconnects by itself: calls succeed again once Redis
//     is back, with no restart.
//   - Values read from Redis are data, not trust: every decoder (decode*.go)
//     rejects truncated values, wrong types and names outside the store with
//     a state_corrupt *reason.Error, never a panic.
//   - Everything a call can reach across calls is scoped to its principal
//     (principal.From): stored pages and memo entries live under a hash of the
//     principal's name; the extract cache of public pages is shared.
//
// The Redis implementation is in redis.go; the value encodings in codec.go.
package state

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Environment variables read at the edge by FromConfig.
const (
	EnvRedisURL      = "GATEHOUSE_REDIS_URL" // wins over config state.redis_url
	EnvRedisPassword = "REDIS_PASSWORD"      // the password, when not in the URL
	ConfigKey        = "state.redis_url"
)

// Backend kinds, as `gatehouse doctor` shows them.
const (
	KindDisk  = "disk"  // the embedded default: no shared state
	KindRedis = "redis" // GATEHOUSE_REDIS_URL / state.redis_url
)

// Target is a validated Redis URL with its secret kept apart: Host and DB
// are safe to print; the password is never part of String or any message.
type Target struct {
	TLS      bool   // rediss://
	Host     string // host:port (port 6379 when the URL has none)
	DB       int    // database number (the URL path), 0 when none
	Username string // ACL user, "" for the default user
	password string
	Source   string // where the URL came from: EnvRedisURL or ConfigKey
}

// String returns the target with no secret: "redis://host:port/db"
// (rediss:// for TLS).
func (t Target) String() string {
	scheme := "redis"
	if t.TLS {
		scheme = "rediss"
	}
	return scheme + "://" + t.Host + "/" + strconv.Itoa(t.DB)
}

// HasPassword reports whether a password will be sent (never which).
func (t Target) HasPassword() bool { return t.password != "" }

// ParseURL validates raw as a Redis URL: scheme redis or rediss, a host, an
// optional port (1–65535), an optional path "/N" with N a database number
// 0–15, optional user and password, and nothing else (no query, no
// fragment). password, when not empty, is used when the URL carries none
// (REDIS_PASSWORD). source names where raw came from, for messages.
//
// A refusal is a *reason.Error with code state_bad_url whose message names
// source and the expected form and never repeats raw (it may hold a
// password).
func ParseURL(raw, password, source string) (Target, error) {
	bad := func(what string) (Target, error) {
		return Target{}, reason.Newf(reason.StateBadURL, "",
			"%s is not a usable Redis URL: %s. Expected redis://[user[:password]@]host[:port][/db] (rediss:// for TLS, db 0-15); "+
				"put the password in %s, or unset %s to run without shared state.", source, what, EnvRedisPassword, source)
	}
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return bad("it does not parse as a URL")
	}
	t := Target{Source: source}
	switch strings.ToLower(u.Scheme) {
	case "redis":
	case "rediss":
		t.TLS = true
	case "":
		return bad("it has no scheme")
	default:
		return bad("the scheme must be redis or rediss")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return bad("it has no host")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return bad("query strings and fragments are not supported")
	}
	port := u.Port()
	if port == "" {
		port = "6379"
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return bad("the port is not a number from 1 to 65535")
	}
	if strings.ContainsAny(u.Hostname(), " /\\@") {
		return bad("the host name is not valid")
	}
	t.Host = net.JoinHostPort(u.Hostname(), port)
	switch p := strings.Trim(u.Path, "/"); {
	case p == "":
	default:
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 15 || strconv.Itoa(n) != p {
			return bad("the path must be a database number from 0 to 15")
		}
		t.DB = n
	}
	if u.User != nil {
		user := u.User.Username()
		pw, hasPW := u.User.Password()
		if !hasPW {
			// redis://secret@host: a lone userinfo is the password (as
			// go-redis and redis-cli read it); redis://user:@host names an
			// ACL user whose password comes from REDIS_PASSWORD.
			pw, user = user, ""
		}
		if pw != "" && source == ConfigKey {
			return bad("it carries a password, which config.yaml must not hold (`gatehouse config get` prints values)")
		}
		t.Username, t.password = user, pw
	}
	if t.password == "" {
		t.password = password
	}
	return t, nil
}

// FromConfig returns the Target of this process: GATEHOUSE_REDIS_URL (from
// dotenv, then the process environment: config.Lookup) when set, else
// cfg.State.RedisURL; REDIS_PASSWORD the same way. ok is false when neither
// is set (the embedded default). A malformed URL is a state_bad_url error,
// which must refuse start-up. cfg nil means config.Default().
func FromConfig(cfg *config.Config, dotenv map[string]string) (t Target, ok bool, err error) {
	if cfg == nil {
		cfg = config.Default()
	}
	raw, source := config.Lookup(dotenv, EnvRedisURL), EnvRedisURL
	if raw == "" {
		raw, source = strings.TrimSpace(cfg.State.RedisURL), ConfigKey
	}
	if raw == "" {
		return Target{}, false, nil
	}
	t, err = ParseURL(raw, config.Lookup(dotenv, EnvRedisPassword), source)
	return t, err == nil, err
}

// Unavailable returns the state_unavailable refusal for Redis at host: the
// message names the host (never the password) and the fix; cause is kept
// for errors.Is/As and logs (go-redis errors carry no password).
func Unavailable(host string, cause error) *reason.Error {
	what := "did not answer"
	var ne net.Error
	switch ge := reason.As(cause); {
	case ge != nil && ge.Gate != "":
		what = "is an address Gatehouse never connects to (" + string(ge.Code) + ", the egress guard's rule)"
	case errors.Is(cause, context.DeadlineExceeded), errors.As(cause, &ne) && ne.Timeout():
		what = "timed out"
	case errors.Is(cause, syscall.ECONNREFUSED):
		what = "refused the connection"
	case cause != nil && (strings.Contains(cause.Error(), "WRONGPASS") || strings.Contains(cause.Error(), "NOAUTH")):
		what = "refused the credentials (check " + EnvRedisPassword + " or the URL's user)"
	}
	return reason.Wrap(reason.StateUnavailable, "",
		"Shared state unavailable: Redis at "+host+" "+what+". This call needs the shared state and Gatehouse does not fall back to "+
			"per-replica state; start or fix Redis (calls succeed again once it answers, no restart needed), or unset "+
			EnvRedisURL+" to run a single replica on the embedded default.", cause)
}

// Corrupt returns the state_corrupt refusal for a value under key that
// Gatehouse did not write (what says how it is wrong). The key holds no
// secret; the value is never quoted.
func Corrupt(key, what string) *reason.Error {
	return reason.Newf(reason.StateCorrupt, "",
		"The shared state holds a value under %s that Gatehouse did not write (%s); it was not used. Delete the key in Redis (DEL %s) or wait for its TTL.",
		key, what, key)
}

// Health is what Ping measured, for doctor and readiness checks.
type Health struct {
	Kind    string        // KindDisk or KindRedis
	Host    string        // Redis host:port ("" for disk); never a secret
	Latency time.Duration // one PING round trip; 0 when it failed or for disk
	Err     error         // nil when reachable; a state_unavailable *reason.Error otherwise
}
