// Package urlsafe canonicalises URLs the way a browser does and judges them
// before any fetch: secret-in-URL detection, credential-named parameters,
// userinfo passwords, and SSRF classification of hosts and IP addresses.
//
// Everything here is a pure function: no network, no files, no logging, no
// environment. DNS is done by the caller (package egress), which hands the
// answers to Options.JudgeAnswers and dials only vetted addresses; the
// checks here exist to refuse early with a clear reason code
// (internal/reason), not as the network boundary.
//
// Rules come from the behavioural spec (§A6 URL safety, §A7 credential
// prefixes, §A9.2 local-dev hosts) and the WHATWG URL Standard, as
// implemented by github.com/nlnwa/whatwg-url.
package urlsafe

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	wuerrors "github.com/nlnwa/whatwg-url/errors"
	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// URL is a URL canonicalised as a WHATWG browser would
// (github.com/nlnwa/whatwg-url v0.6.2, package url). Fields are read-only
// after Parse.
type URL struct {
	// Raw is the input with surrounding white space trimmed.
	Raw string
	// Href is the canonical serialization: what fetchers, providers and
	// browsers receive (never Raw).
	Href string
	// Scheme is lower case, without ':'.
	Scheme string
	// Host is the canonical host: IDNA A-labels (UTS #46 mapping), lower
	// case, trailing dots dropped, IPv4 in dotted decimal, IPv6 compressed
	// WITHOUT brackets. Empty for URLs without a host (mailto:, file:///).
	Host string
	// Port is the explicit port, "" when absent or the scheme's default.
	Port string
	// Addr is valid iff Host is an IP literal; it is the address as given
	// (an IPv4-mapped IPv6 literal stays IPv6; see Unwrap4).
	Addr netip.Addr
	// Username is the serialized (percent-encoded) user name, "" if none.
	Username string
	// HasPassword reports a non-empty password in the userinfo. The password
	// itself is never kept.
	HasPassword bool
	// Path, RawQuery and Fragment are as serialized in Href, without the
	// leading '?' or '#'.
	Path, RawQuery, Fragment string
}

var parser = whatwg.NewParser()

// Parse canonicalises raw as a browser's URL parser would (WHATWG URL
// Standard): tabs and newlines are removed, backslashes act as slashes in
// special schemes, hosts are percent-decoded, IDNA/UTS-46 mapped (so
// ideographic full stops and full-width or enclosed characters fold to
// ASCII) and IPv4 numbers in decimal, octal, hex and short forms are
// rewritten to dotted decimal. Surrounding white space is trimmed, and
// white space directly after "scheme://" is removed first (spec §A6.6
// typo repair: "https:// host" → "https://host").
//
// Any scheme is accepted; the scheme is judged by Options.CheckStatic. A
// URL without a scheme, a special-scheme URL without a host (http://, also
// when only dots remain after dropping trailing dots) and anything else the
// standard rejects give a *reason.Error with Code InvalidURL and Gate
// GateParse. Its Message never echoes the input; Err names the WHATWG
// validation error type only. Input or output beyond MaxURLBytes,
// MaxAuthorityBytes or MaxSlashes is refused the same way.
//
// Every URL goes through the library: there is no hand-written fast path
// in front of it (one parser in the security gate; the cost is measured in
// docs/benchmarks.md, "Gate check"). Parse(u.Href) yields u again (with
// Raw = Href). Parse is safe for concurrent use.
func Parse(raw string) (u *URL, rerr *reason.Error) {
	trimmed := strings.TrimSpace(raw)
	defer func() {
		// The parser is third-party code: a panic on hostile input becomes a
		// refusal, never a crash.
		if r := recover(); r != nil {
			u, rerr = nil, reason.Wrap(reason.InvalidURL, reason.GateParse, msgInvalid, fmt.Errorf("whatwg-url panic: %v", r))
		}
	}()
	if !withinLimits(trimmed) {
		return nil, errTooLong()
	}
	if u, rerr = parseLibrary(trimmed, repairSchemeGap(trimmed)); rerr != nil {
		return nil, rerr
	}
	if !withinLimits(u.Href) {
		// Percent-encoding can multiply the length; refusing here keeps
		// Parse(u.Href) equal to u.
		return nil, errTooLong()
	}
	return u, nil
}

