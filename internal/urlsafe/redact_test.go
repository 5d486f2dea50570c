package urlsafe

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"https://example.com/a?q=1", "https://example.com/a?q=1"},
		{"key " + testKey + " end", "key sk-" + Redacted + " end"},
		{"https://evil.example/x?k=" + testKey, "https://evil.example/x?k=sk-" + Redacted},
		{"https://" + testKey + ".evil.example/", "https://sk-" + Redacted + "/"},
		{"https://x.example/?state=" + testJWT + "&a=1", "https://x.example/?state=eyJ" + Redacted + "&a=1"},
		{"https://bob:hunter2@x.example/p", "https://bob:" + Redacted + "@x.example/p"},
		{"https://bob@x.example/p", "https://bob@x.example/p"},
		{"https://x.example/cb?code=abc&access_token=s3cr3t&x=1", "https://x.example/cb?code=abc&access_token=" + Redacted + "&x=1"},
		{"https://x.example/cb#id_token=abc", "https://x.example/cb#id_token=" + Redacted},
		{"https://x.example/?API-Key=abc;key=term", "https://x.example/?API-Key=" + Redacted + ";key=term"},
		{"https://x.example/?token=", "https://x.example/?token="},
		{"see (https://x.example/?password=pw) now", "see (https://x.example/?password=" + Redacted + ") now"},
		{"https://evil.example/x?t=sk%2Daaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "https://evil.example/" + Redacted},
		{"go https://sk%2Daaaaaaaaaaaaaaaaaaaaaaaaaa.evil.example/ now", "go https://" + Redacted + " now"},
		{"ghp_AAAAAAAAAAAAAAAAAAAA and AKIAABCDEFGHIJKLMNOP", "ghp_" + Redacted + " and AKIA" + Redacted},
		{"https://SK-PROJ0123456789ABCDEF.evil.example/x", "https://sk-" + Redacted + "/x"},
		{"https://ｓｋ-proj0123456789abcdef.evil.example/", "https://sk-" + Redacted + "/"},
		{"https:// SK-PROJ0123456789ABCDEF.evil.example/", "https://sk-" + Redacted + "/"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if r := Redact(tt.in); FindSecret(r) != nil {
			t.Errorf("Redact(%q) still carries a secret", tt.in)
		} else if u, err := Parse(r); err == nil && FindSecret(u.Href) != nil {
			t.Errorf("Redact(%q) = %q carries a secret in its canonical form", tt.in, r)
		}
	}
}

// FuzzRedact: whatever the input, the output carries nothing FindSecret
// would refuse, no userinfo password, and clean text comes back unchanged.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"https://evil.example/x?k=" + testKey, testJWT, "https://a:b@c.example/",
		"https://x.example/?token=abc", "sk%252D" + testKey[3:], "plain text",
		"https://x.example/?t=sk-abcdefg\nhijklmnop",
		"https://x.example/login?next=%2Fcb%3Faccess_token%3Dabc123",
		"https://x.example/login?next=%252Fcb%253Faccess_token%253Dabc123",
		"https://x.example/login?redirect=https%3A%2F%2Fy.example%2F%3Fapi_key%3D" + testKey,
		"https://x.example/login?next=/cb?access_token=abc123", "https://x.example/login?next=%2Fdashboard",
		"https://x.example/?state=token%3Dabc", "see (https://x.example/?next=%2F(cb%3Ftoken%3Dabc) now",
		"https://x.example/?%26token%3Dabc=", "https://x.example/#/r?next=%2Fcb%3Fjwt%3D" + testJWT,
		"Blocked: redirect hop 1 (to https://x.example/?api_key=" + testKey + ") was refused: Blocked: URL",
		"[https://u:pw@x.example/](https://x.example/?token=abc)", "https://x.example/?token=abc](https://y.example/)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		r := Redact(s)
		if u, err := Parse(r); err == nil && FindSecret(u.Href) != nil && !strings.ContainsAny(repairSchemeGap(strings.TrimSpace(r)), " \t\r\n") {
			t.Fatalf("Redact(%q) = %q carries a secret in its canonical form %q", s, r, u.Href)
		}
		if d := time.Since(start); d > 2*time.Second && len(s) < 1<<16 {
			t.Fatalf("Redact of %d bytes took %v", len(s), d)
		}
		if FindSecret(r) != nil {
			t.Fatalf("Redact(%q) = %q still carries a secret", s, r)
		}
		// Whatever the parameter gate refuses (a credential-named
		// parameter, nested or encoded at any depth), Redact removes.
		if gateSeesCredential(r) {
			t.Fatalf("Redact(%q) = %q still carries a credential-named parameter", s, r)
		}
		if FindSecret(s) == nil && !strings.Contains(s, "@") && !strings.Contains(decodeAll(s), "=") && r != s {
			t.Fatalf("clean text changed: %q → %q", s, r)
		}
		if u, err := Parse(r); err == nil && u.HasPassword && !strings.Contains(r, Redacted) {
			t.Fatalf("password survived: %q", r)
		}
	})
}

