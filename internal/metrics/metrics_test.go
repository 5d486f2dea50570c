package metrics_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/metrics"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

func scrape(t *testing.T, s *metrics.Set) string {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// TestClosedLabelSets: a reason code internal/reason does not know is
// recorded as "other", never as itself (label values stay a closed set);
// sets are independent; a nil Set records nothing.
func TestClosedLabelSets(t *testing.T) {
	a, b := metrics.New(), metrics.New()
	a.Call("web_extract", 20*time.Millisecond, true, false, []reason.Code{reason.SecretInURL, "https://evil.example/"})
	a.RedisError()
	a.Sessions("browser", func() int { return 3 })
	body := scrape(t, a)
	for _, want := range []string{
		`gatehouse_refusals_total{reason="secret_in_url",tool="web_extract"} 1`,
		`gatehouse_refusals_total{reason="other",tool="web_extract"} 1`,
		`gatehouse_tool_calls_total{outcome="refused",tool="web_extract"} 1`,
		`gatehouse_redis_errors_total 1`,
		`gatehouse_open_sessions{kind="browser"} 3`,
		`gatehouse_open_sessions{kind="mcp"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(body, "evil.example") {
		t.Error("an unknown reason became a label value")
	}
	if strings.Contains(scrape(t, b), "gatehouse_redis_errors_total 1") {
		t.Error("two Sets share counters")
	}
	var nilSet *metrics.Set
	nilSet.Call("x", 0, false, false, nil) // must not panic
}
