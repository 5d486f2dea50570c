package urlsafe

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// prefixPattern is one credential format of spec §A7: a literal prefix and
// a regular expression for the body that follows it.
type prefixPattern struct {
	prefix string
	body   *lazyregexp.Regexp // anchored at the start of the body
	kind   string             // for messages: names the kind, never the value
}

func pat(prefix, body, name string) prefixPattern {
	return prefixPattern{
		prefix: prefix,
		body:   lazyregexp.New(`^(?:` + body + `)`),
		kind:   name + " (" + prefix + "…)",
	}
}

const (
	alnum10 = `[A-Za-z0-9]{10,}`
	word10  = `[A-Za-z0-9_-]{10,}`
)

// prefixPatterns lists the formats of spec §A7 in the described system's
// alternation order (the first format that matches at the leftmost
// position wins).
var prefixPatterns = []prefixPattern{
	// sk-: 10+ body chars, single dots may separate body chars.
	pat("sk-", `[A-Za-z0-9_-](?:\.?[A-Za-z0-9_-]){9,}`, "an OpenAI-style key"),
	pat("ghp_", alnum10, "a GitHub token"),
	pat("github_pat_", `[A-Za-z0-9_]{10,}`, "a GitHub token"),
	pat("gho_", alnum10, "a GitHub token"),
	pat("ghu_", alnum10, "a GitHub token"),
	pat("ghs_", alnum10, "a GitHub token"),
	pat("ghr_", alnum10, "a GitHub token"),
	pat("xapp-", `[0-9]+-[A-Za-z0-9-]{10,}`, "a Slack app token"),
	pat("xox", `[baprs]-[A-Za-z0-9-]{10,}`, "a Slack token"),
	pat("AIza", `[A-Za-z0-9_-]{30,}`, "a Google API key"),
	pat("pplx-", alnum10, "a Perplexity key"),
	pat("fal_", word10, "a Fal key"),
	pat("fc-", alnum10, "a Firecrawl key"),
	pat("bb_live_", word10, "a Browserbase key"),
	pat("gAAAA", `[A-Za-z0-9_=-]{20,}`, "an encrypted Codex token"),
	pat("AKIA", `[A-Z0-9]{16}`, "an AWS access key ID"),
	pat("sk_live_", alnum10, "a Stripe key"),
	pat("sk_test_", alnum10, "a Stripe key"),
	pat("rk_live_", alnum10, "a Stripe key"),
	pat("SG.", word10, "a SendGrid key"),
	pat("hf_", alnum10, "a Hugging Face token"),
	pat("r8_", alnum10, "a Replicate token"),
	pat("npm_", alnum10, "an npm token"),
	pat("pypi-", word10, "a PyPI token"),
	pat("dop_v1_", alnum10, "a DigitalOcean token"),
	pat("doo_v1_", alnum10, "a DigitalOcean token"),
	pat("am_org_", `[A-Za-z0-9]{20,}`, "an AgentMail key"),
	pat("am_", `[A-Za-z0-9]{20,}`, "an AgentMail key"),
	pat("sk_", `[A-Za-z0-9_]{10,}`, "an ElevenLabs-style key"),
	pat("tvly-", alnum10, "a Tavily key"),
	pat("exa_", alnum10, "an Exa key"),
	pat("gsk_", alnum10, "a Groq key"),
	pat("syt_", alnum10, "a Matrix token"),
	pat("retaindb_", alnum10, "a RetainDB key"),
	pat("hsk-", alnum10, "a Hindsight key"),
	pat("mem0_", alnum10, "a Mem0 key"),
	pat("brv_", alnum10, "a ByteRover key"),
	pat("ntn_", alnum10, "a Notion token"),
	pat("xai-", `[A-Za-z0-9]{30,}`, "an xAI key"),
	pat("fw-", `[A-Za-z0-9]{30,}`, "a Fireworks key"),
	pat("fw_", `[A-Za-z0-9]{30,}`, "a Fireworks key"),
	pat("fpk_", `[A-Za-z0-9]{30,}`, "a Fireworks key"),
	pat("glpat-", word10, "a GitLab token"),
	pat("gloas-", word10, "a GitLab token"),
	pat("gldt-", word10, "a GitLab token"),
	pat("glcbt-", word10, "a GitLab token"),
	pat("glptt-", word10, "a GitLab token"),
	pat("glft-", word10, "a GitLab token"),
	pat("glimt-", word10, "a GitLab token"),
	pat("glagent-", word10, "a GitLab token"),
	pat("glsoat-", word10, "a GitLab token"),
	pat("glffct-", word10, "a GitLab token"),
	pat("glwt-", word10, "a GitLab token"),
	pat("glrt-", `[A-Za-z0-9_.-]{10,}`, "a GitLab runner token"),
	pat("glrtr-", `[A-Za-z0-9_.-]{10,}`, "a GitLab runner token"),
	pat("GR1348941", word10, "a GitLab runner token"),
	pat("pk-lf-", `[A-Za-z0-9-]{8,}`, "a Langfuse public key"),
}

