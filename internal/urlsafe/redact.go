package urlsafe

import (
	"strings"
)

// Redacted replaces a secret in text returned by Redact.
const Redacted = "[REDACTED]"

// maxRedactRounds bounds the passes of Redact (each pass removes at least one
// secret; text with more secrets than this falls back to coarse redaction).
const maxRedactRounds = 64

// Redact returns s with every secret it carries replaced by Redacted. It is
// the one redaction function of Gatehouse: every URL and text Gatehouse
// returns or writes (result rows, meta.final_url, notes, footers, debug
// files, logs, `gatehouse check` output, and page content while
// security.redact_secrets is on) passes through it. It is built on the
// secret matcher of the URL gate (spec §A7, §A10.4), so whatever the gate
// would refuse in a URL is what Redact removes from text:
//
//   - a spec §A7 prefix token keeps its vendor prefix ("sk-[REDACTED]",
//     "ghp_[REDACTED]") so a reader still sees what kind of key it was; a
//     token that runs on through percent-escapes ("sk-proj-abc…%6Blmn…") is
//     removed up to the end of that run (encodedTail);
//   - a JSON Web Token becomes "eyJ[REDACTED]";
//   - the password of URL userinfo ("https://user:pw@host") becomes
//     "user:[REDACTED]@";
//   - the value of a credential-named parameter (spec §A6.7 names plus
//     the gate's extensionParams: refresh_token, id_token, x-goog-signature, …), compared as
//     SensitiveQueryParam does; code, key, auth, session and sig are page
//     facets and stay) after '?', '&', ';' or '#' becomes "name=[REDACTED]",
//     and so does the value of any parameter that hides one in a nested,
//     possibly percent-encoded URL or query ("next=%2Fcb%3Ftoken%3Dabc"
//     becomes "next=[REDACTED]"), as the gate reads it (SensitiveQueryParam);
//     a value a token rule already cut ("api_key=sk-[REDACTED]") goes whole
//     under one marker ("api_key=[REDACTED]");
//     a URL whose parameter the pair scan cannot place (the value runs
//     through "(" or a quote, or across a tab) keeps its "scheme://host"
//     and loses the rest;
//   - a white-space-delimited word that still hides a secret only after
//     percent-decoding (FindSecret's forms) is cut: a URL keeps its
//     "scheme://host" and loses the rest ("https://host/[REDACTED]"), or
//     loses everything after "scheme://" when the host itself hides the
//     secret; any other word becomes Redacted.
//
// Only a text that opens with a special scheme (http, https, ws, wss, ftp,
// file) is read as one URL; prose such as "Blocked: redirect hop 1 (to
// https://…) was refused" keeps its words, and markdown link syntax
// ("[text](url)", "](" a word boundary) survives.
//
// The result never contains a token FindSecret finds, nor a userinfo
// password, nor (read as one URL) a credential-named parameter, top-level or
// nested, whose value is more than Redacted and punctuation.
// Text without secrets is returned unchanged (no allocation). Redact is
// pure and safe for concurrent use; it costs one scan of s when s is clean.
func Redact(s string) string {
	out := redact(s)
	// redact leaves no token in the raw text; but FindSecret also reads the
	// text the way the gate does, with the host IDNA-mapped
	// ("http://\xc2 sk-0000" becomes "http://xn-- sk-0000-ps49b"), a form
	// the raw scans never see. When only that reading carries a token,
	// redact the reading instead, and when even that leaves one, keep the
	// scheme only. Text that is not an http(s) URL skips this (Normalize
	// returns it as is), so a clean page still costs one scan.
	n := Normalize(out)
	if n == out || n == strings.TrimSpace(out) {
		return out
	}
	if _, found := findInDecoded(n); !found {
		return out
	}
	if r := redact(n); FindSecret(r) == nil {
		return r
	}
	if n := schemeLen(out); n > 0 {
		return out[:n] + "://" + Redacted
	}
	return Redacted
}

