package policy

import (
	"fmt"
	"net/netip"
	"strings"
)

// Lint returns what is wrong with one blocklist entry as a user meant it,
// or "" when it is fine: an entry that spec §A8 accepts but that does not
// do what it reads as. The rule keeps its spec meaning (Load still applies
// it and reports the lint as a warning; `gatehouse config set` refuses the
// value so such a rule is never written):
//
//   - several hosts in one entry ("a.com, b.com", "a.com b.com"): the
//     entry is one rule that matches no host; write a list;
//   - a CIDR range ("10.0.0.0/8"): anything from "/" is cut, so it blocks
//     only the one address 10.0.0.0; list addresses (private ranges are
//     refused by the SSRF gate anyway);
//   - a port ("host:8080"): the port is dropped, the rule blocks every port
//     of host;
//   - a '*' in a rule that does not start with "*." ("*", "ads.*"): only
//     such rules are patterns (fnmatch: there any '*' spans labels, so
//     "*.*.example.com" blocks every host two labels under example.com);
//     elsewhere '*' is literal, so the rule matches no host;
//   - a rule that is not an IP address but ends in a numeric label
//     ("*.8.8.8", "8.8"): a host name never does (a host whose last label
//     is a number is an IPv4 address, WHATWG URL Standard), and an address
//     is matched only by a rule naming it whole, so it matches no host;
//   - any other character a host name cannot hold.
func Lint(raw string) string {
	pat, ok := normalizeRule(raw)
	return lint(raw, pat, ok, false)
}

// lint is Lint with raw already normalised (normalizeRule's pat and ok),
// so Load judges each rule with one normalisation. inFile says the rule is
// a line of a shared blocklist file, whose format is one host or pattern
// per line ("#" starts a comment): the advice then names that format, not
// a YAML list of security.website_blocklist.domains.
func lint(raw, pat string, ok, inFile bool) string {
	v := strings.TrimSpace(raw)
	if v == "" || strings.HasPrefix(v, "#") {
		return ""
	}
	if strings.ContainsAny(v, ", \t") {
		if inFile {
			return fmt.Sprintf("blocklist line %q holds several entries; it is one rule that matches no host. A shared blocklist file takes one host or \"*.\" pattern per line: write %s on lines of their own", raw, strings.Join(splitEntries(v), ", "))
		}
		return fmt.Sprintf("website_blocklist rule %q holds several entries; it is one rule that matches no host. Write a list: [%s]", raw, strings.Join(splitEntries(v), ", "))
	}
	if !ok {
		return pat
	}
	if host, bits, found := strings.Cut(v, "/"); found && !strings.Contains(v, "://") {
		if a, err := netip.ParsePrefix(host + "/" + bits); err == nil {
			return fmt.Sprintf("website_blocklist rule %q is a CIDR range, which rules do not support: it blocks only %s. List each address to block (private ranges are refused by the SSRF gate already)", raw, a.Addr())
		}
	}
	if hostPortRule(v) {
		return fmt.Sprintf("website_blocklist rule %q names a port; rules match hosts only, so it blocks every port of %s. Write %q", raw, pat, pat)
	}
	if !isGlob(pat) && strings.Contains(pat, "*") {
		return fmt.Sprintf("website_blocklist rule %q matches no host: a rule is a pattern only when it starts with \"*.\" (\"*.example.com\" blocks every subdomain); otherwise \"*\" is matched as itself", raw)
	}
	if ruleAddr(pat).IsValid() {
		return ""
	}
	if numericTail(pat) {
		return fmt.Sprintf("website_blocklist rule %q matches no host: it ends in a number, as only an IP address does, and an address is matched only by a rule naming the whole address (\"*.\" patterns and parent-domain rules never match one). List each address to block, e.g. 203.0.113.7", raw)
	}
	for _, c := range strings.TrimPrefix(pat, "*.") {
		if isGlob(pat) && strings.ContainsRune("*?[]!", c) {
			continue // fnmatch syntax in a pattern (spec §A8)
		}
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Sprintf("website_blocklist rule %q holds %q, which no host name can, so it matches no host", raw, c)
		}
	}
	return ""
}

// splitEntries splits a comma- or space-separated list of entries.
func splitEntries(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}

// hostPortRule reports whether v (a trimmed rule) carries a port:
// "host:port", "[v6]:port" or a URL with an explicit port.
func hostPortRule(v string) bool {
	if isBareIPv6(v) {
		return false
	}
	if i := strings.Index(v, "://"); i >= 0 {
		v = v[i+3:]
	}
	if j := strings.IndexAny(v, "/?#"); j >= 0 {
		v = v[:j]
	}
	if k := strings.LastIndexByte(v, '@'); k >= 0 {
		v = v[k+1:]
	}
	i := strings.LastIndexByte(v, ':')
	if i < 0 || i == len(v)-1 || strings.HasSuffix(v[:i], ":") {
		return false
	}
	for _, c := range v[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return !strings.Contains(v[:i], ":") || strings.HasPrefix(v, "[")
}

// numericTail reports whether pattern's last label is a number (decimal,
// or 0x hex as the URL Standard's IPv4 parser reads it): no host name ends
// that way, so such a rule that is no IP literal itself matches no host.
func numericTail(pattern string) bool {
	last := pattern[strings.LastIndexByte(pattern, '.')+1:]
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		last = h
		if last == "" {
			return true
		}
		return strings.Trim(last, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}
