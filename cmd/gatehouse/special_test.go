package main

import (
	"encoding/json"
	"testing"
)

// `gatehouse check` refuses the special-purpose blocks IANA's registries mark
// not globally reachable, the newest ones included (issue 16 item 3: RFC
// 9637's 3fff::/20 was allowed), and still allows a globally reachable entry.
func TestCheckRefusesRegistrySpecialPurpose(t *testing.T) {
	want := map[string]string{
		"http://[3fff::1]/":        "ssrf_private", // RFC 9637 documentation
		"http://[5f00::1]/":        "ssrf_private", // RFC 9602 SRv6 SIDs
		"http://[100:0:0:1::1]/":   "ssrf_private", // RFC 9780 dummy prefix
		"http://192.88.99.2/":      "ssrf_private", // RFC 6751 6a44 relay
		"http://192.175.48.1/":     "",             // RFC 7534 AS112: globally reachable
		"http://[2620:4f:8000::]/": "",             // same, IPv6
	}
	args := []string{"check", "--json"}
	for u := range want {
		args = append(args, u)
	}
	code, out, errs := cli(t, t.TempDir(), args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, errs)
	}
	var got struct {
		Results []struct {
			URL     string  `json:"url"`
			Allowed bool    `json:"allowed"`
			Reason  *string `json:"reason"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Results) != len(want) {
		t.Fatalf("output (%v): %s", err, out)
	}
	for _, r := range got.Results {
		reason := ""
		if r.Reason != nil {
			reason = *r.Reason
		}
		if reason != want[r.URL] || r.Allowed != (want[r.URL] == "") {
			t.Errorf("%s: allowed %v reason %q, want %q", r.URL, r.Allowed, reason, want[r.URL])
		}
	}
}
