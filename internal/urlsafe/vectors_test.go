package urlsafe

import (
	"net/netip"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

func TestVectorsIPClass(t *testing.T) {
	for _, v := range vectors.Area(t, "ssrf.ip_class", 33) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct{ IP string }
			var want struct {
				PrivateOrInternal  bool `json:"private_or_internal"`
				AlwaysBlockedFloor bool `json:"always_blocked_floor"`
			}
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			a := netip.MustParseAddr(in.IP)
			c := ClassifyAddr(a)
			if got := c != ClassPublic; got != want.PrivateOrInternal {
				t.Errorf("ClassifyAddr(%s) = %v; private_or_internal want %v", a, c, want.PrivateOrInternal)
			}
			if got := c == ClassMetadata; got != want.AlwaysBlockedFloor {
				t.Errorf("ClassifyAddr(%s) = %v; floor want %v", a, c, want.AlwaysBlockedFloor)
			}
		})
	}
}

// blockKinds maps the vectors' block_kind names to reason codes.
var blockKinds = map[string]reason.Code{
	"private_internal":   reason.SSRFPrivate,
	"cloud_metadata":     reason.SSRFMetadata,
	"metadata_hostname":  reason.SSRFMetadata,
	"dns_failure":        reason.DNSUnresolvable,
	"unsupported_scheme": reason.UnsupportedScheme,
	"no_hostname":        reason.InvalidURL,
	"unparseable_answer": reason.DNSBadAnswer,
}

type safeURLInput struct {
	URL          string   `json:"url"`
	DNSAnswers   []string `json:"dns_answers"`
	DNS          string   `json:"dns"`
	ProxyEnvSet  bool     `json:"proxy_env_set"`
	AllowPrivate bool     `json:"allow_private_urls"`
	FakeIPRanges []string `json:"security.fake_ip_ranges"`
}

// gate runs the whole pre-fetch SSRF decision the way egress does, with DNS
// simulated from the vector: Parse → CheckStatic → (host name) DNS → JudgeAnswers.
func gate(in safeURLInput) reason.Code {
	u, err := Parse(in.URL)
	if err != nil {
		return err.Code
	}
	ranges, _ := ParseFakeIPRanges(in.FakeIPRanges)
	o := Options{AllowPrivate: in.AllowPrivate, FakeIPRanges: ranges}
	if err := o.CheckStatic(u); err != nil {
		return err.Code
	}
	if u.Addr.IsValid() {
		return "" // a literal resolves to itself; CheckStatic judged it
	}
	if in.DNS == "resolution_error" {
		return DNSUnresolvable(nil).Code // no proxy env var can excuse it
	}
	if err := o.JudgeAnswers(u.Scheme, u.Host, in.DNSAnswers); err != nil {
		return err.Code
	}
	return ""
}

func TestVectorsIsSafeURL(t *testing.T) {
	// Overrides where the issue text wins over a vector.
	overrides := map[string]reason.Code{
		// Gatehouse never routes through environment proxies and no environment
		// variable may weaken a gate: DNS failure fails closed even with a proxy
		// variable set.
		"https://api.openai.com/v1/models": reason.DNSUnresolvable,
		// A URL that cannot be canonicalised is invalid_url (issue §3); a
		// schemeless string and the empty string are not URLs for a WHATWG parser.
		"example.com/path": reason.InvalidURL,
		"":                 reason.InvalidURL,
		// WHATWG (and Chromium) reject a zone id inside an IPv6 host, so the URL is
		// invalid_url; the answer itself is still judged private below
		// (TestZoneAnswerPrivate).
		"http://[fe80::1%eth0]/": reason.InvalidURL,
	}
	for _, v := range vectors.Area(t, "ssrf.is_safe_url", 40) {
		t.Run(v.Note, func(t *testing.T) {
			var in safeURLInput
			var want struct {
				Allowed   bool    `json:"allowed"`
				BlockKind *string `json:"block_kind"`
			}
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			var code reason.Code
			if want.BlockKind != nil {
				var ok bool
				if code, ok = blockKinds[*want.BlockKind]; !ok {
					t.Fatalf("unknown block_kind %q", *want.BlockKind)
				}
			}
			if o, ok := overrides[in.URL]; ok {
				code = o
			}
			if got := gate(in); got != code {
				t.Errorf("gate(%q) = %q, want %q", in.URL, got, code)
			}
		})
	}
}

func TestZoneAnswerPrivate(t *testing.T) {
	err := Options{}.JudgeAnswers("http", "example.com", []string{"fe80::1%eth0"})
	if reason.Of(err) != reason.SSRFPrivate {
		t.Fatalf("got %v, want ssrf_private", err)
	}
}

func TestVectorsAlwaysBlockedFloor(t *testing.T) {
	for _, v := range vectors.Area(t, "ssrf.always_blocked_floor", 16) {
		t.Run(v.Note, func(t *testing.T) {
			var in safeURLInput
			var want struct {
				AlwaysBlocked bool `json:"always_blocked"`
			}
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			got := false
			if u, err := Parse(in.URL); err == nil {
				got = IsAlwaysBlocked(u.Host, in.DNSAnswers)
			}
			if got != want.AlwaysBlocked {
				t.Errorf("IsAlwaysBlocked(%q, %q) = %v, want %v", in.URL, in.DNSAnswers, got, want.AlwaysBlocked)
			}
		})
	}
}

func TestVectorsNormalize(t *testing.T) {
	for _, v := range vectors.Area(t, "url.normalize", 10) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct{ URL string }
			var want struct{ Normalized string }
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			got := Normalize(in.URL)
			if got != want.Normalized {
				t.Errorf("Normalize(%q) = %q, want %q", in.URL, got, want.Normalized)
			}
			if again := Normalize(got); again != got {
				t.Errorf("Normalize not idempotent: %q → %q", got, again)
			}
		})
	}
}

func TestVectorsSensitiveQueryParam(t *testing.T) {
	for _, v := range vectors.Area(t, "url.sensitive_query_param", 20) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct{ URL string }
			var want struct{ Param *string }
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			w := ""
			if want.Param != nil {
				w = *want.Param
			}
			if got := SensitiveQueryParam(in.URL); got != w {
				t.Errorf("SensitiveQueryParam(%q) = %q, want %q", in.URL, got, w)
			}
		})
	}
}

func TestVectorsPrefixMatcher(t *testing.T) {
	for _, v := range vectors.Area(t, "redact.prefix_matcher", 32) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct{ Text string }
			var want struct {
				Matches bool
				Match   *string
			}
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			m, ok := MatchPrefix(in.Text)
			if ok != want.Matches {
				t.Fatalf("MatchPrefix(%q) ok = %v, want %v", in.Text, ok, want.Matches)
			}
			if want.Match != nil && m != *want.Match {
				t.Errorf("MatchPrefix(%q) = %q, want %q", in.Text, m, *want.Match)
			}
		})
	}
}
