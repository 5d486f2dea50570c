package urlsafe

import "testing"

// Log and debug files redact spec §A6.7's broader list (code, sig, key,
// session, auth) that results keep (breaker5 D22).
func TestRedactLogBroaderList(t *testing.T) {
	for _, c := range []struct{ in, log, result string }{
		{"http://site.test/p?code=secretcode123&sig=abc", "http://site.test/p?code=[REDACTED]&sig=[REDACTED]", "http://site.test/p?code=secretcode123&sig=abc"},
		{"https://cdn.test/f.js;key=K1#session=S2&auth=A3&x=1", "https://cdn.test/f.js;key=[REDACTED]#session=[REDACTED]&auth=[REDACTED]&x=1", ""},
		{"fetched https://a.test/cb?Code=x1 and https://b.test/?SIG=y2 ok", "fetched https://a.test/cb?Code=[REDACTED] and https://b.test/?SIG=[REDACTED] ok", ""},
		{"https://a.test/?token=t0k&code=c", "https://a.test/?token=[REDACTED]&code=[REDACTED]", "https://a.test/?token=[REDACTED]&code=c"},
		{"https://a.test/?codec=h264&keys=1&q=code", "https://a.test/?codec=h264&keys=1&q=code", ""},
		{"no url here", "no url here", ""},
	} {
		if got := RedactLog(c.in); got != c.log {
			t.Errorf("RedactLog(%q) = %q, want %q", c.in, got, c.log)
		}
		if c.result != "" {
			if got := Redact(c.in); got != c.result {
				t.Errorf("Redact(%q) = %q, want %q (results keep the page facets)", c.in, got, c.result)
			}
		}
	}
}