// redact is one pass of Redact without the final normalized-form check.
func redact(s string) string {
	if s == "" {
		return s
	}
	out := s
	for range maxRedactRounds {
		start, end, kind, ok := findToken(out)
		if !ok {
			break
		}
		keep := "eyJ"
		if kind != jwtKind {
			keep = tokenPrefix(out[start:end])
		}
		end = encodedTail(out, end)
		out = out[:start] + keep + Redacted + out[end:]
	}
	out = redactURLParts(out)
	if hasEncodedSecret(out) {
		out = redactEncodedWords(out)
	}
	if strings.ContainsAny(out, "?#") && strings.ContainsAny(out, "=%") {
		out = redactCredentialWords(out)
		if t := strings.TrimSpace(out); len(t) <= MaxURLBytes && specialScheme(t) && credentialLeft(t) {
			// One URL whose parameter the gate reads across white
			// space (a tab or newline it drops): keep the scheme only.
			// Only a URL of a scheme the gate reads counts: prose
			// that merely opens with "word:" ("Blocked: redirect hop
			// 1 (to https://…?token=[REDACTED]) was refused") is no
			// URL and keeps its words.
			return t[:schemeLen(t)] + "://" + Redacted
		}
	}
	if single := repairSchemeGap(strings.TrimSpace(out)); len(single) <= MaxURLBytes && !strings.ContainsAny(single, " \t\r\n") && schemeLen(single) > 0 {
		// One URL: a token may appear only in its canonical form (a host
		// is lower-cased and IDNA-mapped before it is sent, so
		// "SK-PROJ…" in a host is the key "sk-proj…"). Show the canonical
		// form, redacted, instead.
		if u, err := Parse(single); err == nil && u.Href != single {
			if _, found := findInDecoded(u.Href); found {
				return redact(u.Href)
			}
		}
	}
	if len(out) <= MaxURLBytes && strings.IndexByte(out, '@') >= 0 && passwordLeft(out) {
		// The whole text is a URL whose password the word scan could not
		// place (white space inside the userinfo): keep the scheme only.
		if n := schemeLen(out); n > 0 {
			return out[:n] + "://" + Redacted
		}
		return Redacted
	}
	return out
}

// specialScheme reports whether s opens with the scheme of a WHATWG
// special URL (http, https, ws, wss, ftp, file; any case), the only URLs
// the gate reads as one: "Blocked: …" or "Note: …" is prose.
func specialScheme(s string) bool {
	n := schemeLen(s)
	if n == 0 {
		return false
	}
	switch strings.ToLower(s[:n]) {
	case "http", "https", "ws", "wss", "ftp", "file":
		return true
	}
	return false
}

// encodedTail returns the end of the token that ends at s[end] when it
// continues through percent-escapes: the raw matcher stops at the first '%'
// of "sk-proj-abcdefghij%6Blmnop…", but a server decoding the URL reads one
// key "sk-proj-abcdefghijklmnop…", so the rest of it must go too. The run
// is extended over token characters, '.', and %XX escapes of those (or of
// '%' itself, for double encoding); an escape of anything else (%20, %2F,
// %26) ends it.
func encodedTail(s string, end int) int {
	e := end
	for e < len(s) {
		c := s[e]
		if isTokenChar(c) || c == '.' {
			e++
			continue
		}
		if c == '%' && e+2 < len(s) && isHex(s[e+1]) && isHex(s[e+2]) {
			if d := unhex(s[e+1])<<4 | unhex(s[e+2]); isTokenChar(d) || d == '.' || d == '%' {
				e += 3
				continue
			}
		}
		break
	}
	if e > end && strings.IndexByte(s[end:e], '%') < 0 {
		return end // no escape: the matcher's own boundary stands
	}
	return e
}

// passwordLeft reports whether s, read as one URL, has a userinfo password
// other than Redacted.
func passwordLeft(s string) (left bool) {
	defer func() {
		if recover() != nil {
			left = false
		}
	}()
	w, err := parser.Parse(repairSchemeGap(strings.TrimSpace(s)))
	if err != nil {
		return false
	}
	p := w.Password()
	return p != "" && p != Redacted && p != "%5BREDACTED%5D"
}

// tokenPrefix returns the vendor prefix of a matched §A7 token.
func tokenPrefix(tok string) string {
	best := ""
	for _, k := range byFirst[tok[0]] {
		if p := prefixPatterns[k].prefix; strings.HasPrefix(tok, p) && len(p) > len(best) {
			best = p
		}
	}
	return best
}

// redactParams are the parameter names (in paramKey form) whose values
// Redact removes: spec §A6.7's list plus the gate's extensionParams (which
// hold the spec's log-redaction extras refresh_token, id_token and
// x-goog-signature), so the gate and the redactor agree on every name.
var redactParams = func() map[string]bool {
	m := map[string]bool{}
	for k := range sensitiveParams {
		m[k] = true
	}
	for k := range extensionParams {
		m[k] = true
	}
	return m
}()

