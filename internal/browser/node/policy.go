package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/strictjson"
	"net/netip"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Bounds of a Policy (Validate).
const (
	// PolicyVersion is the Policy format written by this version.
	PolicyVersion = 1
	// MaxPolicyBytes bounds a Policy's JSON (DecodePolicy; the node's open
	// request). A blocklist of about 100 000 short rules fits.
	MaxPolicyBytes = 4 << 20
	// MaxPolicyRules bounds the blocklist rules of a Policy, over every
	// source.
	MaxPolicyRules = 100_000
	// MaxPolicySources bounds Blocklist.Sources (config plus shared files).
	MaxPolicySources = 256
	// MaxFakeIPRanges bounds FakeIPRanges.
	MaxFakeIPRanges = 1024
	// MaxConnectTimeout bounds ConnectTimeoutMS.
	MaxConnectTimeout = 10 * time.Minute
)

// Policy is the egress policy of one browser session, as its replica's
// gates decided it (issue 19 item 4): sent by the replica with the open
// request (OpenRequest.Policy) and judged by the node, which builds the
// session proxy's guard from it (browser.GatesFromPolicy), never from its
// own config. The replica builds it from its own config with the function
// that builds its in-process gates (browser.NewGates), so a session's rules
// are the same whichever replica opened it and whichever node holds it.
//
// A Policy can narrow or widen the private-address rules within what the
// replica's config may set, but no Policy widens the metadata floor: a
// cloud metadata address (urlsafe.ClassMetadata: 169.254.169.254,
// fd00:ec2::254, metadata host names, …) is refused whatever Active,
// AllowPrivateURLs and FakeIPRanges say (urlsafe.Options.JudgeAddr judges
// the floor first), and fake-IP ranges overlapping an undeclarable network
// are refused by Validate.
//
// The zero Policy is invalid (Version 0); a node refuses an open request
// without one.
type Policy struct {
	// Version is PolicyVersion.
	Version int `json:"version"`
	// Active is whether the SSRF private-address guard applies to the
	// session (browser.Gates.GuardActive: not a sidecar key, private URLs
	// not allowed): true judges the session's traffic with the strict
	// guard (private addresses refused), false with the open one (private
	// addresses allowed, metadata never).
	Active bool `json:"active"`
	// AllowPrivateURLs is security.allow_private_urls (or the legacy
	// browser.allow_private_urls) of the replica: Private Network Access
	// (egress.ProxyOptions.AllowPrivateFromPublic) is off for the session.
	AllowPrivateURLs bool `json:"allow_private_urls"`
	// FakeIPRanges are security.fake_ip_ranges as the replica's config
	// parsed them (urlsafe.ParseFakeIPRanges): canonical masked prefixes
	// ("198.18.0.0/15"), no duplicates, none overlapping an undeclarable
	// network, at most MaxFakeIPRanges.
	FakeIPRanges []string `json:"fake_ip_ranges"`
	// Blocklist is security.website_blocklist, rules resolved on the
	// replica (shared files read there: a node never reads the replica's
	// files).
	Blocklist PolicyBlocklist `json:"blocklist"`
	// ConnectTimeoutMS bounds each TCP connect of the session's proxy, in
	// milliseconds (web.direct.connect_timeout); 0 means
	// egress.DefaultConnectTimeout; at most MaxConnectTimeout.
	ConnectTimeoutMS int64 `json:"connect_timeout_ms"`
}

// PolicyBlocklist is the website blocklist of a Policy: policy.Rules()
// grouped by source, in match order.
type PolicyBlocklist struct {
	// Enabled is security.website_blocklist.enabled; a disabled blocklist
	// blocks nothing (its rules still travel, as Load keeps them).
	Enabled bool `json:"enabled"`
	// Sources are the rules' sources in match order: "config" first, then
	// each shared file (its path on the replica, a label only).
	Sources []RuleSource `json:"sources"`
}

// RuleSource is the rules of one source, normalised (policy.NormalizeRule)
// and in match order.
type RuleSource struct {
	Source   string   `json:"source"`
	Patterns []string `json:"patterns"`
}

