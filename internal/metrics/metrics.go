// Package metrics defines Gatehouse's Prometheus metrics (issue 18,
// "Operability") and the functions other packages call to record them. The
// exposition format is Prometheus text, served by Handler.
//
// Label values come only from closed sets: tool names (the registry's tools)
// and reason codes (internal/reason; any other value is recorded as
// "other"), plus the fixed session kinds "mcp" and "browser". A URL, host,
// query or principal name is never a label value: it would make the number
// of series unbounded and would publish who read what to anyone allowed to
// scrape.
//
// A Set owns its own prometheus.Registry (never the global default
// registerer), so tests build their own with New. Default returns the
// process's Set: the package-level function RedisError records on it, for packages
// that have no Set handed to them. Cache lookups are counted by the MCP
// server from each web_extract row's meta.cached (so the disk cache and the
// Redis cache are counted the same way, once).
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Metric names (namespace gatehouse_). Durations are in seconds, as
// Prometheus convention asks.
const (
	NameCalls         = "gatehouse_tool_calls_total"           // counter{tool,outcome}: outcome ok|refused|cancelled
	NameRefusals      = "gatehouse_refusals_total"             // counter{tool,reason}: one per refused call or refused row
	NameDuration      = "gatehouse_tool_call_duration_seconds" // histogram{tool}
	NameCache         = "gatehouse_cache_lookups_total"        // counter{result}: hit|miss
	NameRedisErrors   = "gatehouse_redis_errors_total"         // counter
	NameSessions      = "gatehouse_open_sessions"              // gauge{kind}: mcp|browser
	NameInflight      = "gatehouse_calls_in_flight"            // gauge: HTTP tool calls running (the replica cap counts these)
	NameReplicaRefuse = "gatehouse_replica_cap_refusals_total" // counter: calls answered 429 at mcp.replica_max_calls
)

// otherReason is the label value of a reason code that internal/reason does
// not know (it keeps the label set closed).
const otherReason = "other"

// Set is one set of Gatehouse metrics on its own registry. Methods are safe
// for concurrent use; a nil *Set records nothing.
type Set struct {
	reg       *prometheus.Registry
	calls     *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	cache     *prometheus.CounterVec
	redisErrs prometheus.Counter
	inflight  prometheus.Gauge
	capped    prometheus.Counter

	mu       sync.Mutex
	sessions map[string]func() int // kind → counter of open sessions
}

// New returns a Set registered on a fresh registry, with the Go runtime and
// process collectors beside Gatehouse's own metrics.
func New() *Set {
	s := &Set{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameCalls, Help: "Tool calls answered, by tool and outcome (ok, refused: a whole-call refusal, cancelled).",
		}, []string{"tool", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameRefusals, Help: "Refusals by tool and reason code: one per refused call, or per refused URL of a batch.",
		}, []string{"tool", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: NameDuration, Help: "Tool call latency in seconds, by tool.",
			// 5 ms … 120 s: a cache hit, a fetch, a rendered page, a slow vendor.
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"tool"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameCache, Help: "Extract cache lookups by result (hit, miss), counted per page of web_extract results.",
		}, []string{"result"}),
		redisErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: NameRedisErrors, Help: "Errors talking to the shared-state Redis (GATEHOUSE_REDIS_URL).",
		}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameInflight, Help: "Tool calls running on this replica's HTTP listener.",
		}),
		capped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: NameReplicaRefuse, Help: "Tool calls answered HTTP 429 because the replica ran mcp.replica_max_calls calls.",
		}),
		sessions: map[string]func() int{},
	}
	s.reg.MustRegister(s.calls, s.refusals, s.duration, s.cache, s.redisErrs, s.inflight, s.capped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		sessionCollector{s, newSessionsDesc()})
	// Present from the start at 0, so a rate() over a fresh replica works.
	s.cache.WithLabelValues("hit")
	s.cache.WithLabelValues("miss")
	return s
}

// Default returns the process's Set, served by `gatehouse mcp`. It is built
// on first use, not at package initialisation: every CLI command links
// this package, and only the MCP server needs it.
func Default() *Set { return defaultSet() }

var defaultSet = sync.OnceValue(New)

// Registry returns the Set's registry (to gather in tests).
func (s *Set) Registry() *prometheus.Registry { return s.reg }

// Handler serves the Set in the Prometheus text exposition format.
func (s *Set) Handler() http.Handler {
	return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{})
}

// Call records one answered tool call: its latency, its outcome and one
// refusal per reason code in reasons (a whole-call refusal's code, or each
// refused row's). tool must be a registered tool's name.
func (s *Set) Call(tool string, d time.Duration, refused, cancelled bool, reasons []reason.Code) {
	if s == nil {
		return
	}
	outcome := "ok"
	switch {
	case cancelled:
		outcome = "cancelled"
	case refused:
		outcome = "refused"
	}
	s.calls.WithLabelValues(tool, outcome).Inc()
	s.duration.WithLabelValues(tool).Observe(d.Seconds())
	for _, c := range reasons {
		s.Refusal(tool, c)
	}
}

// Refusal records one refusal of tool with code c; a code internal/reason
// does not know is recorded as "other".
func (s *Set) Refusal(tool string, c reason.Code) {
	if s == nil {
		return
	}
	l := string(c)
	if !c.Known() {
		l = otherReason
	}
	s.refusals.WithLabelValues(tool, l).Inc()
}

// Cache records one extract cache lookup: hit or miss.
func (s *Set) Cache(hit bool) {
	if s == nil {
		return
	}
	if hit {
		s.cache.WithLabelValues("hit").Inc()
	} else {
		s.cache.WithLabelValues("miss").Inc()
	}
}

// RedisError records one failed Redis operation.
func (s *Set) RedisError() {
	if s != nil {
		s.redisErrs.Inc()
	}
}

// InFlight adds d (+1 when a call starts, -1 when it ends) to the
// calls-in-flight gauge.
func (s *Set) InFlight(d int) {
	if s != nil {
		s.inflight.Add(float64(d))
	}
}

// ReplicaCapped records one call refused at mcp.replica_max_calls.
func (s *Set) ReplicaCapped() {
	if s != nil {
		s.capped.Inc()
	}
}

// Sessions makes the open-sessions gauge of kind ("mcp" or "browser") read
// n at each scrape; a later call for the same kind replaces n, nil removes
// it.
func (s *Set) Sessions(kind string, n func() int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == nil {
		delete(s.sessions, kind)
		return
	}
	s.sessions[kind] = n
}

// newSessionsDesc describes the open-sessions gauge.
func newSessionsDesc() *prometheus.Desc {
	return prometheus.NewDesc(NameSessions, "Sessions open on this replica, by kind (mcp: MCP protocol sessions; browser: browser sessions).", []string{"kind"}, nil)
}

// sessionCollector reads the session counters at scrape time; kinds with no
// counter report 0, so both series always exist.
type sessionCollector struct {
	s    *Set
	desc *prometheus.Desc
}

func (c sessionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c sessionCollector) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	fns := map[string]func() int{"mcp": nil, "browser": nil}
	for k, f := range c.s.sessions {
		fns[k] = f
	}
	c.s.mu.Unlock()
	for k, f := range fns {
		n := 0
		if f != nil {
			n = f()
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), k)
	}
}

// RedisError records a failed Redis operation on Default: the shared-state
// package (internal/state) calls it for every error other than a missing
// key.
func RedisError() { Default().RedisError() }
