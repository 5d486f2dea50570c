package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// A vendor that reports a final URL (after redirects) on a metadata or private
// address, or on a blocklisted host, gets that row refused: the vendor's
// fetch is re-checked as spec §A11 says, and nothing is cached.
func TestVendorFinalURLRechecked(t *testing.T) {
	h := newHarness(t)
	h.dotenv = map[string]string{"FIRECRAWL_API_KEY": "fc-finalurl0123456789abcdef0123"}
	h.cfg.Web.ExtractBackend = "firecrawl"
	h.cfg.Security.WebsiteBlocklist.Enabled = true
	h.cfg.Security.WebsiteBlocklist.Domains = []string{"blocked.example"}
	h.res.set("blocked.example", "93.184.216.40")
	finals := map[string]string{
		"https://93.184.216.34/meta":  "http://169.254.169.254/latest/meta-data/",
		"https://93.184.216.34/lan":   "http://10.1.2.3/admin",
		"https://93.184.216.34/block": "https://blocked.example/page",
		"https://93.184.216.34/fine":  "https://93.184.216.34/fine/",
	}
	h.vendor("firecrawl", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		u := body["url"].(string)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"success": true, "data": map[string]any{
			"markdown": "# Secret\n\ninternal content from " + finals[u],
			"metadata": map[string]any{"title": "T", "sourceURL": u, "url": finals[u], "statusCode": 200}}})
	})
	h.open()
	resp := h.extract("https://93.184.216.34/meta", "https://93.184.216.34/lan", "https://93.184.216.34/block", "https://93.184.216.34/fine")
	want := []reason.Code{reason.SSRFMetadata, reason.SSRFPrivate, reason.PolicyBlocked, ""}
	for i, r := range resp.Results {
		if r.Reason != want[i] {
			t.Errorf("row %d: %+v", i, r)
		}
		if want[i] != "" && strings.Contains(r.Content, "internal content") {
			t.Errorf("row %d leaked the vendor's content", i)
		}
	}
	if resp.Results[2].BlockedByPolicy == nil {
		t.Error("policy row lacks blocked_by_policy")
	}
	if m := resp.Results[3].Meta; m == nil || m.FinalURL != "https://93.184.216.34/fine/" || m.Provider != "firecrawl" {
		t.Errorf("fine row meta %+v", m)
	}
}

// When the keyless ring fails everywhere too, the configured backend's rows
// are kept (spec §A5.5).
func TestExtractRescueFailsKeepsOriginal(t *testing.T) {
	h := newHarness(t)
	h.dotenv = map[string]string{"TAVILY_API_KEY": "tvly-keeporig0123456789abcdefgh"}
	h.cfg.Web.ExtractBackend = "tavily"
	h.cfg.Web.ProviderTier = map[string]string{"exa": "paid", "parallel": "paid", "keenable": "paid"}
	h.vendor("tavily", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	h.vendor("firecrawl/keyless", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) })
	h.open()
	resp := h.extract("https://93.184.216.34/x")
	r := resp.Results[0]
	if r.OK() || r.Reason != reason.VendorUnavailable || !strings.Contains(*r.Error, "Tavily") {
		t.Fatalf("%+v", r)
	}
}

// TestPrivateURLNeverHandedToVendor: with security.allow_private_urls on, a
// URL on a private address is refused for a third-party backend (it was
// handed to the vendor, whose own DNS failure came back as
// dns_unresolvable), and the vendor receives no request for it; public URLs
// of the same call still go to the vendor.
func TestPrivateURLNeverHandedToVendor(t *testing.T) {
	h := newHarness(t)
	h.dotenv = map[string]string{"FIRECRAWL_API_KEY": "fc-privatevendor0123456789abcdef"}
	h.cfg.Web.ExtractBackend = "firecrawl"
	h.cfg.Security.AllowPrivateURLs = true
	var asked []string
	h.vendor("firecrawl", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		u, _ := body["url"].(string)
		asked = append(asked, u)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"success": true, "data": map[string]any{
			"markdown": "# Page\n\nvendor content", "metadata": map[string]any{"title": "T", "sourceURL": u, "statusCode": 200}}})
	})
	h.open()
	resp := h.extract("http://10.1.2.3/internal", "https://93.184.216.34/public")
	if r := resp.Results[0]; r.Reason != reason.SSRFPrivate || !strings.Contains(*r.Error, "third-party reader") {
		t.Errorf("private row: %+v", r)
	}
	if !resp.Results[1].OK() {
		t.Errorf("public row: %+v", resp.Results[1])
	}
	for _, u := range asked {
		if strings.Contains(u, "10.1.2.3") {
			t.Errorf("vendor was sent %s", u)
		}
	}
}
