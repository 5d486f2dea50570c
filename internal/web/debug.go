package web

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// redactAll returns a copy of ss with each passed through urlsafe.RedactLog
// (debug files persist on disk: spec §A6.7's broader log list).
func redactAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = urlsafe.RedactLog(s)
	}
	return out
}

// pageMetric is one page's truncation measurement in the debug file.
type pageMetric struct {
	URL           string `json:"url"`
	OriginalChars int    `json:"original_chars"`
	SentChars     int    `json:"sent_chars"`
	Truncated     bool   `json:"truncated"`
	Cached        bool   `json:"cached"`
}

// debugRecord is the per-call debug file (the seeds' logs/web_tools_debug_<UUID>.json).
type debugRecord struct {
	Tool              string       `json:"tool"`
	CallID            string       `json:"call_id"`
	StartedAt         time.Time    `json:"started_at"`
	DurationMS        int64        `json:"duration_ms"`
	URLs              []string     `json:"urls"`
	PagesExtracted    int          `json:"pages_extracted"`
	PagesTruncated    int          `json:"pages_truncated"`
	PagesFailed       int          `json:"pages_failed"`
	Errors            []string     `json:"error_reasons"`
	TruncationMetrics []pageMetric `json:"truncation_metrics"`
	Stages            []string     `json:"processing_stages"`
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// writeDebug writes the call's debug file when DebugDir is set. Failures are logged, never fatal.
func (s *Service) writeDebug(start time.Time, urls []string, rows []Result, metrics []pageMetric) {
	if s.d.DebugDir == "" {
		return
	}
	rec := debugRecord{
		Tool: "web_extract", CallID: newID(), StartedAt: start.UTC(),
		DurationMS: s.d.Now().Sub(start).Milliseconds(), URLs: redactAll(urls),
		TruncationMetrics: metrics,
		Stages:            []string{"normalize", "secret_gate", "ssrf_gate", "provider_resolution", "website_policy", "cache", "provider_call", "final_url_policy", "truncate_and_store"},
	}
	for _, r := range rows {
		if r.OK() {
			rec.PagesExtracted++
		} else {
			rec.PagesFailed++
			rec.Errors = append(rec.Errors, string(r.Reason))
		}
	}
	for i := range rec.TruncationMetrics {
		rec.TruncationMetrics[i].URL = urlsafe.RedactLog(rec.TruncationMetrics[i].URL)
	}
	for _, m := range metrics {
		if m.Truncated {
			rec.PagesTruncated++
		}
	}
	if err := os.MkdirAll(s.d.DebugDir, 0o700); err != nil {
		s.d.Logger.Warn("web_extract debug dir", "err", err)
		return
	}
	b, _ := json.MarshalIndent(rec, "", "  ")
	p := filepath.Join(s.d.DebugDir, "web_tools_debug_"+rec.CallID+".json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		s.d.Logger.Warn("web_extract debug write", "err", err)
		return
	}
	s.d.Logger.Debug("web_extract debug file written", "path", p)
}

// searchDebug is the per-call debug file of web_search: the query only as a
// sha256 fingerprint (spec §A2 step 9), never the query or any key.
type searchDebug struct {
	Tool        string    `json:"tool"`
	CallID      string    `json:"call_id"`
	StartedAt   time.Time `json:"started_at"`
	DurationMS  int64     `json:"duration_ms"`
	QuerySHA256 string    `json:"query_sha256"`
	Limit       int       `json:"limit"`
	Provider    string    `json:"provider,omitempty"`
	Rows        int       `json:"rows"`
	Cached      bool      `json:"cached"`
	ServedBy    string    `json:"served_by,omitempty"`
	RescuedFrom string    `json:"rescued_from,omitempty"`
	Reason      string    `json:"error_reason,omitempty"`
}

func (s *Service) writeSearchDebug(start time.Time, fp string, limit int, resp *SearchResponse) {
	if s.d.DebugDir == "" {
		return
	}
	rec := searchDebug{Tool: "web_search", CallID: newID(), StartedAt: start.UTC(), DurationMS: s.d.Now().Sub(start).Milliseconds(),
		QuerySHA256: fp, Limit: limit, Reason: string(resp.Reason)}
	if m := resp.Meta; m != nil {
		rec.Provider, rec.Cached, rec.ServedBy, rec.RescuedFrom = m.Provider, m.Cached, m.ServedBy, m.RescuedFrom
	}
	if resp.Data != nil {
		rec.Rows = len(resp.Data.Web)
	}
	if err := truncate.PrivateDir(s.d.DebugDir); err != nil {
		return
	}
	b, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.WriteFile(filepath.Join(s.d.DebugDir, "web_tools_debug_"+rec.CallID+".json"), b, 0o600); err != nil {
		s.d.Logger.Warn("web_search debug write", "err", err)
	}
}