// byFirst indexes prefixPatterns by the first byte of their prefix.
var byFirst = func() (t [256][]int) {
	for i, p := range prefixPatterns {
		t[p.prefix[0]] = append(t[p.prefix[0]], i)
	}
	return t
}()

// startPair marks the first two bytes of every prefix (and "ey" of a JWT)
// as a bitset per first byte, so that scanning clean text skips almost
// every position after two table lookups.
var startPair = func() (t [256][4]uint64) {
	set := func(a, b byte) { t[a][b>>6] |= 1 << (b & 63) }
	for _, p := range prefixPatterns {
		set(p.prefix[0], p.prefix[1])
	}
	set('e', 'y')
	return t
}()

// mayStart reports whether a prefix or a JWT may start at text[i].
func mayStart(text string, i int) bool {
	if i+1 >= len(text) {
		return false
	}
	b := text[i+1]
	return startPair[text[i]][b>>6]&(1<<(b&63)) != 0
}

// isTokenChar is the boundary class [A-Za-z0-9_-] of spec §A7.
func isTokenChar(c byte) bool { return isAlpha(c) || isDigit(c) || c == '_' || c == '-' }

func isHex(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// leadingBoundary reports whether a token may start at text[i] (spec §A7):
// the previous character is not in [A-Za-z0-9_-], or it ends a
// backslash-letter escape (\n), a \uXXXX escape or a \xHH escape.
func leadingBoundary(text string, i int) bool {
	if i == 0 || !isTokenChar(text[i-1]) {
		return true
	}
	if i >= 2 && text[i-2] == '\\' && isAlpha(text[i-1]) {
		return true
	}
	if i >= 6 && text[i-6] == '\\' && text[i-5] == 'u' &&
		isHex(text[i-4]) && isHex(text[i-3]) && isHex(text[i-2]) && isHex(text[i-1]) {
		return true
	}
	if i >= 4 && text[i-4] == '\\' && text[i-3] == 'x' && isHex(text[i-2]) && isHex(text[i-1]) {
		return true
	}
	return false
}

// matchAt returns the end of the first format matching at text[i], or -1,
// and the format's index.
func matchAt(text string, i int) (end, idx int) {
	checked := false // leadingBoundary is evaluated once, after a prefix matched
	for _, k := range byFirst[text[i]] {
		p := &prefixPatterns[k]
		if !strings.HasPrefix(text[i:], p.prefix) {
			continue
		}
		if !checked {
			if !leadingBoundary(text, i) {
				return -1, -1
			}
			checked = true
		}
		start := i + len(p.prefix)
		// Every body class is inside [A-Za-z0-9_.=-]: the regexp never
		// reads past that run, so give it the run only (not the rest of a
		// long text).
		run := start
		for run < len(text) && (isTokenChar(text[run]) || text[run] == '.' || text[run] == '=') {
			run++
		}
		loc := p.body.FindStringIndex(text[start:run])
		if loc == nil {
			continue
		}
		e := start + loc[1]
		// Trailing boundary: the next character is not in [A-Za-z0-9_-].
		// The body classes never end inside a shorter valid match, so the
		// greedy match is the only candidate (see matcher_test).
		if e < len(text) && isTokenChar(text[e]) {
			continue
		}
		return e, k
	}
	return -1, -1
}

// findPrefix returns the leftmost credential token in text and its format.
func findPrefix(text string) (match string, idx int, ok bool) {
	for i := 0; i < len(text); i++ {
		if !mayStart(text, i) || byFirst[text[i]] == nil {
			continue
		}
		if e, k := matchAt(text, i); e >= 0 {
			return text[i:e], k, true
		}
	}
	return "", -1, false
}

// MatchPrefix finds the first credential-shaped token in text (spec §A7
// _PREFIX_RE): a known vendor prefix plus a body of the format's character
// class and minimum length, starting at a boundary (not preceded by
// [A-Za-z0-9_-], except directly after a \n-style, \uXXXX or \xHH escape)
// and ending at one (not followed by [A-Za-z0-9_-]). Matching is on bytes;
// text is not decoded (callers check decoded forms themselves). It returns
// the token and true, or "" and false.
func MatchPrefix(text string) (match string, ok bool) {
	m, _, ok := findPrefix(text)
	return m, ok
}

// maxDecodeRounds bounds repeated percent-decoding (a URL encoded more
// deeply than this is not a plausible request).
const maxDecodeRounds = 8

// percentDecode decodes every %XX (any case) byte-wise; malformed escapes
// stay as written. It returns s itself when nothing changes.
func percentDecode(s string) string {
	i := strings.IndexByte(s, '%')
	for i >= 0 && !(i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])) {
		j := strings.IndexByte(s[i+1:], '%')
		if j < 0 {
			return s
		}
		i += 1 + j
	}
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// jwtKind is the message kind of a JSON Web Token (see jwtAt).
const jwtKind = "a JSON Web Token (eyJ….eyJ….…)"