// PolicyOf returns the Policy of a session judged with gate (its
// FakeIPRanges; AllowPrivate is ignored, see allowPrivate), website policy
// bl (nil: none), Private Network Access off when allowPrivate, the SSRF
// guard active or not, and connect timeout ct (0: default; more than
// MaxConnectTimeout is cut to it). The result is not validated (Validate).
func PolicyOf(gate urlsafe.Options, bl *policy.Policy, allowPrivate, active bool, ct time.Duration) Policy {
	p := Policy{Version: PolicyVersion, Active: active, AllowPrivateURLs: allowPrivate,
		Blocklist: PolicyBlocklist{Enabled: bl.Enabled()}, ConnectTimeoutMS: min(ct, MaxConnectTimeout).Milliseconds()}
	for _, r := range gate.FakeIPRanges {
		p.FakeIPRanges = append(p.FakeIPRanges, r.String())
	}
	for _, r := range bl.Rules() {
		n := len(p.Blocklist.Sources)
		if n == 0 || p.Blocklist.Sources[n-1].Source != r.Source {
			p.Blocklist.Sources = append(p.Blocklist.Sources, RuleSource{Source: r.Source})
			n++
		}
		p.Blocklist.Sources[n-1].Patterns = append(p.Blocklist.Sources[n-1].Patterns, r.Pattern)
	}
	return p
}

// ConfigPolicy is the Policy of cfg (security.allow_private_urls or the
// legacy browser.allow_private_urls, security.fake_ip_ranges,
// security.website_blocklist with its shared files resolved against home,
// web.direct.connect_timeout), with Active false: what browser.NewGates
// builds a replica's gates from, and what the replica sends a node
// (browser.Gates.SessionPolicy). The warnings name dropped fake-IP
// ranges, unreadable blocklist files and rules longer than
// policy.MaxRuleBytes (dropped: such a rule matches no host name).
func ConfigPolicy(cfg *config.Config, home string) (Policy, []string) {
	gopts, warns := gate.Options(cfg)
	bl, pw := gate.LoadPolicy(cfg, home)
	warns = append(warns, pw...)
	var keep []policy.Rule
	for _, rl := range bl.Rules() {
		if len(rl.Pattern) > policy.MaxRuleBytes {
			warns = append(warns, fmt.Sprintf("website_blocklist rule %.40q… (from %s) is longer than %d bytes and matches no host; it is ignored", rl.Pattern, rl.Source, policy.MaxRuleBytes))
			continue
		}
		keep = append(keep, rl)
	}
	if len(keep) != len(bl.Rules()) {
		if short, err := policy.FromRules(bl.Enabled(), keep); err == nil {
			bl = short
		}
	}
	return PolicyOf(gopts, bl, cfg.Security.AllowPrivateURLs || cfg.Browser.AllowPrivateURLs, false, cfg.Web.Direct.ConnectTimeout), warns
}

// CompiledPolicy is a validated Policy ready to build guards from.
type CompiledPolicy struct {
	// Gate carries FakeIPRanges; its AllowPrivate is false (each guard sets
	// its own: Active picks the strict or the open one).
	Gate urlsafe.Options
	// Blocklist is the website policy (never nil; may be disabled).
	Blocklist *policy.Policy
	// ConnectTimeout is 0 (the default) or the connect bound.
	ConnectTimeout time.Duration
}

// ErrPolicy is wrapped by every error of DecodePolicy and Validate.
var ErrPolicy = errors.New("browser session policy")

func bad(f string, a ...any) error { return fmt.Errorf("%w: %s", ErrPolicy, fmt.Sprintf(f, a...)) }

