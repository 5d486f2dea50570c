package urlsafe

import (
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"strings"
	"testing"
)

// TestPathParamsGateAndRedactAgree: a credential-named ";name=value" path
// (matrix) parameter is refused by the secret gate exactly when Redact
// removes its value, one rule for both (the gate used to read only the
// query and fragment, so "/a;token=abc" was fetched while its log line was
// redacted).
func TestPathParamsGateAndRedactAgree(t *testing.T) {
	for _, tc := range []struct {
		url     string
		refused bool
	}{
		{"https://x.example/a;token=abc123/b", true},
		{"https://x.example/a;jsessionid=1;access_token=abc123", true},
		{"https://x.example/a;API-Key=abc123?q=1", true},
		{"https://x.example/a;x-api-key=abc123", true},            // an extension name
		{"https://x.example/a;next=%2Fcb%3Ftoken%3Dabc123", true}, // nested
		{"https://x.example/a;token=", false},                     // no value
		{"https://x.example/a;jsessionid=abc123/b", false},
		{"https://x.example/a;v=1/token/abc", false},
		{"https://x.example/;/a", false},
	} {
		u, perr := Parse(tc.url)
		if perr != nil {
			t.Fatalf("%s: %v", tc.url, perr)
		}
		err := CheckSecrets(tc.url, u, true)
		redacted := Redact(tc.url) != tc.url
		if (err != nil) != tc.refused || redacted != tc.refused {
			t.Errorf("%s: gate %v, redacted %v (%q); want both %v", tc.url, err, redacted, Redact(tc.url), tc.refused)
		}
		if err != nil && (err.Code != reason.SensitiveQueryParam || !strings.Contains(err.Message, "parameter")) {
			t.Errorf("%s: %v", tc.url, err)
		}
	}
}