// jwtAt returns the end of a JSON Web Token starting at text[i], or -1: the
// compact JWS serialization (RFC 7515 §7.1) of a JSON header and a JSON
// payload, i.e. three base64url parts separated by dots where the first two
// start with "eyJ" (base64url of `{"`), each at least 4 characters, the
// third possibly empty (RFC 7519 §6.1 unsecured JWT). Boundaries are those of
// the prefix matcher (leadingBoundary; not followed by [A-Za-z0-9_-]).
// Recognising JWTs in URLs is a Gatehouse extension of spec §A7, which
// leaves them to output redaction: a JWT handed to a reader is a credential.
func jwtAt(text string, i int) int {
	if !strings.HasPrefix(text[i:], "eyJ") || !leadingBoundary(text, i) {
		return -1
	}
	j := i
	for part := 0; part < 2; part++ {
		if !strings.HasPrefix(text[j:], "eyJ") {
			return -1
		}
		k := j + 3
		for k < len(text) && isTokenChar(text[k]) {
			k++
		}
		if k-j < 4 || k >= len(text) || text[k] != '.' {
			return -1
		}
		j = k + 1
	}
	for j < len(text) && isTokenChar(text[j]) {
		j++
	}
	return j
}

// findToken returns the leftmost credential in text, a spec §A7 prefix
// token or a JWT (jwtAt): its byte range and the kind named in messages.
func findToken(text string) (start, end int, kind string, ok bool) {
	for i := 0; i < len(text); i++ {
		if !mayStart(text, i) {
			continue
		}
		c := text[i]
		if c == 'e' {
			if e := jwtAt(text, i); e >= 0 {
				return i, e, jwtKind, true
			}
		}
		if byFirst[c] == nil {
			continue
		}
		if e, k := matchAt(text, i); e >= 0 {
			return i, e, prefixPatterns[k].kind, true
		}
	}
	return 0, 0, "", false
}

// findInDecoded checks s and each successive percent-decoding of s, up to a
// fixed point or maxDecodeRounds, for a credential (findToken); it returns
// the kind of the first one found.
func findInDecoded(s string) (kind string, found bool) {
	for round := 0; ; round++ {
		if _, _, k, ok := findToken(s); ok {
			return k, true
		}
		if round == maxDecodeRounds {
			return "", false
		}
		d := percentDecode(s)
		if d == s {
			return "", false
		}
		s = d
	}
}

// FindSecret reports a credential-shaped token anywhere in the URL — path,
// query, fragment, userinfo or host — as secret_in_url (Gate secret, spec
// §A3 step 2): a spec §A7 prefix token (MatchPrefix) or, a Gatehouse
// extension, a JSON Web Token (three base64url parts, eyJ….eyJ….…). It checks four forms: raw, percent-decoded raw, Normalize(raw)
// and percent-decoded Normalize(raw), where decoding is repeated to a fixed
// point (at most 8 rounds, each intermediate form checked) so double
// encoding hides nothing. The message names the kind of credential, never
// its value. It returns nil if no form contains one.
func FindSecret(raw string) *reason.Error {
	if k, ok := findInDecoded(raw); ok {
		return secretErr(k)
	}
	if n := Normalize(raw); n != raw && n != strings.TrimSpace(raw) {
		if k, ok := findInDecoded(n); ok {
			return secretErr(k)
		}
	}
	return nil
}