// CheckLength refuses input longer than MaxURLBytes (after trimming white
// space) with invalid_url, or returns nil. Callers run it before any other
// gate: the secret scans read every byte of the input, several times over
// for percent-encoded text, so an 800 KB "URL" cost seconds of CPU before
// Parse refused it (hostile review). Nothing is sent for a refused input,
// so judging its length first loses no safety.
func CheckLength(raw string) *reason.Error {
	if len(raw) <= MaxURLBytes || len(strings.TrimSpace(raw)) <= MaxURLBytes {
		return nil
	}
	return errTooLong()
}

// Abbrev returns raw cut to at most 200 bytes (on a code-point boundary)
// with "…" and the full length appended when it was longer: how a refused
// over-long input is echoed, instead of sending its megabytes back.
func Abbrev(raw string) string {
	const max = 200
	if len(raw) <= max {
		return raw
	}
	i := max
	for i > 0 && !utf8.RuneStart(raw[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d bytes)", raw[:i], len(raw))
}

func withinLimits(s string) bool {
	return len(s) <= MaxURLBytes && authorityLen(s) <= MaxAuthorityBytes &&
		strings.Count(s, "/")+strings.Count(s, "\\") <= MaxSlashes
}

func errTooLong() *reason.Error {
	return reason.New(reason.InvalidURL, reason.GateParse, fmt.Sprintf(
		"Invalid URL: it is too long (at most %d bytes, %d before the path, %d slashes). Shorten it.",
		MaxURLBytes, MaxAuthorityBytes, MaxSlashes))
}

// parseLibrary is Parse's call into the WHATWG library: trimmed is the
// input as Raw keeps it, repaired the same after repairSchemeGap.
func parseLibrary(trimmed, repaired string) (*URL, *reason.Error) {
	w, err := parser.Parse(repaired)
	if err != nil {
		return nil, invalidURL(err)
	}
	out := &URL{
		Raw:         trimmed,
		Href:        w.Href(false),
		Scheme:      w.Scheme(),
		Port:        w.Port(),
		Username:    w.Username(),
		HasPassword: w.Password() != "",
		Path:        w.Pathname(),
		RawQuery:    w.Query(),
		Fragment:    w.Fragment(),
	}
	host := w.Hostname()
	switch {
	case w.IsIPv6():
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		a, err := netip.ParseAddr(host)
		if err != nil {
			return nil, reason.Wrap(reason.InvalidURL, reason.GateParse, msgInvalid, err)
		}
		out.Addr = a
	case w.IsIPv4():
		a, err := netip.ParseAddr(host)
		if err != nil {
			return nil, reason.Wrap(reason.InvalidURL, reason.GateParse, msgInvalid, err)
		}
		out.Addr = a
	default:
		had := host != ""
		host = strings.ToLower(strings.TrimRight(host, "."))
		if had && host == "" {
			return nil, reason.New(reason.InvalidURL, reason.GateParse, msgNoHost)
		}
	}
	out.Host = host
	if host == "" && w.IsSpecialScheme() && out.Scheme != "file" {
		return nil, reason.New(reason.InvalidURL, reason.GateParse, msgNoHost)
	}
	return out, nil
}

// Size limits applied by Parse before parsing. Real URLs stay far below
// them; beyond them the WHATWG library's cost grows quadratically (userinfo
// and opaque hosts), so an oversized URL is refused as invalid_url instead.
const (
	// MaxURLBytes bounds the trimmed input (bytes).
	MaxURLBytes = 32 << 10
	// MaxAuthorityBytes bounds userinfo+host+port, counted from after the
	// scheme's slashes to the first '/', '?', '#' (or '\' for special
	// schemes) (bytes). DNS names are at most 253 bytes.
	MaxAuthorityBytes = 1 << 10
	// MaxSlashes bounds the number of '/' and '\' in the input (path
	// segments, counted anywhere in the URL).
	MaxSlashes = 1 << 10
)

// authorityLen over-estimates the length of the authority section of s.
func authorityLen(s string) int {
	n := schemeLen(s)
	if n == 0 {
		return 0
	}
	special := false
	switch strings.ToLower(s[:n]) {
	case "http", "https", "ws", "wss", "ftp", "file":
		special = true
	}
	i := n + 1
	if !special {
		if !strings.HasPrefix(s[i:], "//") {
			return 0 // opaque path (mailto:, javascript:) or path only: no authority
		}
		i += 2
	}
	for special && i < len(s) && (s[i] == '/' || s[i] == '\\' || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	start := i
	for ; i < len(s); i++ {
		c := s[i]
		if c == '/' || c == '?' || c == '#' || (special && c == '\\') {
			break
		}
	}
	return i - start
}

const msgInvalid = "Invalid URL: it cannot be parsed the way a browser would parse it (WHATWG URL Standard). " +
	"Give a full absolute URL such as https://example.com/page."

func invalidURL(err error) *reason.Error {
	t := wuerrors.Type(err)
	cause := fmt.Errorf("whatwg-url: %s", t) // no input echo: it may carry a secret
	switch t {
	case wuerrors.MissingSchemeNonRelativeURL:
		return reason.Wrap(reason.InvalidURL, reason.GateParse,
			"Invalid URL: it has no scheme. Give a full absolute URL starting with https:// or http://.", cause)
	case wuerrors.HostMissing:
		return reason.Wrap(reason.InvalidURL, reason.GateParse, msgNoHost, cause)
	}
	return reason.Wrap(reason.InvalidURL, reason.GateParse, msgInvalid, cause)
}

// schemeLen returns the length of a leading URL scheme ("https") if s starts
// with one followed by ':', else 0.
func schemeLen(s string) int {
	if s == "" || !isAlpha(s[0]) {
		return 0
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i
		case isAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.':
		default:
			return 0
		}
	}
	return 0
}

// repairSchemeGap removes white space directly after "scheme://"
// (spec §A6.6). Only that one gap is repaired.
func repairSchemeGap(s string) string {
	n := schemeLen(s)
	if n == 0 || !strings.HasPrefix(s[n:], "://") {
		return s
	}
	head := n + 3
	rest := strings.TrimLeftFunc(s[head:], unicode.IsSpace)
	if len(rest) == len(s)-head {
		return s
	}
	return s[:head] + rest
}

// HostPort returns host:port for dialing: IPv6 hosts in brackets, the
// explicit port or else the scheme's default (http 80, https 443, ws 80,
// wss 443, ftp 21). For a scheme without a default and no explicit port it
// returns the (bracketed) host alone.
func (u *URL) HostPort() string {
	h := u.Host
	if u.Addr.Is6() {
		h = "[" + h + "]"
	}
	p := u.Port
	if p == "" {
		p = defaultPort(u.Scheme)
	}
	if p == "" {
		return h
	}
	return h + ":" + p
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return ""
}

// idnaProfile is UTS #46 lookup processing as in the WHATWG host parser
// (non-transitional, no STD3 rules, no DNS length check).
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.VerifyDNSLength(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.Transitional(false),
)

// Normalize applies spec §A6.6 normalize_url_for_request, the form the
// secret gate checks in addition to the raw input (it is not what gets
// fetched: that is URL.Href). It trims; empty stays empty; a scheme other
// than http/https is returned trimmed and otherwise unchanged. For http(s)
// it removes white space directly after "scheme://", removes tabs and
// newlines (as Python's urlsplit does), lower-cases the scheme, IDNA-encodes
// a non-ASCII host (keeping it on IDNA failure) and percent-encodes the path
// (keeping / % : @ ! $ & ' ( ) * + , ; = and unreserved characters) and the
// query and fragment (which also keep '?') as UTF-8. Existing %XX escapes
// are kept, so Normalize is idempotent. Input that Python's urlsplit rejects
// (unbalanced IPv6 brackets, an invalid bracketed host, a netloc that NFKC
// turns into URL delimiters) is returned trimmed.
func Normalize(raw string) string {
	s := strings.TrimSpace(raw)
	if s == "" {
		return ""
	}
	n := schemeLen(s)
	if n == 0 {
		return s
	}
	scheme := strings.ToLower(s[:n])
	if scheme != "http" && scheme != "https" {
		return s
	}
	w := removeTabNewline(repairSchemeGap(s))
	n = schemeLen(w)
	if n == 0 {
		return s
	}
	rest := w[n+1:]
	var netloc, origNetloc string
	hasNetloc := strings.HasPrefix(rest, "//")
	if hasNetloc {
		rest = rest[2:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		netloc, rest = rest[:end], rest[end:]
		if !validNetloc(netloc) {
			return s
		}
		origNetloc = netloc
		netloc = idnaNetloc(netloc)
	}
	var query, fragment string
	var hasQuery, hasFragment bool
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, fragment, hasFragment = rest[:i], rest[i+1:], true
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query, hasQuery = rest[:i], rest[i+1:], true
	}
	path := quote(rest, false)
	if hasQuery {
		query = quote(query, true)
	}
	if hasFragment {
		fragment = quote(fragment, true)
	}
	if scheme == w[:n] && hasNetloc && netloc == origNetloc && path == rest &&
		(!hasQuery || query != "") && (!hasFragment || fragment != "") &&
		len(w) == n+3+len(netloc)+len(path)+boolLen(hasQuery)+len(query)+boolLen(hasFragment)+len(fragment) {
		return w // already normalized: no allocation
	}
	var b strings.Builder
	b.Grow(len(w) + 16)
	b.WriteString(scheme)
	b.WriteByte(':')
	if hasNetloc || strings.HasPrefix(path, "//") || path == "" || path[0] == '/' {
		// urlunsplit: http(s) always uses "//".
		b.WriteString("//")
		b.WriteString(netloc)
		if netloc != "" && path != "" && path[0] != '/' {
			b.WriteByte('/')
		}
	}
	b.WriteString(path)
	if hasQuery && query != "" {
		b.WriteByte('?')
		b.WriteString(query)
	}
	if hasFragment && fragment != "" {
		b.WriteByte('#')
		b.WriteString(fragment)
	}
	return b.String()
}

func boolLen(b bool) int {
	if b {
		return 1
	}
	return 0
}

func removeTabNewline(s string) string {
	if !strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, s)
}

