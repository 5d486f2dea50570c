package urlsafe

import (
	"strings"
	"testing"
)

// TestExtensionParamsGateAndRedactAgree: every credential name the
// redactor removes, the gate refuses for web_extract (hostile review:
// ?refresh_token=abc was fetched while the redactor printed
// refresh_token=[REDACTED]), while §A6.7's function itself keeps the
// spec's list (vector url.sensitive_query_param: refresh_token is not in it).
func TestExtensionParamsGateAndRedactAgree(t *testing.T) {
	for _, raw := range []string{
		"https://example.com/?refresh_token=abc",
		"https://example.com/?ID_TOKEN=abc",
		"https://storage.example.com/o?X-Goog-Signature=abc&X-Goog-Credential=x",
		"https://example.com/?x-api-key=abc",
		"https://gitlab.example.com/api?private_token=abc",
		"https://example.com/?bearer=abc",
		"https://example.com/#bearer_token=abc",
		"https://example.com/?next=%2Fcb%3Frefresh_token%3Dabc",
	} {
		u, _ := Parse(raw)
		e := CheckSecrets(raw, u, true)
		if e == nil || e.Code != "sensitive_query_param" {
			t.Errorf("%s: gate = %v, want sensitive_query_param", raw, e)
		}
		if CheckSecrets(raw, u, false) != nil {
			t.Errorf("%s: refused for browser rules too", raw)
		}
		if r := Redact(raw); strings.Contains(r, "abc") {
			t.Errorf("%s: Redact = %q", raw, r)
		}
	}
	for _, raw := range []string{"https://example.com/?session=abc", "https://example.com/?key=abc", "https://example.com/?refresh_token=", "https://example.com/?bearer"} {
		u, _ := Parse(raw)
		if e := CheckSecrets(raw, u, true); e != nil {
			t.Errorf("%s: refused: %v", raw, e)
		}
	}
	if SensitiveQueryParam("https://example.com/?refresh_token=abc") != "" {
		t.Error("SensitiveQueryParam (spec §A6.7) must keep the spec's list")
	}
}