func secretErr(kind string) *reason.Error {
	return reason.New(reason.SecretInURL, reason.GateSecret,
		"Blocked: URL contains what appears to be an API key or token ("+kind+
			"). Secrets must not be sent in URLs: remove it from the URL.")
}

// sensitiveParams are the credential names of spec §A6.7 (compared after
// percent-decoding and lower-casing). code, key, auth, session and sig are
// deliberately absent: they are ordinary page facets.
// Keys are in paramKey form (so "x-amz-signature" is "x_amz_signature").
var sensitiveParams = map[string]bool{
	"access_token": true, "api_key": true, "apikey": true, "auth_token": true,
	"authorization": true, "awsaccesskeyid": true, "client_secret": true,
	"credential": true, "credentials": true, "jwt": true, "password": true,
	"passwd": true, "secret": true, "session_id": true, "signature": true,
	"token": true, "x_amz_security_token": true, "x_amz_signature": true,
}

// extensionParams are credential names the gate refuses beyond spec
// §A6.7's list (a Gatehouse extension; docs/reasons.md says so): the spec
// leaves refresh_token, id_token and x-goog-signature to log redaction
// only, but each is a credential a reader must not receive (OAuth 2.0
// refresh tokens, RFC 6749 §1.5; OpenID Connect ID tokens; Google Cloud
// Storage signed URLs with their x-goog-credential), and so are
// x-api-key, private_token (GitLab) and bearer/bearer_token. Keys are in
// paramKey form. Redact removes their values too (redactParams), so the
// gate and the redactor agree on every name.
var extensionParams = map[string]bool{
	"refresh_token": true, "id_token": true, "x_goog_signature": true, "x_goog_credential": true,
	"x_api_key": true, "private_token": true, "bearer": true, "bearer_token": true,
}

// extensionParam is SensitiveQueryParam over extensionParams: the first
// such parameter with a non-empty value, top-level or nested, in raw or
// in u's parsed query and fragment; or "".
func extensionParam(raw string, u *URL) string {
	if query, frag, ok := httpParams(raw); ok {
		if name, _ := nestedCredential(joinFragment(query, frag), extensionParams, nonEmpty); name != "" {
			return name
		}
		if name := sensitivePathParam(pathParams(raw), extensionParams); name != "" {
			return name
		}
	}
	if u != nil && (u.Scheme == "http" || u.Scheme == "https") {
		name, _ := nestedCredential(joinFragment(u.RawQuery, u.Fragment), extensionParams, nonEmpty)
		return name
	}
	return ""
}

// httpParams returns the raw query and fragment of an http(s) URL (tabs
// and newlines removed first, as a browser does); ok is false for any
// other text.
func httpParams(raw string) (query, frag string, ok bool) {
	s := removeTabNewline(strings.TrimSpace(raw))
	n := schemeLen(s)
	if n == 0 {
		return "", "", false
	}
	if sc := strings.ToLower(s[:n]); sc != "http" && sc != "https" {
		return "", "", false
	}
	rest, frag, _ := strings.Cut(s[n+1:], "#")
	_, query, _ = strings.Cut(rest, "?")
	return query, frag, true
}

// joinFragment is query + "#" + fragment, or query alone when there is no
// fragment: the text nestedCredential scans.
func joinFragment(query, fragment string) string {
	if fragment == "" {
		return query
	}
	return query + "#" + fragment
}

