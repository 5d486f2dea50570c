// Package gate holds what the web tools (internal/web) and the browser tools
// (internal/browser) share about the security gates, below both so that
// neither imports the other: the classification options and the website
// policy built from config, the one-URL verdict that `gatehouse check`
// prints (CheckURL), and the redacting logger every Gatehouse log goes
// through (RedactLogger). The gates themselves live in urlsafe (secret,
// parse, address classification), policy (website blocklist) and egress
// (the one place that dials); this package only wires them from config.
package gate

import (
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Options builds the urlsafe classification options from cfg
// (security.allow_private_urls, security.fake_ip_ranges); the warnings name
// dropped security.fake_ip_ranges entries.
func Options(cfg *config.Config) (urlsafe.Options, []string) {
	ranges, warns := urlsafe.ParseFakeIPRanges(cfg.Security.FakeIPRanges)
	return urlsafe.Options{AllowPrivate: cfg.Security.AllowPrivateURLs, FakeIPRanges: ranges}, warns
}

// LoadPolicy builds the website policy from cfg's
// security.website_blocklist (shared files relative to home); the warnings
// name unreadable or bad shared files.
func LoadPolicy(cfg *config.Config, home string) (*policy.Policy, []string) {
	bl := cfg.Security.WebsiteBlocklist
	return policy.Load(bl.Enabled, bl.Domains, bl.SharedFiles, home)
}
