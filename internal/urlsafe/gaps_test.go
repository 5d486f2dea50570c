package urlsafe

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// A fake JWT: {"alg":"HS256","typ":"JWT"} . {"sub":"1234567890"} . signature.
const testJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

// TestJWTInURL: a JWT anywhere in a URL is secret_in_url (a Gatehouse
// extension of spec §A7), in every case and encoding variant the prefix
// matcher handles; base64 JSON that is not a JWT stays allowed.
func TestJWTInURL(t *testing.T) {
	parts := strings.SplitN(testJWT, ".", 3)
	tests := []struct {
		name, raw string
		want      reason.Code
	}{
		{"neutral param", "https://app.example/cb?state=" + testJWT, reason.SecretInURL},
		{"credential-named param", "https://app.example/cb?id_token=" + testJWT, reason.SecretInURL},
		{"in path", "https://app.example/verify/" + testJWT + "/go", reason.SecretInURL},
		{"in fragment", "https://app.example/#" + testJWT, reason.SecretInURL},
		{"unsecured (empty signature)", "https://app.example/?t=" + parts[0] + "." + parts[1] + ".", reason.SecretInURL},
		{"dots percent-encoded", "https://app.example/?t=" + strings.ReplaceAll(testJWT, ".", "%2E"), reason.SecretInURL},
		{"dots lower-case encoded", "https://app.example/?t=" + strings.ReplaceAll(testJWT, ".", "%2e"), reason.SecretInURL},
		{"double encoded", "https://app.example/?t=" + strings.ReplaceAll(testJWT, ".", "%252E"), reason.SecretInURL},
		{"prefix encoded", "https://app.example/?t=%65yJ" + testJWT[3:], reason.SecretInURL},
		{"after encoded separator", "https://app.example/?a=x%26t%3D" + testJWT, reason.SecretInURL},
		{"split by a newline (browser strips it)", "https://app.example/?t=" + testJWT[:20] + "\n" + testJWT[20:], reason.SecretInURL},
		{"payload not JSON", "https://app.example/?t=eyJhbGciOiJIUzI1NiJ9.abc.def", ""},
		{"one base64 JSON part", "https://app.example/?state=eyJhIjoxfQ", ""},
		{"two parts only", "https://app.example/?state=" + parts[0] + "-" + parts[1], ""},
		{"glued to a letter", "https://app.example/?t=x" + testJWT, ""},
		{"upper-case EYJ is no JWT", "https://app.example/?t=" + strings.ToUpper(testJWT), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := Parse(tt.raw)
			got := CheckSecrets(tt.raw, u, false)
			if reason.Of(got) != tt.want {
				t.Fatalf("CheckSecrets(%q) = %v, want %q", tt.raw, got, tt.want)
			}
			if got != nil && strings.Contains(got.Message, "eyJ") && !strings.Contains(got.Message, "eyJ….eyJ") {
				t.Fatalf("message echoes the token: %s", got.Message)
			}
		})
	}
	// MatchPrefix stays spec §A7 exactly: JWTs are not in its list.
	if _, ok := MatchPrefix(testJWT); ok {
		t.Fatal("MatchPrefix matched a JWT; §A7 leaves them out")
	}
}

// TestLocalhostNames: every *.localhost name (and localhost.) is loopback
// without DNS, refused as ssrf_private unless private URLs are allowed
// (RFC 6761 §6.3; browsers never resolve them).
func TestLocalhostNames(t *testing.T) {
	for _, raw := range []string{
		"http://localhost/", "http://localhost./", "http://LOCALHOST:8080/x",
		"http://app.localhost/", "http://a.b.localhost./", "http://App.LocalHost/",
		"https://%6Cocalhost/", "http://ｌｏｃａｌｈｏｓｔ/", "http://foo.localhost:3000/",
	} {
		u, err := Parse(raw)
		if err != nil {
			t.Fatalf("Parse(%q): %v", raw, err)
		}
		if got := (Options{}).CheckStatic(u); reason.Of(got) != reason.SSRFPrivate {
			t.Errorf("CheckStatic(%q) = %v, want ssrf_private", raw, got)
		}
		if got := (Options{AllowPrivate: true}).CheckStatic(u); got != nil {
			t.Errorf("CheckStatic(%q) with allow_private = %v, want allowed", raw, got)
		}
	}
	for _, host := range []string{"localhost.example.com", "notlocalhost", "mylocalhost", "localhost-dev", "localhostx"} {
		if IsLocalhostName(host) {
			t.Errorf("IsLocalhostName(%q) = true", host)
		}
	}
}