var netlocDelims = strings.NewReplacer("@", "", ":", "", "#", "", "?", "")

// validNetloc mirrors the ValueError checks of Python's urlsplit.
func validNetloc(netloc string) bool {
	open, closeB := strings.Contains(netloc, "["), strings.Contains(netloc, "]")
	if open != closeB {
		return false
	}
	if open {
		_, after, _ := strings.Cut(netloc, "[")
		inside, _, _ := strings.Cut(after, "]")
		if strings.HasPrefix(inside, "v") || strings.HasPrefix(inside, "V") {
			// IPvFuture: v<hex>.<chars>
			if !strings.Contains(inside, ".") {
				return false
			}
		} else if a, err := netip.ParseAddr(inside); err != nil || !a.Is6() {
			return false
		}
	}
	if isASCII(netloc) {
		return true
	}
	n := netlocDelims.Replace(netloc)
	n2 := norm.NFKC.String(n)
	return n == n2 || !strings.ContainsAny(n2, "/?#@:")
}

// idnaNetloc IDNA-encodes a non-ASCII host inside netloc (spec §A6.6: on
// IDNA failure the original is kept).
func idnaNetloc(netloc string) string {
	if isASCII(netloc) {
		return netloc
	}
	start := strings.LastIndexByte(netloc, '@') + 1
	hostPort := netloc[start:]
	host := hostPort
	if strings.HasPrefix(host, "[") {
		return netloc // IPv6 literals are ASCII
	}
	if i := strings.IndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	if host == "" || isASCII(host) {
		return netloc
	}
	a, err := idnaProfile.ToASCII(host)
	if err != nil || a == "" {
		return netloc
	}
	return netloc[:start] + a + hostPort[len(host):]
}

// quote is Python's urllib.parse.quote with safe = "/%:@!$&'()*+,;=" (plus
// '?' when query is true): bytes outside the safe set and A-Za-z0-9_.-~ are
// written as %XX (upper-case hex) of their UTF-8 encoding.
func quote(s string, query bool) string {
	need := false
	for i := 0; i < len(s); i++ {
		if !quoteSafe(s[i], query) {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quoteSafe(c, query) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func quoteSafe(c byte, query bool) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '_', '.', '-', '~', '/', '%', ':', '@', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	case '?':
		return query
	}
	return false
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