// TestRedactTokenRunningOnThroughEscapes: a key with a percent-escape in
// its body ("…abcdefghij%6Blmnop…", the letter k encoded) is matched raw up
// to the escape only; a server decoding the URL reads one key, so no part of
// its body may survive redaction (the tail used to be printed: the refused
// hop's message showed "sk-[REDACTED]%6blmnopqrstuvwxyz012345").
func TestRedactTokenRunningOnThroughEscapes(t *testing.T) {
	const body = "abcdefghijklmnopqrstuvwxyz012345"
	for i := 10; i < len(body); i++ {
		enc := fmt.Sprintf("%s%%%02X%s", body[:i], body[i], body[i+1:])
		for _, in := range []string{
			"http://127.0.0.1:18092/f?q=sk-proj-" + enc,
			"http://127.0.0.1:18092/f?q=sk-proj-" + enc + "&page=2",
			"redirect hop 1 (to http://x.example/f?q=sk-proj-" + enc + ") was refused",
			"http://x.example/f?q=sk-proj-" + strings.Replace(enc, "%", "%25", 1),
		} {
			got := Redact(in)
			if tail := body[i+1:]; len(tail) >= 4 && strings.Contains(got, tail) {
				t.Errorf("Redact(%q) = %q keeps the key's tail %q", in, got, tail)
			}
			if !strings.Contains(got, "sk-"+Redacted) {
				t.Errorf("Redact(%q) = %q, want sk-%s", in, got, Redacted)
			}
		}
	}
	// An escape of a separator ends the run: what follows is not the key.
	for in, want := range map[string]string{
		"https://x.example/?q=sk-proj-" + body + "%20and%20more": "https://x.example/?q=sk-" + Redacted + "%20and%20more",
		"https://x.example/?q=sk-proj-" + body + "%26page%3D2":   "https://x.example/?q=sk-" + Redacted + "%26page%3D2",
		"see sk-proj-" + body + " 100%25 sure":                   "see sk-" + Redacted + " 100%25 sure",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestRedactPasswordForms(t *testing.T) {
	for _, in := range []string{
		"http::pw@example.com/", `http:\\u:pw@example.com/`, "http://u:pw@[::1]/", "see [x](https://u:pw@example.com/) ok",
		"ftp://u:pw@example.com/", "custom://u:pw@example.com/",
	} {
		got := Redact(in)
		if strings.Contains(got, "pw@") || !strings.Contains(got, Redacted) {
			t.Errorf("Redact(%q) = %q, password kept", in, got)
		}
	}
}

// BenchmarkRedactPage: one pass over a 300 KB page of markdown with links,
// e-mail addresses and percent-escapes but no secret (the common case).
func BenchmarkRedactPage(b *testing.B) {
	line := "See [the docs](https://example.com/a/b?q=1&page=2#x) or mail a.b@example.com; 50%25 of users skip-the-intro and sk-short.\n"
	page := strings.Repeat(line, 300<<10/len(line))
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if Redact(page) != page {
			b.Fatal("clean page changed")
		}
	}
}

// decodeAll percent-decodes s to a fixed point (at most maxDecodeRounds),
// the deepest form the gate reads.
func decodeAll(s string) string {
	for range maxDecodeRounds {
		d := percentDecode(s)
		if d == s {
			break
		}
		s = d
	}
	return s
}

// TestRedactProseAndMarkdown: prose that opens with "word:" and carries a
// URL keeps its words (a refused redirect hop's message used to become
// "Blocked://[REDACTED]"); markdown link syntax survives; a value that both
// the token and the parameter rule redact gets one marker.
func TestRedactProseAndMarkdown(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwxyz123456"
	for _, c := range []struct{ in, want string }{
		{"Blocked: redirect hop 1 (to https://x.test/?api_key=" + key + ") was refused before it was fetched: Blocked: URL contains what appears to be an API key or token (sk-).",
			"Blocked: redirect hop 1 (to https://x.test/?api_key=[REDACTED]) was refused before it was fetched: Blocked: URL contains what appears to be an API key or token (sk-)."},
		{"Blocked: redirect hop 2 (to https://x.test/?token=abc123) was refused.",
			"Blocked: redirect hop 2 (to https://x.test/?token=[REDACTED]) was refused."},
		{"https://example.org/?api_key=" + key, "https://example.org/?api_key=[REDACTED]"},
		{"see https://example.org/?api_key=" + key + "&b=2 now", "see https://example.org/?api_key=[REDACTED]&b=2 now"},
		{"[cred link](https://u:hunter2@x.test/)", "[cred link](https://u:[REDACTED]@x.test/)"},
		{"[https://u:hunter2@x.test/](https://u:hunter2@x.test/)", "[https://u:[REDACTED]@x.test/](https://u:[REDACTED]@x.test/)"},
		{"[key](https://example.org/?api_key=" + key + ") and [tok](https://x.test/?token=abc123).",
			"[key](https://example.org/?api_key=[REDACTED]) and [tok](https://x.test/?token=[REDACTED])."},
		{"[https://x.test/?token=abc123](https://x.test/?token=abc123)", "[https://x.test/?token=[REDACTED]](https://x.test/?token=[REDACTED])"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}