// TestSensitiveParamVariants: spec §A6.7 names in case, encoding and
// separator variants a server would read as the same name.
func TestSensitiveParamVariants(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"https://x.example/?TOKEN=abc", "TOKEN"},
		{"https://x.example/?Access_Token=abc", "Access_Token"},
		{"https://x.example/?%61pi_key=abc", "api_key"},
		{"https://x.example/?api%5Fkey=abc", "api_key"},
		{"https://x.example/?%2574oken=abc", "%74oken"}, // decoded twice by some servers
		{"https://x.example/?api-key=abc", "api-key"},
		{"https://x.example/?api.key=abc", "api.key"},
		{"https://x.example/?client-secret=abc", "client-secret"},
		{"https://x.example/?X_AMZ_SIGNATURE=abc", "X_AMZ_SIGNATURE"},
		{"https://x.example/?to\u212Aen=abc", "to\u212Aen"}, // Kelvin sign lower-cases to k
		{"https://x.example/?+token+=abc", " token "},
		{"HTTPS://x.example/?token=abc", "token"},
		{"https://x.example/?q=1;token=abc", "token"},
		{"https://x.example/#/cb?access_token=abc", "access_token"},
		{"https://x.example/?token=%20", "token"},
		{"https://x.example/?tokens=abc", ""},
		{"https://x.example/?key=abc", ""},
		{"https://x.example/?token=", ""},
	}
	for _, tt := range tests {
		if got := SensitiveQueryParam(tt.raw); got != tt.want {
			t.Errorf("SensitiveQueryParam(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// TestSecretCaseAndEncodingVariants: §A7 prefixes are case-sensitive, but a
// host is lower-cased (and IDNA-mapped) before it is sent, so a key that only
// becomes a token in the canonical host is still refused; the same holds for
// every percent-encoding depth and for HTML-escaped separators.
func TestSecretCaseAndEncodingVariants(t *testing.T) {
	tests := []struct {
		name, raw string
		extract   bool
		want      reason.Code
	}{
		{"upper-case key in host", "https://SK-PROJ0123456789ABCDEF.evil.example/", false, reason.SecretInURL},
		{"upper-case GitHub token in host", "https://GHP_AAAAAAAAAAAAAAAAAAAAAA.evil.example/", false, reason.SecretInURL},
		{"full-width key in host", "https://ｓｋ-proj0123456789abcdef.evil.example/", false, reason.SecretInURL},
		{"percent-encoded host", "https://%73k-proj0123456789abcdef.evil.example/", false, reason.SecretInURL},
		{"upper-case key in path is no token", "https://evil.example/SK-PROJ0123456789ABCDEF", false, ""},
		{"HTML-escaped separator", "https://x.example/?a=1&amp;token=abc", true, reason.SensitiveQueryParam},
		{"hyphenated name", "https://x.example/?Api-Key=abc", true, reason.SensitiveQueryParam},
		{"name double-encoded", "https://x.example/?%2561ccess_token=abc", true, reason.SensitiveQueryParam},
		{"fragment route", "https://x.example/#/cb?id=1&access_token=abc", true, reason.SensitiveQueryParam},
		{"key triple-encoded in fragment", "https://x.example/#k=sk%25252Dproj0123456789abcdef", false, reason.SecretInURL},
	}
	for _, tt := range tests {
		u, _ := Parse(tt.raw)
		if got := CheckSecrets(tt.raw, u, tt.extract); reason.Of(got) != tt.want {
			t.Errorf("%s: CheckSecrets(%q) = %v, want %q", tt.name, tt.raw, got, tt.want)
		}
	}
}