// SensitiveQueryParam returns the first credential-named parameter carrying
// a non-empty value in an http(s) URL (spec §A6.7), or "". Parameters are
// read from the query and then from a fragment that carries parameters
// ("#access_token=…", or the part after '?' in "#/route?token=…"). Pairs are
// split on '&' and ';' and decoded like Python's parse_qsl ('+' is a space,
// %XX decoded once); names compare in paramKey form (further decoding,
// case folding, '-', '.' and ' ' as '_'); the returned name is
// the decoded one as written (e.g. "API_KEY", "token" for "%74oken").
// When no top-level parameter is one, the values are read too (a Gatehouse
// extension, see nestedCredential): a credential-named parameter inside a
// nested URL or query, raw or percent-encoded to any depth
// ("next=%2Fcb%3Faccess_token%3Dabc"), is returned by its decoded name.
// Tabs and newlines are removed first, as a browser does.
func SensitiveQueryParam(raw string) string {
	query, frag, ok := httpParams(raw)
	if !ok {
		return ""
	}
	if name := sensitiveIn(query, frag); name != "" {
		return name
	}
	return sensitivePathParam(pathParams(raw), sensitiveParams)
}

// pathParams returns the text of an http(s) URL's path parameters: what
// follows the first ';' before the query or fragment (RFC 3986 §3.3
// "matrix" parameters, "/a;token=abc/b" → "token=abc/b"), or "". Redact
// removes a credential-named ";name=value" wherever it stands, so the gate
// reads these pairs as it reads query parameters: one rule for both.
func pathParams(raw string) string {
	s := removeTabNewline(strings.TrimSpace(raw))
	n := schemeLen(s)
	if n == 0 {
		return ""
	}
	if sc := strings.ToLower(s[:n]); sc != "http" && sc != "https" {
		return ""
	}
	rest, _, _ := strings.Cut(s[n+1:], "#")
	rest, _, _ = strings.Cut(rest, "?")
	if _, after, ok := strings.Cut(rest, ";"); ok {
		return after
	}
	return ""
}

// sensitivePathParam is the first credential-named pair (names, paramKey
// form) with a value in path-parameter text p, top-level (split on ';' and
// '&', as query pairs) or nested in a value; or "".
func sensitivePathParam(p string, names map[string]bool) string {
	if p == "" {
		return ""
	}
	name, _ := nestedCredential(p, names, nonEmpty)
	return name
}

func sensitiveIn(query, fragment string) string {
	if name := sensitivePair(query); name != "" {
		return name
	}
	if fragment != "" {
		f := fragment
		if _, after, ok := strings.Cut(f, "?"); ok {
			f = after
		}
		if name := sensitivePair(f); name != "" {
			return name
		}
	}
	// A Gatehouse extension of spec §A6.7: a credential-named parameter
	// inside a parameter value, a nested URL or query such as
	// "next=%2Fcb%3Faccess_token%3Dabc" or "redirect=https%3A%2F%2Fy%2F%3Ftoken%3D…"
	// (any encoding depth), reaches the reader all the same.
	name, _ := nestedCredential(joinFragment(query, fragment), sensitiveParams, nonEmpty)
	return name
}

func nonEmpty(v string) bool { return v != "" }

// maxParamNameBytes bounds the parameter names nestedCredential compares (the
// longest credential name, triple-encoded, is far shorter).
const maxParamNameBytes = 256

// nestedCredential scans s and each successive percent-decoding of s (to a
// fixed point, at most maxDecodeRounds) for "name=value" where name, in
// paramKey form, is in names and whose form-decoded value satisfies carries
// (the gate: non-empty; Redact: not just Redacted). A name starts after '?', '&', ';', '#' or '=' (or at the start of
// s), a value ends at '&', ';' or '#', so a parameter nested in another's
// value ("next=/cb?token=abc", "state=token%3Dabc", a whole URL encoded
// twice) is found as well as a top-level one. It returns the first such
// name (form-decoded) and its decoded value, or "" and "".
func nestedCredential(s string, names map[string]bool, carries func(string) bool) (name, value string) {
	if strings.IndexByte(s, '=') < 0 && strings.IndexByte(s, '%') < 0 {
		return "", ""
	}
	for round := 0; ; round++ {
		if n, v := scanCredential(s, names, carries); n != "" {
			return n, v
		}
		if round == maxDecodeRounds {
			return "", ""
		}
		d := percentDecode(s)
		if d == s {
			return "", ""
		}
		s = d
	}
}

// nameIn reports whether the raw (undecoded) parameter name raw is in names
// in paramKey form. A plain ASCII name is folded in a stack buffer, without
// allocating (the common case: every parameter of every link of a page);
// anything else goes through formDecode and paramKey.
func nameIn(raw string, names map[string]bool) bool {
	if len(raw) == 0 || len(raw) > 32 || strings.ContainsAny(raw, "%+") || raw[0] <= ' ' || raw[len(raw)-1] <= ' ' {
		return names[paramKey(formDecode(raw))]
	}
	var buf [32]byte
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c >= 0x80:
			return names[paramKey(formDecode(raw))]
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '-' || c == '.' || c == ' ':
			c = '_'
		}
		buf[i] = c
	}
	return names[string(buf[:len(raw)])]
}

