package urlsafe

import "strings"

// logOnlyParams are the names of spec §A6.7's "separate, broader list used
// only for redacting CDP/log URLs" that neither the gate nor Redact treats
// as credentials (in paramKey form): the gate lets them through as page
// facets (an OAuth callback's code, a signed CDN link's sig, a search's
// key), but their values must not sit in log and debug files, which persist
// on disk. The list's other names (access_token, refresh_token, id_token,
// token, api_key, apikey, client_secret, password, jwt, secret, signature,
// x-amz-signature, x-goog-signature) are redactParams already.
var logOnlyParams = map[string]bool{"auth": true, "session": true, "key": true, "code": true, "sig": true}

// RedactLog is Redact for text written to logs and debug files (spec §A6.7's
// broader log-redaction list): in addition, the values of the auth, session,
// key, code and sig parameters after '?', '&', ';' or '#' become
// "name=[REDACTED]" ("?code=abc&sig=x" becomes
// "?code=[REDACTED]&sig=[REDACTED]"). Results returned to the agent keep
// those values (they are how the page is addressed) and use Redact. Pure and
// safe for concurrent use; text without '=' costs one Redact.
func RedactLog(s string) string {
	out := Redact(s)
	if strings.IndexByte(out, '=') < 0 {
		return out
	}
	// Redact removed the values of redactParams already: the second pass
	// needs only the names it leaves.
	return redactURLPartsWith(out, logOnlyParams)
}
