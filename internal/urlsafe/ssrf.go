package urlsafe

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TrustedPrivateHost is the one host allowed to resolve into private space,
// matched exactly and only over https (spec §A6.1).
const TrustedPrivateHost = "multimedia.nt.qq.com.cn"

// Refusal messages. They name the fix and never contain an address, a host
// or a secret.
const (
	msgPrivate = "Blocked: URL targets a private or internal network address " +
		"(private, loopback, link-local, CGNAT, documentation, reserved or multicast: " +
		"not globally reachable in IANA's special-purpose registries). " +
		"To fix: set security.allow_private_urls: true if this is intended, " +
		"or declare a fake-IP DNS range in security.fake_ip_ranges."
	msgMetadata = "Blocked: URL targets a cloud metadata endpoint (instance credentials live there). " +
		"This can never be allowed, whatever security.allow_private_urls or security.fake_ip_ranges say."
	msgUnresolvable = "Blocked: the host name did not resolve to any address; Gatehouse fails closed. " +
		"Check the host name for typos."
	msgBadAnswer = "Blocked: the DNS resolver returned an answer that is not an IP address; Gatehouse fails closed."
	msgNoHost    = "Invalid URL: it has no host. Give a full absolute URL such as https://example.com/page."
)

// undeclarable are the networks a security.fake_ip_ranges entry may not
// overlap (spec §A6.1); an overlapping entry is dropped.
var undeclarable = []netip.Prefix{
	mp("0.0.0.0/32"), mp("127.0.0.0/8"), mp("10.0.0.0/8"), mp("172.16.0.0/12"),
	mp("192.168.0.0/16"), mp("169.254.0.0/16"), mp("100.64.0.0/10"),
	mp("::/128"), mp("::1/128"), mp("fc00::/7"), mp("fe80::/10"),
}

// Options are the settings that weaken the SSRF gate. The zero value is the
// strictest gate. Options is a value; its methods are safe for concurrent use
// as long as FakeIPRanges is not modified.
type Options struct {
	// AllowPrivate is security.allow_private_urls: ClassPrivate answers pass.
	// ClassMetadata never does.
	AllowPrivate bool
	// FakeIPRanges are declared fake-IP DNS ranges (security.fake_ip_ranges),
	// already validated by ParseFakeIPRanges: a private answer inside one of
	// them passes. Matching uses the unwrapped address (Unwrap4).
	FakeIPRanges []netip.Prefix
}

// ParseFakeIPRanges validates security.fake_ip_ranges entries (spec §A6.1,
// §A6.5). Each entry is a CIDR ("198.18.0.0/15") or a bare address (a
// single-host range); host bits are masked off (like Python's
// ip_network(strict=False)); an IPv4-mapped IPv6 prefix is converted to IPv4.
// Unparseable entries and entries overlapping an undeclarable network
// (0.0.0.0/32, 127/8, 10/8, 172.16/12, 192.168/16, 169.254/16, 100.64/10,
// ::/128, ::1/128, fc00::/7, fe80::/10, so also 0.0.0.0/0 and ::/0) are
// dropped, each with one warning line naming the entry (a CIDR is not a
// secret). Duplicates are kept once. It never logs.
func ParseFakeIPRanges(in []string) (ok []netip.Prefix, warnings []string) {
	seen := map[netip.Prefix]bool{}
	for _, raw := range in {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		p, err := parsePrefixLoose(s)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("security.fake_ip_ranges: dropped %q: not an IP network (want CIDR such as 198.18.0.0/15)", s))
			continue
		}
		var clash netip.Prefix
		for _, u := range undeclarable {
			if p.Overlaps(u) {
				clash = u
				break
			}
		}
		if clash.IsValid() {
			warnings = append(warnings, fmt.Sprintf("security.fake_ip_ranges: dropped %q: it overlaps %s, which can never be declared as fake-IP space", s, clash))
			continue
		}
		if !seen[p] {
			seen[p] = true
			ok = append(ok, p)
		}
	}
	return ok, warnings
}