// redactURLParts removes userinfo passwords and credential-named parameter
// values (see Redact). It returns s itself when there are none.
func redactURLParts(s string) string { return redactURLPartsWith(s, redactParams) }

// redactURLPartsWith is redactURLParts removing the values of the names in
// names (paramKey form) instead of redactParams.
func redactURLPartsWith(s string, names map[string]bool) string {
	if strings.IndexByte(s, '@') >= 0 {
		s = redactUserinfo(s)
	}
	if strings.IndexByte(s, '=') < 0 {
		return s
	}
	var b strings.Builder
	changed := false
	i := 0
	for i < len(s) {
		// name=value after a parameter separator
		if (s[i] == '?' || s[i] == '&' || s[i] == ';' || s[i] == '#') && i+1 < len(s) {
			j := i + 1
			k := j
			for k < len(s) && s[k] != '=' && s[k] != '&' && s[k] != ';' && s[k] != '#' && s[k] != '?' && !isURLStop(s[k]) {
				k++
			}
			if k < len(s) && s[k] == '=' && k > j {
				v := k + 1
				for v < len(s) && s[v] != '&' && s[v] != ';' && s[v] != '#' && !isURLStop(s[v]) {
					v++
					if strings.HasPrefix(s[v:], Redacted) {
						// A token already redacted inside the value
						// ("api_key=sk-[REDACTED]"): the value goes
						// whole, under one marker.
						v += len(Redacted)
					}
				}
				// The value goes when the name is a credential's, or when
				// the pair hides one in a nested URL or query
				// ("next=%2Fcb%3Ftoken%3Dabc"), as the gate reads it.
				if v > k+1 && s[k+1:v] != Redacted && (names[paramKey(formDecode(s[j:k]))] ||
					hasNestedCredential(s[j:v])) {
					b.WriteString(s[i : k+1])
					b.WriteString(Redacted)
					i = v
					changed = true
					continue
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	if !changed {
		return s
	}
	return b.String()
}

// hasNestedCredential reports whether the text of one name=value pair still
// carries a credential-named parameter (redactParams) in any decoded form.
func hasNestedCredential(pair string) bool {
	n, _ := nestedCredential(pair, redactParams, carriesCredential)
	return n != ""
}

// carriesCredential reports whether a decoded parameter value still holds
// anything once every Redacted in it is removed: a letter, a digit or a
// non-ASCII byte (a value of punctuation only, such as the ")" that closes
// a parenthesized URL after "token=[REDACTED]", is no credential).
func carriesCredential(v string) bool {
	if strings.Contains(v, Redacted) {
		v = strings.ReplaceAll(v, Redacted, "")
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; isAlpha(c) || isDigit(c) || c >= 0x80 {
			return true
		}
	}
	return false
}

// credentialLeft reports whether the URL word w, read as the gate reads it
// (tabs and newlines removed; query and fragment, every nested and encoded
// level), still carries a credential-named parameter with a value.
func credentialLeft(w string) bool {
	i := strings.IndexAny(w, "?#")
	if i < 0 {
		return false
	}
	if strings.ContainsAny(w, "\t\r\n") {
		w = removeTabNewline(w)
		i = strings.IndexAny(w, "?#")
	}
	if i < 0 || strings.IndexByte(w[i:], '=') < 0 && strings.IndexByte(w[i:], '%') < 0 {
		return false
	}
	n, _ := nestedCredential(w[i+1:], redactParams, carriesCredential)
	return n != ""
}

// redactCredentialWords cuts (cutURL) every white-space-delimited word that
// still carries a credential-named parameter (credentialLeft): the pair scan
// of redactURLParts stops at characters that end a URL in running text
// ("(", "'", "\\"), where the gate reads on.
func redactCredentialWords(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	i := 0
	for i < len(s) {
		if isSpace(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && !isSpace(s[j]) && !strings.HasPrefix(s[j:], "](") {
			j++
		}
		if j == i {
			// "](" between a markdown link's text and its target: a
			// word boundary, so "[https://h/?token=…](https://h/…)"
			// keeps its link syntax (Redact's one-URL check still reads
			// a text that is one URL whole).
			i += 2
			continue
		}
		if w := s[i:j]; credentialLeft(w) {
			b.WriteString(s[done:i])
			b.WriteString(cutURL(w))
			done = j
		}
		i = j
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// redactUserinfo replaces the password of every URL in s that has one (as a
// browser's URL parser reads it: "http::pw@host" and "http:\\\\u:pw@host"
// count) with Redacted. Words are delimited by white space, quotes, angle
// brackets, parentheses, braces, '|' and '`' (not by '\\' or '[': a browser
// reads "http:\\\\u:p@h" and "http://u:p@[::1]/" as URLs).
func redactUserinfo(s string) string {
	var b strings.Builder
	changed := false
	i := 0
	for i < len(s) {
		if isWordStop(s[i]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && !isWordStop(s[j]) {
			j++
		}
		w := s[i:j]
		// A markdown link's text opens with '[' ("[https://u:pw@h/](…)"):
		// the URL starts after it.
		lead := 0
		for lead < len(w) && w[lead] == '[' {
			lead++
		}
		b.WriteString(w[:lead])
		w = w[lead:]
		if strings.IndexByte(w, '@') >= 0 && strings.IndexByte(w, ':') >= 0 {
			if nw := redactPassword(w); nw != w {
				w, changed = nw, true
			}
		}
		b.WriteString(w)
		i = j
	}
	if !changed {
		return s
	}
	return b.String()
}

// redactPassword returns the URL word w with its userinfo password replaced
// by Redacted, w itself when it has none, or Redacted when the password
// cannot be located in the raw text.
func redactPassword(w string) string {
	u, err := Parse(w)
	if err != nil || !u.HasPassword {
		return w
	}
	n := schemeLen(w)
	if n == 0 {
		return Redacted
	}
	k := n + 1
	for k < len(w) && (w[k] == '/' || w[k] == '\\') {
		k++
	}
	end := k
	for end < len(w) && w[end] != '/' && w[end] != '?' && w[end] != '#' && w[end] != '\\' {
		end++
	}
	auth := w[k:end]
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return Redacted
	}
	c := strings.IndexByte(auth[:at], ':')
	if c < 0 {
		return Redacted
	}
	return w[:k] + auth[:c+1] + Redacted + auth[at:] + w[end:]
}

func isWordStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '`', '(', ')', '{', '}', '|':
		return true
	}
	return false
}

// isURLStop reports bytes that end a URL inside running text.
func isURLStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '`', '(', ')', '[', ']', '{', '}', '|', '\\':
		return true
	}
	return false
}

// hasEncodedSecret reports whether a decoded form of s (FindSecret's forms)
// still holds a credential.
func hasEncodedSecret(s string) bool {
	if !strings.ContainsAny(s, "%\t\r\n") {
		return false
	}
	// s itself is known clean (Redact removed every token): start from
	// its first decoding.
	found := false
	if d := percentDecode(s); d != s {
		_, found = findInDecoded(d)
	}
	if !found {
		if n := Normalize(s); n != s {
			_, found = findInDecoded(n)
		}
	}
	return found
}

// redactEncodedWords cuts every white-space-delimited word whose decoded
// forms still hold a secret (see Redact).
func redactEncodedWords(s string) string {
	var b strings.Builder
	i := 0
	for i < len(s) {
		if isSpace(s[i]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		b.WriteString(cutWord(s[i:j]))
		i = j
	}
	out := b.String()
	if hasEncodedSecret(out) {
		// The secret straddles white space (a tab or newline a URL parser
		// would drop): nothing short of dropping the text is safe.
		return Redacted
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// cutWord redacts one word that hides a secret.
func cutWord(w string) string {
	if _, found := findInDecoded(w); !found {
		return w
	}
	return cutURL(w)
}

// cutURL cuts the word w: a URL keeps its "scheme://host" (unless the host
// hides a secret) and loses the rest; any other word becomes Redacted.
func cutURL(w string) string {
	if n := schemeLen(w); n > 0 && strings.HasPrefix(w[n:], "://") {
		rest := w[n+3:]
		end := strings.IndexAny(rest, "/?#\\")
		if end < 0 {
			end = len(rest)
		}
		if head := w[:n+3] + rest[:end]; !hasSecretForm(head) {
			return head + "/" + Redacted
		}
		return w[:n+3] + Redacted
	}
	return Redacted
}

func hasSecretForm(s string) bool {
	_, found := findInDecoded(s)
	return found
}
