package urlsafe

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

const testKey = "sk-proj0123456789abcdefABCDEF" // OpenAI-shaped, fake

func TestCheckSecrets(t *testing.T) {
	enc := strings.Replace(testKey, "-", "%2D", 1)
	dbl := strings.Replace(testKey, "-", "%252D", 1)
	tests := []struct {
		name    string
		raw     string
		extract bool
		want    reason.Code
	}{
		{name: "raw in query", raw: "https://evil.example/x?k=" + testKey, want: reason.SecretInURL},
		{name: "encoded dash", raw: "https://evil.example/x?k=" + enc, want: reason.SecretInURL},
		{name: "double encoded", raw: "https://evil.example/x?k=" + dbl, want: reason.SecretInURL},
		{name: "triple encoded", raw: "https://evil.example/x?k=" + strings.Replace(testKey, "-", "%25252D", 1), want: reason.SecretInURL},
		{name: "fully encoded", raw: "https://evil.example/x?k=%73%6B%2D" + testKey[3:], want: reason.SecretInURL},
		{name: "in path", raw: "https://evil.example/" + testKey + "/page", want: reason.SecretInURL},
		{name: "in fragment", raw: "https://evil.example/#" + testKey, want: reason.SecretInURL},
		{name: "in userinfo", raw: "https://" + testKey + "@evil.example/", want: reason.SecretInURL},
		{name: "in userinfo password", raw: "https://x:" + testKey + "@evil.example/", want: reason.SecretInURL},
		{name: "in host label", raw: "https://" + testKey + ".evil.example/", want: reason.SecretInURL},
		{name: "split by tab (browser strips it)", raw: "https://evil.example/?k=sk-proj01234\t56789abcdef", want: reason.SecretInURL},
		{name: "GitHub token", raw: "https://evil.example/?t=ghp_AAAAAAAAAAAAAAAAAAAAAAAA", want: reason.SecretInURL},
		{name: "AWS key id", raw: "https://evil.example/?a=AKIAABCDEFGHIJKLMNOP", want: reason.SecretInURL},
		// The §A7 leading boundary holds on every form: "%41sk-…" decodes to
		// "Ask-…", glued to a letter, so it is no token (as "Ask-…" is not).
		{name: "glued to an encoded letter", raw: "https://evil.example/?a=%41" + testKey},
		{name: "after an encoded separator", raw: "https://evil.example/?a=x%26" + testKey, want: reason.SecretInURL},
		{name: "token param extract", raw: "https://x.example/?token=x", extract: true, want: reason.SensitiveQueryParam},
		{name: "token param browser", raw: "https://x.example/?token=x", extract: false},
		{name: "fragment params", raw: "https://x.example/cb#access_token=abc&x=1", extract: true, want: reason.SensitiveQueryParam},
		{name: "fragment route params", raw: "https://x.example/#/cb?id_x=1&password=hunter2", extract: true, want: reason.SensitiveQueryParam},
		{name: "fragment anchor", raw: "https://x.example/page#top", extract: true},
		{name: "encoded name", raw: "https://x.example/?%74oken=abc", extract: true, want: reason.SensitiveQueryParam},
		{name: "upper-case name", raw: "https://x.example/?API_KEY=abc", extract: true, want: reason.SensitiveQueryParam},
		{name: "semicolon separator", raw: "https://x.example/?a=1;secret=abc", extract: true, want: reason.SensitiveQueryParam},
		{name: "code allowed", raw: "https://x.example/?code=abc", extract: true},
		{name: "key allowed", raw: "https://x.example/?key=abc&auth=1&session=2&sig=3", extract: true},
		{name: "empty token value", raw: "https://x.example/?token=", extract: true},
		{name: "password in userinfo", raw: "https://u:p@h.example/", want: reason.CredentialsInURL},
		{name: "password in userinfo extract", raw: "https://u:p@h.example/", extract: true, want: reason.CredentialsInURL},
		{name: "user only", raw: "https://u@h.example/"},
		{name: "plain", raw: "https://example.com/articles/2024/some-page?utm_source=x&id=42#top", extract: true},
		{name: "short sk- not a key", raw: "https://example.com/sk-abc", extract: true},
		{name: "embedded after letters", raw: "https://example.com/mysk-0123456789abcdef", extract: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := Parse(tt.raw)
			err := CheckSecrets(tt.raw, u, tt.extract)
			if codeOf(err) != tt.want {
				t.Fatalf("CheckSecrets(%q, extract=%v) = %v, want %q", tt.raw, tt.extract, err, tt.want)
			}
			if err == nil {
				return
			}
			if err.Gate != reason.GateSecret {
				t.Errorf("gate = %q", err.Gate)
			}
			for _, secret := range []string{testKey, testKey[3:], "proj0123456789", "hunter2", "AKIAABCDEF", "AAAAAAAAAAAA"} {
				if strings.Contains(err.Message, secret) {
					t.Errorf("message echoes the secret: %q", err.Message)
				}
			}
			if !strings.HasPrefix(err.Message, "Blocked:") {
				t.Errorf("message should start with Blocked: %q", err.Message)
			}
		})
	}
}

