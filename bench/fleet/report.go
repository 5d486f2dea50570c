package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// CPUBudget is the most CPU time per call the shared fleet may spend,
// relative to the embedded default (issue 18, "Load and fault test").
const CPUBudget = 1.2

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// Table renders the results as a markdown table, one column per run (base
// may be nil).
func Table(fleet, base *Result) string {
	runs := []*Result{fleet}
	if base != nil {
		runs = append(runs, base)
	}
	var b strings.Builder
	row := func(name string, cell func(r *Result) string) {
		b.WriteString("| " + name + " |")
		for _, r := range runs {
			b.WriteString(" " + cell(r) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("| measure |")
	for _, r := range runs {
		b.WriteString(" " + r.Label + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(runs)) + "\n")
	row("tasks completed", func(r *Result) string { return fmt.Sprintf("%d / %d", r.Completed, r.Tasks) })
	row("tool calls answered", func(r *Result) string { return fmt.Sprint(r.Calls) })
	row("failed attempts (each retried once) → failed after retry", func(r *Result) string {
		return fmt.Sprintf("%d → %d", r.FailedAttempts, r.FailedAfterRetry)
	})
	for _, t := range toolNames {
		row(t+" p50 / p99", func(r *Result) string {
			return fmt.Sprintf("%s / %s (n=%d)", ms(percentile(r.Lat[t], 50)), ms(percentile(r.Lat[t], 99)), len(r.Lat[t]))
		})
	}
	row("extract cache hit ratio (meta.cached)", func(r *Result) string {
		return fmt.Sprintf("%.2f (%d / %d rows)", r.HitRatio(), r.CachedRows, r.ExtractRows)
	})
	row("page fetches reaching the origin", func(r *Result) string { return fmt.Sprint(r.OriginFetches) })
	row("own stored page read back (web_read)", func(r *Result) string { return fmt.Sprintf("%d / %d", r.OwnReadsOK, r.OwnReads) })
	row("control: same principal, another task's page read", func(r *Result) string { return fmt.Sprintf("%d / %d", r.SameReadsOK, r.SameReads) })
	row("cross-principal reads that returned the page", func(r *Result) string {
		s := fmt.Sprintf("**%d** of %d tried (%d not_found)", r.CrossSucceeded, r.CrossReads, r.CrossNotFound)
		if r.CrossNoTarget > 0 {
			s += fmt.Sprintf(", %d tasks without a target", r.CrossNoTarget)
		}
		if !r.Features.Tokens {
			s += " (no --tokens: one principal)"
		}
		return s
	})
	row("searches reaching the backend / issued", func(r *Result) string {
		return fmt.Sprintf("%d / %d (%d with meta.cached)", r.SearchBackend, r.SearchIssued, r.SearchCachedRows)
	})
	row("replica CPU, user+sys", func(r *Result) string { return fmt.Sprintf("%.2f s", r.CPU.Seconds()) })
	row("**replica CPU per call**", func(r *Result) string { return "**" + ms(r.CPUPerCall()) + "**" })
	row("Redis CPU (per call)", func(r *Result) string {
		if !r.Redis {
			return "–"
		}
		return fmt.Sprintf("%.2f s (%s)", r.RedisCPU.Seconds(), ms(r.RedisCPU/time.Duration(max(r.Calls, 1))))
	})
	row("Redis memory after the run (keys)", func(r *Result) string {
		if !r.Redis {
			return "–"
		}
		return fmt.Sprintf("%.1f MiB (%d keys)", float64(r.RedisMemory)/(1<<20), r.RedisKeys)
	})
	row("wall time", func(r *Result) string { return fmt.Sprintf("%.1f s", r.Wall.Seconds()) })
	row("HAProxy: requests per replica (status)", func(r *Result) string {
		var parts []string
		for _, s := range r.HAProxy {
			parts = append(parts, fmt.Sprintf("%s %d (%s)", s.Name, s.Sessions, s.Status))
		}
		redis, retr := 0, 0
		for _, s := range r.HAProxy {
			redis += s.Redispatch
			retr += s.Retries
		}
		return strings.Join(parts, ", ") + fmt.Sprintf("; retries %d, redispatched %d; check %s", retr, redis, r.Check)
	})
	row("HTTP 429 waited out (replica call cap)", func(r *Result) string {
		cap := "default mcp.replica_max_calls"
		if r.ReplicaMaxCalls > 0 {
			cap = fmt.Sprintf("mcp.replica_max_calls %d", r.ReplicaMaxCalls)
		}
		return fmt.Sprintf("%d (%s)", r.Answered429, cap)
	})
	row("MCP protocol negotiated", func(r *Result) string {
		var parts []string
		for v, n := range r.Protocols {
			parts = append(parts, fmt.Sprintf("%s ×%d", v, n))
		}
		sort.Strings(parts)
		return strings.Join(parts, ", ")
	})
	for _, r := range runs {
		if len(r.Failures) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nFailures and refusals, %s:\n", r.Label)
		type kv struct {
			k string
			n int
		}
		var fs []kv
		for k, n := range r.Failures {
			fs = append(fs, kv{k, n})
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].n > fs[j].n || fs[i].n == fs[j].n && fs[i].k < fs[j].k })
		for i, f := range fs {
			if i == 12 {
				fmt.Fprintf(&b, "  … %d more kinds\n", len(fs)-i)
				break
			}
			fmt.Fprintf(&b, "  %5d  %s\n", f.n, f.k)
		}
	}
	if missing := missingFeatures(fleet.Features); missing != "" {
		fmt.Fprintf(&b, "\nNot in the binary under test: %s.\n", missing)
	}
	return b.String()
}

func missingFeatures(f Features) string {
	var m []string
	if !f.Tokens {
		m = append(m, "mcp --tokens (principals X and Y share one token)")
	}
	if !f.Readyz {
		m = append(m, "/readyz (HAProxy checks TCP only)")
	}
	return strings.Join(m, "; ")
}

// Summary is the last line: the targets and whether each was met.
func Summary(fleet, base *Result) (string, bool) {
	// Without --tokens every client is one principal: zero cross-principal
	// reads would show nothing.
	ok := fleet.Completed == fleet.Tasks && fleet.CrossSucceeded == 0 && fleet.FailedAfterRetry == 0 && fleet.CrossReads > 0 && fleet.Features.Tokens
	s := fmt.Sprintf("fleet: %d/%d tasks completed, %d calls (%d failed attempts retried, %d failed after retry), %d cross-principal reads, cache hit %.2f, searches %d/%d reached the backend, CPU/call %s",
		fleet.Completed, fleet.Tasks, fleet.Calls, fleet.FailedAttempts, fleet.FailedAfterRetry, fleet.CrossSucceeded,
		fleet.HitRatio(), fleet.SearchBackend, fleet.SearchIssued, ms(fleet.CPUPerCall()))
	if fleet.Killed != "" {
		s += fmt.Sprintf(", replica %s SIGKILLed after %d calls", fleet.Killed, fleet.KilledAt)
	}
	if base != nil && base.CPUPerCall() > 0 {
		ratio := float64(fleet.CPUPerCall()) / float64(base.CPUPerCall())
		s += fmt.Sprintf(" vs %s embedded (%.2f×, budget %.1f×)", ms(base.CPUPerCall()), ratio, CPUBudget)
		ok = ok && ratio <= CPUBudget && base.Completed == base.Tasks
	}
	if ok {
		return s + ": PASS", true
	}
	return s + ": FAIL", false
}

// MedianSummary is the last line of several rounds: every round's targets
// (tasks, cross-principal reads, retries) must hold, and the CPU ratio is
// the median of the rounds' ratios.
func MedianSummary(fleets, bases []*Result) (string, bool) {
	ok := true
	var ratios []float64
	tasks, done, calls, failed, retried, cross := 0, 0, 0, 0, 0, 0
	for i, f := range fleets {
		tasks += f.Tasks
		done += f.Completed
		calls += f.Calls
		failed += f.FailedAfterRetry
		retried += f.FailedAttempts
		cross += f.CrossSucceeded
		ok = ok && f.Completed == f.Tasks && f.CrossSucceeded == 0 && f.FailedAfterRetry == 0 && f.CrossReads > 0 && f.Features.Tokens
		if i < len(bases) && bases[i].CPUPerCall() > 0 {
			ratios = append(ratios, float64(f.CPUPerCall())/float64(bases[i].CPUPerCall()))
			ok = ok && bases[i].Completed == bases[i].Tasks
		}
	}
	s := fmt.Sprintf("fleet, %d rounds: %d/%d tasks completed, %d calls (%d failed attempts retried, %d failed after retry), %d cross-principal reads",
		len(fleets), done, tasks, calls, retried, failed, cross)
	if len(ratios) > 0 {
		sorted := append([]float64(nil), ratios...)
		sort.Float64s(sorted)
		med := sorted[len(sorted)/2]
		if len(sorted)%2 == 0 {
			med = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
		}
		var parts []string
		for _, r := range ratios {
			parts = append(parts, fmt.Sprintf("%.2f", r))
		}
		s += fmt.Sprintf(", CPU per call vs embedded %s× (median %.2f×, budget %.1f×)", strings.Join(parts, ", "), med, CPUBudget)
		ok = ok && med <= CPUBudget
	}
	if ok {
		return s + ": PASS", true
	}
	return s + ": FAIL", false
}
