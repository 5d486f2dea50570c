package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/metrics"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

// audit hands one call's events to Options.Audit: a KindGate event per URL
// the call asked for (arguments "url" or "urls"), with the gates' verdict on
// it as the result reports it, then the KindCall event. The gates run deep
// in internal/web and internal/browser; their verdicts all surface here, in
// the result (a whole-call refusal names the batch item it refused by index;
// a batch row carries its own reason), so this is the one place that writes
// the audit trail. Every URL is redacted by the audit.Writer.
func (s *Server) audit(ctx context.Context, tool string, d time.Duration, res *tools.Result, args json.RawMessage) {
	h := s.opts.Audit
	if h == nil {
		return
	}
	now := time.Now()
	base := audit.Event{Time: now, Principal: principal.From(ctx), Tool: tool, DurationMS: d.Milliseconds()}
	top := topOutcome(res)
	for _, g := range gateVerdicts(res, top, args) {
		e := base
		e.Kind, e.URL, e.Decision, e.Reason = audit.KindGate, g.url, audit.Allow, g.reason
		if g.reason != "" {
			e.Decision = audit.Refuse
		}
		h.Audit(e)
	}
	e := base
	e.Kind, e.Decision = audit.KindCall, audit.Allow
	if res.Refused {
		e.Decision, e.Reason = audit.Refuse, top.Reason
	}
	h.Audit(e)
}

// outcome is the top level every tool result shares: a whole-call refusal's
// reason code and, for batch refusals, the item it refused.
type outcome struct {
	Reason string `json:"reason"`
	Index  *int   `json:"index"`
}

func topOutcome(res *tools.Result) outcome {
	var o outcome
	if b, err := json.Marshal(res.Value); err == nil {
		json.Unmarshal(b, &o)
	}
	return o
}

type verdict struct{ url, reason string }

// gateVerdicts lists the verdict on each URL a call asked for: web_extract
// and web_check rows one by one (each row names its URL and reason); a
// whole-call refusal of a batch on the URL it names by index; a tool with
// one "url" argument (browser_navigate) by the call's outcome. Tools that
// ask for no URL give none.
func gateVerdicts(res *tools.Result, top outcome, args json.RawMessage) []verdict {
	var in struct {
		URL  *string           `json:"url"`
		URLs []json.RawMessage `json:"urls"`
	}
	json.Unmarshal(args, &in)
	switch v := res.Value.(type) {
	case *tools.ExtractOutput:
		if v.ExtractResponse != nil && !res.Refused {
			out := make([]verdict, 0, len(v.Results))
			for _, r := range v.Results {
				out = append(out, verdict{r.URL, string(r.Reason)})
			}
			return out
		}
	case *tools.CheckOutput:
		out := make([]verdict, 0, len(v.Results))
		for _, r := range v.Results {
			rc := ""
			if r.Reason != nil {
				rc = string(*r.Reason)
			}
			out = append(out, verdict{r.URL, rc})
		}
		return out
	}
	if len(in.URLs) > 0 {
		if res.Refused && top.Index != nil && *top.Index >= 0 && *top.Index < len(in.URLs) {
			return []verdict{{itemURL(in.URLs[*top.Index]), top.Reason}}
		}
		return nil
	}
	if in.URL != nil {
		rc := ""
		if res.Refused {
			rc = top.Reason
		}
		return []verdict{{*in.URL, rc}}
	}
	return nil
}

// itemURL is the URL of one web_extract urls item: a string, or an object
// carrying it in "url".
func itemURL(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		URL string `json:"url"`
	}
	json.Unmarshal(raw, &o)
	return o.URL
}

// countCache records each successful web_extract row as an extract cache hit
// (meta.cached) or miss.
func countCache(m *metrics.Set, res *tools.Result) {
	v, ok := res.Value.(*tools.ExtractOutput)
	if !ok || v.ExtractResponse == nil {
		return
	}
	for _, r := range v.Results {
		if r.OK() && r.Meta != nil {
			m.Cache(r.Meta.Cached)
		}
	}
}

// openSessions is the number of MCP sessions open (the open-sessions gauge).
func (s *Server) openSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// toolLabel is name when it is a registered tool's, else "other": metric
// labels and audit tool fields come from a closed set, never from a
// client's free text.
func (s *Server) toolLabel(name string) string {
	if s.toolNames[name] {
		return name
	}
	return "other"
}

// refusedHTTP records the HTTP-level refusal (replica cap, drain, principal
// limits) of the tools/call requests named in tools, before any ran: one
// refusal per call in the metrics and one audit call line each (principal,
// tool, decision refuse, reason).
func (s *Server) refusedHTTP(ctx context.Context, tools []string, code reason.Code) {
	name := principal.From(ctx)
	now := time.Now()
	for _, t := range tools {
		tool := s.toolLabel(t)
		s.opts.Metrics.Refusal(tool, code)
		if s.opts.Audit != nil {
			s.opts.Audit.Audit(audit.Event{Time: now, Kind: audit.KindCall, Principal: name, Tool: tool, Decision: audit.Refuse, Reason: string(code)})
		}
	}
}