// Compile checks p's entries as config input is checked and returns what
// guards are built from: Version; FakeIPRanges (each a canonical masked
// prefix that urlsafe.ParseFakeIPRanges accepts without a warning, no
// duplicates); the blocklist (each source with rules, each rule as
// policy.FromRules requires); ConnectTimeoutMS not negative.
// The size bounds of the wire (Validate) are not applied: the replica's
// own gates are built with Compile whatever their size. Errors wrap
// ErrPolicy and name the bad entry.
func (p Policy) Compile() (*CompiledPolicy, error) {
	if p.Version != PolicyVersion {
		return nil, bad("version %d is not %d (replicas and browser nodes must run the same Gatehouse version)", p.Version, PolicyVersion)
	}
	if p.ConnectTimeoutMS < 0 {
		return nil, bad("connect_timeout_ms %d is negative", p.ConnectTimeoutMS)
	}
	for _, s := range p.FakeIPRanges {
		if pf, err := netip.ParsePrefix(s); err != nil || pf.String() != s || pf.Masked() != pf {
			return nil, bad("fake_ip_ranges entry %q is not a canonical CIDR prefix", s)
		}
	}
	ranges, warns := urlsafe.ParseFakeIPRanges(p.FakeIPRanges)
	if len(warns) > 0 {
		return nil, bad("%s", warns[0])
	}
	if len(ranges) != len(p.FakeIPRanges) {
		return nil, bad("fake_ip_ranges lists a range twice")
	}
	for i, r := range ranges {
		if r.String() != p.FakeIPRanges[i] { // an IPv4-mapped prefix is its IPv4 one
			return nil, bad("fake_ip_ranges entry %q is not a canonical CIDR prefix (%s)", p.FakeIPRanges[i], r)
		}
	}
	var rules []policy.Rule
	for _, s := range p.Blocklist.Sources {
		if len(s.Patterns) == 0 {
			return nil, bad("blocklist source %q has no rules", s.Source)
		}
		for _, pat := range s.Patterns {
			rules = append(rules, policy.Rule{Pattern: pat, Source: s.Source})
		}
	}
	bl, err := policy.FromRules(p.Blocklist.Enabled, rules)
	if err != nil {
		return nil, bad("%v", err)
	}
	return &CompiledPolicy{Gate: urlsafe.Options{FakeIPRanges: ranges}, Blocklist: bl,
		ConnectTimeout: time.Duration(p.ConnectTimeoutMS) * time.Millisecond}, nil
}

// Validate checks p as it travels to a node: Bounds, then Compile.
// Errors wrap ErrPolicy.
func (p Policy) Validate() error {
	if err := p.Bounds(); err != nil {
		return err
	}
	_, err := p.Compile()
	return err
}

// Bounds checks the size bounds of the wire, without judging entries: at
// most MaxFakeIPRanges ranges, MaxPolicySources blocklist sources,
// MaxPolicyRules rules and MaxConnectTimeout. Errors wrap ErrPolicy.
func (p Policy) Bounds() error {
	if p.ConnectTimeoutMS > MaxConnectTimeout.Milliseconds() {
		return bad("connect_timeout_ms %d is over %d", p.ConnectTimeoutMS, MaxConnectTimeout.Milliseconds())
	}
	if len(p.FakeIPRanges) > MaxFakeIPRanges {
		return bad("%d fake_ip_ranges (at most %d)", len(p.FakeIPRanges), MaxFakeIPRanges)
	}
	if len(p.Blocklist.Sources) > MaxPolicySources {
		return bad("%d blocklist sources (at most %d)", len(p.Blocklist.Sources), MaxPolicySources)
	}
	n := 0
	for _, s := range p.Blocklist.Sources {
		n += len(s.Patterns)
	}
	if n > MaxPolicyRules {
		return bad("%d blocklist rules (at most %d)", n, MaxPolicyRules)
	}
	return nil
}

// Encode returns p as JSON after Bounds (the receiver judges the entries:
// DecodePolicy, Validate); an encoding longer than MaxPolicyBytes is an
// error.
func (p Policy) Encode() ([]byte, error) {
	if err := p.Bounds(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxPolicyBytes {
		return nil, fmt.Errorf("%w: %d bytes encoded (at most %d): shorten security.website_blocklist", ErrPolicy, len(b), MaxPolicyBytes)
	}
	return b, nil
}

// DecodePolicy parses a Policy: at most MaxPolicyBytes of one JSON object
// with exactly the fields of Policy (an unknown field, a wrong type,
// trailing data or a failed Validate is an error wrapping ErrPolicy). It
// never panics (FuzzPolicy).
func DecodePolicy(b []byte) (Policy, error) {
	var p Policy
	if len(b) > MaxPolicyBytes {
		return p, fmt.Errorf("%w: longer than %d bytes", ErrPolicy, MaxPolicyBytes)
	}
	if err := strictjson.Decode(b, &p); err != nil {
		return Policy{}, fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}