// scanCredential is one round of nestedCredential (no decoding of s).
func scanCredential(s string, names map[string]bool, carries func(string) bool) (name, value string) {
	start := 0 // where the current name starts
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '?', '&', ';', '#':
			start = i + 1
			continue
		case '=':
		default:
			continue
		}
		raw := s[start:i]
		start = i + 1
		if raw == "" || len(raw) > maxParamNameBytes {
			continue
		}
		if !nameIn(raw, names) {
			continue
		}
		n := formDecode(raw)
		e := i + 1
		for e < len(s) && s[e] != '&' && s[e] != ';' && s[e] != '#' {
			e++
		}
		if v := formDecode(s[i+1 : e]); carries(v) {
			return n, v
		}
	}
	return "", ""
}

func sensitivePair(q string) string {
	for q != "" {
		i := 0
		for i < len(q) && q[i] != '&' && q[i] != ';' {
			i++
		}
		pair := q[:i]
		if i < len(q) {
			q = q[i+1:]
		} else {
			q = ""
		}
		name, value, ok := strings.Cut(pair, "=")
		if !ok || value == "" {
			continue
		}
		name = formDecode(name)
		if !sensitiveParams[paramKey(name)] {
			continue
		}
		if formDecode(value) != "" {
			return name
		}
	}
	return ""
}

// paramKey is the form a decoded parameter name is compared in: decoded
// further to a fixed point (at most maxDecodeRounds; a name such as
// "%2574oken" reaches a server that decodes twice as "token"), lower-cased
// (Unicode simple folding, as Python's str.lower: "TO\u212AEN" is "token"),
// leading and trailing spaces removed, and '-', '.' and ' ' read as '_'
// (servers such as PHP rewrite them so; "api-key" names the same credential
// as "api_key"). The decoding and folding go beyond spec §A6.7, in the
// refusing direction.
func paramKey(name string) string {
	for range maxDecodeRounds {
		d := percentDecode(name)
		if d == name {
			break
		}
		name = d
	}
	name = strings.TrimSpace(strings.ToLower(name))
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '.', ' ':
			return '_'
		}
		return r
	}, name)
}

func formDecode(s string) string {
	if strings.IndexByte(s, '+') >= 0 {
		s = strings.ReplaceAll(s, "+", " ")
	}
	return percentDecode(s)
}

// CheckSecrets runs the secret gate for one URL (spec §A3 step 2, Gate
// secret), in order: FindSecret on raw (and on u.Href, the form actually
// sent) → secret_in_url; a password in the userinfo → credentials_in_url;
// then, only when extract is true (web_extract hands URLs to third-party
// readers), a credential-named query, fragment or path (";name=value")
// parameter → sensitive_query_param. u may be nil (raw unparseable): then only the
// string checks run. It returns nil when the URL carries no secret.
func CheckSecrets(raw string, u *URL, extract bool) *reason.Error {
	if err := FindSecret(raw); err != nil {
		return err
	}
	if u != nil && u.Href != raw {
		if k, ok := findInDecoded(u.Href); ok {
			return secretErr(k)
		}
	}
	if u != nil && u.HasPassword {
		return reason.New(reason.CredentialsInURL, reason.GateSecret,
			"Blocked: URL contains a password in its user-info part (user:password@host). "+
				"Credentials must not be sent in URLs: remove them.")
	}
	if !extract {
		return nil
	}
	name := SensitiveQueryParam(raw)
	if name == "" && u != nil && (u.Scheme == "http" || u.Scheme == "https") {
		name = sensitiveIn(u.RawQuery, u.Fragment)
	}
	if name == "" {
		name = extensionParam(raw, u)
	}
	if name != "" {
		return reason.Newf(reason.SensitiveQueryParam, reason.GateSecret,
			"Blocked: URL carries a credential-named parameter (%s) with a value; "+
				"web_extract hands URLs to third-party readers, so credentials must not travel in them. "+
				"Remove the parameter.", strings.ToLower(name))
	}
	return nil
}