func TestFindSecretKind(t *testing.T) {
	err := FindSecret("https://e.example/?k=" + testKey)
	if err == nil || !strings.Contains(err.Message, "an OpenAI-style key (sk-…)") ||
		!strings.Contains(err.Message, "API key or token") {
		t.Fatalf("FindSecret message = %v", err)
	}
	if err := FindSecret("https://e.example/?k=ghp_AAAAAAAAAAAAAAAAAAAA"); err == nil || !strings.Contains(err.Message, "GitHub token (ghp_…)") {
		t.Fatalf("FindSecret message = %v", err)
	}
	if err := FindSecret("https://example.com/"); err != nil {
		t.Fatalf("clean URL: %v", err)
	}
	// Decoding is bounded: 9 levels of %25 nesting is past the bound.
	deep := "sk%2D" + testKey[3:]
	for i := 0; i < 9; i++ {
		deep = strings.Replace(deep, "%", "%25", 1)
	}
	if err := FindSecret("https://e.example/?k=" + deep); err != nil {
		t.Logf("deeply nested encoding still caught (fine): %v", err.Code)
	}
}

func TestMatchPrefixBoundaries(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{name: "unicode escape before", text: `\u00e9ghp_AAAAAAAAAAAAAAAAAAAA`, want: "ghp_AAAAAAAAAAAAAAAAAAAA"},
		{name: "hex escape before", text: `\x41ghp_AAAAAAAAAAAAAAAAAAAA`, want: "ghp_AAAAAAAAAAAAAAAAAAAA"},
		{name: "backslash-letter escape", text: `\tsk-0123456789`, want: "sk-0123456789"},
		{name: "digit before", text: `1ghp_AAAAAAAAAAAAAAAAAAAA`},
		{name: "incomplete unicode escape", text: `\u00eghp_AAAAAAAAAAAAAAAAAAAA`},
		{name: "dash before", text: `-ghp_AAAAAAAAAAAAAAAAAAAA`},
		{name: "slash before", text: `/ghp_AAAAAAAAAAAAAAAAAAAA/`, want: "ghp_AAAAAAAAAAAAAAAAAAAA"},
		{name: "non-ASCII before", text: `éghp_AAAAAAAAAAAAAAAAAAAA`, want: "ghp_AAAAAAAAAAAAAAAAAAAA"},
		{name: "AWS 17 chars", text: `AKIAABCDEFGHIJKLMNOPQ`},
		{name: "sk trailing dot", text: `sk-abcdefghij.`, want: "sk-abcdefghij"},
		{name: "sk dots count no chars", text: `sk-a.b.c.d.e.f.g.h.i`},
		{name: "Stripe then underscore continues as sk_", text: `sk_live_abcdefghij_x`, want: "sk_live_abcdefghij_x"},
		{name: "second candidate wins", text: `xghp_AAAAAAAAAAAAAAAA ghp_BBBBBBBBBBBBBBBBBB`, want: "ghp_BBBBBBBBBBBBBBBBBB"},
		{name: "AgentMail org", text: `am_org_QQQQQQQQQQQQQQQQQQQQ`, want: "am_org_QQQQQQQQQQQQQQQQQQQQ"},
		{name: "GitLab runner with dots", text: `glrt-abc.def.ghij`, want: "glrt-abc.def.ghij"},
		{name: "Slack app", text: `xapp-1-A0123456789`, want: "xapp-1-A0123456789"},
		{name: "Langfuse public", text: `pk-lf-1234abcd`, want: "pk-lf-1234abcd"},
		{name: "codex", text: `gAAAAABBBBBBBBBBBBBBBBBBBB==`, want: "gAAAAABBBBBBBBBBBBBBBBBBBB=="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MatchPrefix(tt.text)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("MatchPrefix(%q) = %q, %v; want %q", tt.text, got, ok, tt.want)
			}
		})
	}
}

func TestPercentDecode(t *testing.T) {
	for in, want := range map[string]string{
		"":          "",
		"abc":       "abc",
		"%41%4a%4A": "AJJ",
		"%":         "%",
		"%4":        "%4",
		"%zz%41":    "%zzA",
		"a%2541":    "a%41",
		"%%41":      "%A",
	} {
		if got := percentDecode(in); got != want {
			t.Errorf("percentDecode(%q) = %q, want %q", in, got, want)
		}
	}
}
