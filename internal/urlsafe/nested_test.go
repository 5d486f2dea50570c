package urlsafe

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// nestedCases are URLs whose credential sits inside a parameter value: a
// nested URL or query, raw or percent-encoded once or more.
var nestedCases = []struct{ raw, name string }{
	{"https://x.example/login?next=%2Fcb%3Faccess_token%3Dabc123", "access_token"},
	{"https://x.example/login?next=%252Fcb%253Faccess_token%253Dabc123", "access_token"},
	{"https://x.example/login?next=%25252Fcb%25253Ftoken%25253Dabc123", "token"},
	{"https://x.example/login?redirect=https%3A%2F%2Fy.example%2F%3Fapi_key%3Dabcdef", "api_key"},
	{"https://x.example/login?redirect=https%253A%252F%252Fy.example%252F%253Fapi_key%253Dabcdef", "api_key"},
	{"https://x.example/login?next=/cb?access_token=abc123", "access_token"},
	{"https://x.example/login?state=token%3Dabc", "token"},
	{"https://x.example/login?next=%2Fcb%3Fa%3D1%26password%3Dhunter2", "password"},
	{"https://x.example/login?next=%2Fcb%3Fa%3D1%3BSecret%3Dhunter2", "Secret"},
	{"https://x.example/#/route?next=%2Fcb%3Fjwt%3Dabc", "jwt"},
	{"https://x.example/?u=https%3A%2F%2Fs3.example%2Fo%3FX-Amz-Signature%3Dabc", "X-Amz-Signature"},
	{"https://x.example/?next=%2Fcb%23access_token%3Dabc", "access_token"},
}

// benignNested are parameter values that are URLs or queries without a
// credential: they stay allowed and unchanged by Redact.
var benignNested = []string{
	"https://x.example/login?next=%2Fdashboard",
	"https://x.example/login?next=%2Fcb%3Fpage%3D2",
	"https://x.example/login?redirect=https%3A%2F%2Fy.example%2F%3Fq%3Dtokens",
	"https://x.example/search?q=how+to+rotate+an+access+token",
	"https://x.example/search?q=password%3F",
	"https://x.example/login?next=%2Fcb%3Fkey%3Dabc%26code%3Dxyz", // page facets, spec §A6.7
	"https://x.example/?token=",
	"https://x.example/?next=%2Fcb%3Ftoken%3D",
}

// TestNestedCredentialParam: a credential-named parameter nested in another
// parameter's value is refused as sensitive_query_param (a Gatehouse
// extension of spec §A6.7), at any encoding depth; benign nested URLs pass.
func TestNestedCredentialParam(t *testing.T) {
	for _, tt := range nestedCases {
		if got := SensitiveQueryParam(tt.raw); got != tt.name {
			t.Errorf("SensitiveQueryParam(%q) = %q, want %q", tt.raw, got, tt.name)
		}
		u, _ := Parse(tt.raw)
		if got := CheckSecrets(tt.raw, u, true); reason.Of(got) != reason.SensitiveQueryParam {
			t.Errorf("CheckSecrets(%q) = %v, want sensitive_query_param", tt.raw, got)
		}
		if got := CheckSecrets(tt.raw, u, false); got != nil {
			t.Errorf("CheckSecrets(%q, extract=false) = %v, want nil (the name gate is for readers only)", tt.raw, got)
		}
	}
	for _, raw := range benignNested {
		if got := SensitiveQueryParam(raw); got != "" {
			t.Errorf("SensitiveQueryParam(%q) = %q, want allowed", raw, got)
		}
	}
}

// TestRedactAgreesWithNestedGate: whatever the gate refuses as a nested
// credential parameter, Redact removes (the redacted URL carries no value of
// a credential-named parameter at any level), keeping scheme and host;
// benign URLs come back unchanged.
func TestRedactAgreesWithNestedGate(t *testing.T) {
	for _, tt := range nestedCases {
		r := Redact(tt.raw)
		if gateSeesCredential(r) {
			t.Errorf("Redact(%q) = %q still carries the credential parameter", tt.raw, r)
		}
		if !strings.HasPrefix(r, "https://x.example/") || !strings.Contains(r, Redacted) {
			t.Errorf("Redact(%q) = %q, want the host kept and the value redacted", tt.raw, r)
		}
		for _, v := range []string{"abc123", "abcdef", "hunter2"} {
			if strings.Contains(r, v) {
				t.Errorf("Redact(%q) = %q keeps the value %q", tt.raw, r, v)
			}
		}
		// The same URL inside running text.
		text := "see " + tt.raw + " now"
		if got := Redact(text); !strings.HasPrefix(got, "see https://x.example/") || !strings.HasSuffix(got, " now") || strings.Contains(got, "abc123") {
			t.Errorf("Redact(%q) = %q", text, got)
		}
	}
	for _, raw := range benignNested {
		if got := Redact(raw); got != raw {
			t.Errorf("Redact(%q) = %q, want unchanged", raw, got)
		}
	}
	// Exact forms: only the outer value goes.
	for in, want := range map[string]string{
		"https://x.example/login?next=%2Fcb%3Faccess_token%3Dabc123&lang=en": "https://x.example/login?next=" + Redacted + "&lang=en",
		"https://x.example/login?state=token%3Dabc#top":                      "https://x.example/login?state=" + Redacted + "#top",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// gateSeesCredential reports whether the secret gate, reading r as one URL
// (SensitiveQueryParam's raw reading and CheckSecrets' parsed one), finds a
// credential-named parameter (top-level or nested) whose value is more than
// Redacted.
func gateSeesCredential(r string) bool {
	s := removeTabNewline(strings.TrimSpace(r))
	n := schemeLen(s)
	if n == 0 || !specialScheme(s) {
		// Only a URL of a scheme the gate reads is read as one URL:
		// "Blocked: redirect hop 1 (to https://…) was refused" is prose.
		return false
	}
	rest, frag, _ := strings.Cut(s[n+1:], "#")
	_, query, _ := strings.Cut(rest, "?")
	if name, _ := nestedCredential(query+"#"+frag, sensitiveParams, carriesCredential); name != "" {
		return true
	}
	if u, err := Parse(r); err == nil {
		if name, _ := nestedCredential(u.RawQuery+"#"+u.Fragment, sensitiveParams, carriesCredential); name != "" {
			return true
		}
	}
	return false
}

// TestNameInMatchesParamKey: the allocation-free name fold agrees with
// paramKey(formDecode(name)) on names of every shape.
func TestNameInMatchesParamKey(t *testing.T) {
	for _, n := range []string{"token", "TOKEN", "api-key", "API.Key", "api key", " token", "token ", "\ttoken",
		"to\u212Aen", "%74oken", "+token+", "x-amz-security-token", "X_AMZ_SIGNATURE", "tokens", "", "a",
		"client_secret", "Client-Secret", strings.Repeat("a", 40), "jwt", "JWT", "session_id", "session"} {
		want := sensitiveParams[paramKey(formDecode(n))]
		if got := nameIn(n, sensitiveParams); got != want {
			t.Errorf("nameIn(%q) = %v, paramKey says %v", n, got, want)
		}
	}
}