func parsePrefixLoose(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, err
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("zone not allowed")
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// CheckStatic runs every SSRF-gate check possible without DNS, in spec
// §A6.3 order: scheme other than http/https → unsupported_scheme (Gate
// scheme); empty host → invalid_url (Gate parse); metadata hostname →
// ssrf_metadata; an IP-literal host → JudgeAddr (Gate ssrf); a localhost
// name ("localhost", "*.localhost", see IsLocalhostName) → JudgeAddr of the
// loopback address 127.0.0.1, so ssrf_private unless private URLs are
// allowed, without asking DNS (browsers resolve every such name to loopback
// themselves, RFC 6761 §6.3). A nil u is invalid_url. It returns nil when
// the URL may proceed to DNS (or, for an IP literal, to dialing).
func (o Options) CheckStatic(u *URL) *reason.Error {
	if u == nil {
		return reason.New(reason.InvalidURL, reason.GateParse, msgNoHost)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return unsupportedScheme(u.Scheme)
	}
	if u.Host == "" {
		return reason.New(reason.InvalidURL, reason.GateParse, msgNoHost)
	}
	if IsMetadataHost(u.Host) {
		return reason.New(reason.SSRFMetadata, reason.GateSSRF, msgMetadata)
	}
	if u.Addr.IsValid() {
		return o.JudgeAddr(u.Scheme, u.Host, u.Addr)
	}
	if IsLocalhostName(u.Host) {
		return o.JudgeAddr(u.Scheme, u.Host, LocalhostAddrs[0])
	}
	return nil
}

// LocalhostAddrs are the answers a localhost name (IsLocalhostName) has
// without DNS: IPv4 and IPv6 loopback (RFC 6761 §6.3, WHATWG Fetch, which
// browsers implement by never sending such names to a resolver).
var LocalhostAddrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

// IsLocalhostName reports whether host is "localhost" or a name under it
// ("app.localhost"), ASCII case-insensitively and ignoring trailing dots
// ("localhost." is the same name). Such names are loopback by definition
// (RFC 6761 §6.3): Gatehouse judges them as 127.0.0.1 and never resolves
// them.
func IsLocalhostName(host string) bool {
	h := strings.TrimRight(host, ".")
	const l = "localhost"
	if len(h) < len(l) || !strings.EqualFold(h[len(h)-len(l):], l) {
		return false
	}
	return len(h) == len(l) || h[len(h)-len(l)-1] == '.'
}

func unsupportedScheme(scheme string) *reason.Error {
	msg := "Blocked: only http and https URLs can be fetched"
	if scheme != "" && len(scheme) <= 16 {
		if _, secret := MatchPrefix(scheme); !secret {
			msg += fmt.Sprintf(" (this URL uses %q)", scheme)
		}
	}
	return reason.New(reason.UnsupportedScheme, reason.GateScheme, msg+".")
}

// JudgeAddr gives the verdict for one resolved or literal address a of a URL
// with this scheme and canonical host (spec §A6.2): nil if allowed,
// ssrf_metadata for ClassMetadata (never overridable), ssrf_private for
// ClassPrivate unless o.AllowPrivate, or the trusted-host rule (host exactly
// TrustedPrivateHost and scheme https), or declared fake-IP ranges excuse it:
// each non-public address ClassifyAddr judged (a, and the IPv4 it carries, see
// judgedAddrs) must lie in one. Gate is ssrf. The zone of a is ignored.
func (o Options) JudgeAddr(scheme, host string, a netip.Addr) *reason.Error {
	switch ClassifyAddr(a) {
	case ClassMetadata:
		return reason.New(reason.SSRFMetadata, reason.GateSSRF, msgMetadata)
	case ClassPublic:
		return nil
	}
	if o.AllowPrivate {
		return nil
	}
	if strings.EqualFold(scheme, "https") && strings.EqualFold(strings.TrimRight(host, "."), TrustedPrivateHost) {
		return nil
	}
	if a.IsValid() && len(o.FakeIPRanges) > 0 && o.fakeExcuses(a) {
		return nil
	}
	return reason.New(reason.SSRFPrivate, reason.GateSSRF, msgPrivate)
}

// JudgeAnswers judges every DNS answer for a URL with this scheme and host
// (spec §A6.3 step 6): each answer may carry a %zone suffix, which is
// stripped; an unparseable answer → dns_bad_answer; otherwise JudgeAddr. The
// first bad answer decides; every answer must pass. No answers at all →
// dns_unresolvable. Gate is ssrf.
func (o Options) JudgeAnswers(scheme, host string, answers []string) *reason.Error {
	if len(answers) == 0 {
		return reason.New(reason.DNSUnresolvable, reason.GateSSRF, msgUnresolvable)
	}
	for _, s := range answers {
		a, ok := parseAnswer(s)
		if !ok {
			return reason.New(reason.DNSBadAnswer, reason.GateSSRF, msgBadAnswer)
		}
		if err := o.JudgeAddr(scheme, host, a); err != nil {
			return err
		}
	}
	return nil
}

// DNSUnresolvable returns the dns_unresolvable refusal the resolver's caller
// reports when a lookup fails (spec §A6.3 step 5: fail closed; no setting,
// proxy or environment variable excuses it). cause is kept as Err and never
// shown in the message.
func DNSUnresolvable(cause error) *reason.Error {
	return reason.Wrap(reason.DNSUnresolvable, reason.GateSSRF, msgUnresolvable, cause)
}

func parseAnswer(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a, true
}

// IsAlwaysBlocked is the narrow, setting-independent floor (spec §A6.3
// is_always_blocked_url): true when host is a metadata hostname, or an IP
// literal in the metadata floor, or any parseable answer is in the floor.
// Unparseable answers are skipped; DNS failure (no answers), parse errors and
// ordinary private addresses are not floor hits. host may carry brackets,
// upper case and trailing dots.
func IsAlwaysBlocked(host string, answers []string) bool {
	h := strings.TrimRight(strings.TrimSpace(host), ".")
	if IsMetadataHost(h) {
		return true
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if a, ok := parseAnswer(h); ok && ClassifyAddr(a) == ClassMetadata {
		return true
	}
	for _, s := range answers {
		if a, ok := parseAnswer(s); ok && ClassifyAddr(a) == ClassMetadata {
			return true
		}
	}
	return false
}

// fakeExcuses reports whether every non-public address judged for a
// (judgedAddrs) lies in a declared fake-IP range.
func (o Options) fakeExcuses(a netip.Addr) bool {
	for _, p := range judgedAddrs(a) {
		if in, _ := internal(p); !in {
			continue
		}
		in := false
		for _, r := range o.FakeIPRanges {
			if r.Contains(p) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}
