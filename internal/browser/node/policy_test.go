package node_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// loaded is a replica's blocklist with config rules and a shared file.
func loaded(t testing.TB) *policy.Policy {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("# shared\nshared.example\n*.ads.example\n203.0.113.7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bl, warns := policy.Load(true, []string{"Blocked.Example", "www.config.example", "bücher.example"}, []string{"shared.txt"}, dir)
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	return bl
}

// TestPolicyRoundTrip: the policy a replica builds from its config
// travels (Encode, DecodePolicy) unchanged, and the node's compiled
// blocklist is the replica's: the same rules, sources and verdicts.
func TestPolicyRoundTrip(t *testing.T) {
	bl := loaded(t)
	ranges, _ := urlsafe.ParseFakeIPRanges([]string{"198.18.0.0/15", "fc00:1::/64"})
	if len(ranges) != 1 {
		t.Fatalf("ranges = %v", ranges) // fc00::/7 is undeclarable
	}
	p := node.PolicyOf(urlsafe.Options{FakeIPRanges: ranges}, bl, true, false, 3*time.Second)
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	q, err := node.DecodePolicy(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("decoded %+v, sent %+v", q, p)
	}
	cp, err := q.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cp.Blocklist.Rules(), bl.Rules()) || !cp.Blocklist.Enabled() {
		t.Errorf("rules on the node = %v, on the replica %v", cp.Blocklist.Rules(), bl.Rules())
	}
	if len(q.Blocklist.Sources) != 2 || q.Blocklist.Sources[0].Source != policy.SourceConfig {
		t.Errorf("sources = %+v, want config then the shared file", q.Blocklist.Sources)
	}
	for _, u := range []string{"http://blocked.example/", "http://x.config.example/", "http://xn--bcher-kva.example/",
		"http://shared.example/", "http://t.ads.example/", "http://203.0.113.7/", "http://[::ffff:203.0.113.7]/", "http://free.example/"} {
		if got, want := cp.Blocklist.Check(u), bl.Check(u); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: node %+v, replica %+v", u, got, want)
		}
	}
	if cp.ConnectTimeout != 3*time.Second || len(cp.Gate.FakeIPRanges) != 1 || cp.Gate.AllowPrivate {
		t.Errorf("compiled = %+v", cp)
	}
	if p := node.PolicyOf(urlsafe.Options{}, nil, false, true, time.Hour); p.ConnectTimeoutMS != node.MaxConnectTimeout.Milliseconds() || p.Validate() != nil {
		t.Errorf("a connect timeout over the bound = %d ms (%v)", p.ConnectTimeoutMS, p.Validate())
	}
}

// TestDecodePolicyRejects: every shape a replica would not have sent.
func TestDecodePolicyRejects(t *testing.T) {
	src := func(pats ...string) string {
		b, _ := json.Marshal(pats)
		return `{"version":1,"blocklist":{"enabled":true,"sources":[{"source":"config","patterns":` + string(b) + `}]}}`
	}
	many := make([]string, node.MaxPolicyRules+1)
	for i := range many {
		many[i] = fmt.Sprintf("h%d.example", i)
	}
	ranges := make([]string, node.MaxFakeIPRanges+1)
	for i := range ranges {
		ranges[i] = fmt.Sprintf(`"198.18.%d.%d/32"`, i/256, i%256)
	}
	for _, c := range []struct{ name, in string }{
		{"empty", ``},
		{"null", `null`},
		{"array", `[]`},
		{"version 0", `{}`},
		{"version 2", `{"version":2}`},
		{"unknown field", `{"version":1,"allow_metadata":true}`},
		{"unknown nested field", `{"version":1,"blocklist":{"enabled":true,"files":["/etc/passwd"]}}`},
		{"trailing data", `{"version":1}{}`},
		{"trailing bracket", `{"version":1}]`},
		{"wrong type", `{"version":"1"}`},
		{"negative timeout", `{"version":1,"connect_timeout_ms":-1}`},
		{"timeout over the bound", fmt.Sprintf(`{"version":1,"connect_timeout_ms":%d}`, node.MaxConnectTimeout.Milliseconds()+1)},
		{"metadata range", `{"version":1,"fake_ip_ranges":["169.254.169.254/32"]}`},
		{"loopback range", `{"version":1,"fake_ip_ranges":["127.0.0.0/8"]}`},
		{"every address", `{"version":1,"fake_ip_ranges":["0.0.0.0/0"]}`},
		{"range not masked", `{"version":1,"fake_ip_ranges":["198.18.0.1/15"]}`},
		{"bare address", `{"version":1,"fake_ip_ranges":["198.18.0.1"]}`},
		{"mapped range", `{"version":1,"fake_ip_ranges":["::ffff:198.18.0.0/111"]}`},
		{"duplicate range", `{"version":1,"fake_ip_ranges":["198.18.0.0/15","198.18.0.0/15"]}`},
		{"too many ranges", `{"version":1,"fake_ip_ranges":[` + strings.Join(ranges, ",") + `]}`},
		{"source without rules", `{"version":1,"blocklist":{"enabled":true,"sources":[{"source":"config","patterns":[]}]}}`},
		{"empty source", `{"version":1,"blocklist":{"enabled":true,"sources":[{"source":"","patterns":["a.example"]}]}}`},
		{"empty pattern", src("")},
		{"pattern too long", src(strings.Repeat("a", policy.MaxRuleBytes+1))},
		{"glob that does not compile", src("*.[z-a]")},
		{"too many rules", src(many...)},
		{"too long", `{"version":1,"fake_ip_ranges":[` + strings.Repeat(" ", node.MaxPolicyBytes) + `]}`},
	} {
		if p, err := node.DecodePolicy([]byte(c.in)); err == nil || !errors.Is(err, node.ErrPolicy) {
			t.Errorf("%s: DecodePolicy = %+v, %v; want an ErrPolicy", c.name, p, err)
		}
	}
}

// FuzzPolicy: DecodePolicy never panics, and what it accepts encodes and
// decodes to itself; and every rule a replica's config can hold (one
// blocklist entry, policy.Load) travels in a policy the node accepts.
func FuzzPolicy(f *testing.F) {
	bl, _ := policy.Load(true, []string{"blocked.example", "*.ads.example"}, nil, "")
	p := node.PolicyOf(urlsafe.Options{}, bl, false, true, time.Second)
	b, _ := p.Encode()
	f.Add(b)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"active":true,"allow_private_urls":true,"fake_ip_ranges":["198.18.0.0/15","2001:db8::/32"],"connect_timeout_ms":10000}`))
	f.Add([]byte(`{"name":"t","active":true}`))
	f.Add([]byte(`{"version":1,"fake_ip_ranges":["169.254.0.0/16"]}`))
	f.Add([]byte(`{"version":1,"blocklist":{"enabled":true,"sources":[{"source":"/srv/block.txt","patterns":["203.0.113.7","2001:db8::1","*.[a-c]x.example","a.com b.com"]}]}}`))
	f.Add([]byte(`www..example.com`))
	f.Add([]byte(`HTTPS://User@Bücher.Example:8080/path`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, err := node.DecodePolicy(data); err == nil {
			b, err := p.Encode()
			if err != nil {
				t.Fatalf("accepted policy does not encode: %v", err)
			}
			q, err := node.DecodePolicy(b)
			if err != nil || !reflect.DeepEqual(p, q) {
				t.Fatalf("round trip: %+v, %v; want %+v", q, err, p)
			}
		}
		bl, _ := policy.Load(true, []string{string(data)}, nil, "")
		if rs := bl.Rules(); len(rs) == 1 && len(rs[0].Pattern) <= policy.MaxRuleBytes {
			p := node.PolicyOf(urlsafe.Options{}, bl, false, true, 0)
			if err := p.Validate(); err != nil {
				t.Fatalf("the rule %q of config entry %q is refused by a node: %v", rs[0].Pattern, data, err)
			}
		}
	})
}

// BenchmarkPolicyOpen is a policy's cost per session opened on a node
// with a blocklist of 10 000 rules (a tenth of them globs): the replica
// encodes it, the node decodes and compiles it.
func BenchmarkPolicyOpen(b *testing.B) {
	doms := make([]string, 10_000)
	for i := range doms {
		doms[i] = fmt.Sprintf("host-%d.blocked.example", i)
		if i%10 == 0 {
			doms[i] = "*." + doms[i]
		}
	}
	bl, _ := policy.Load(true, doms, nil, "")
	p := node.PolicyOf(urlsafe.Options{}, bl, false, true, time.Second)
	b.ReportAllocs()
	for b.Loop() {
		enc, err := p.Encode()
		if err != nil {
			b.Fatal(err)
		}
		q, err := node.DecodePolicy(enc)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(enc)))
		_ = q
	}
}

// TestConfigPolicy: the policy of a replica's config: shared files read
// against home, the legacy browser.allow_private_urls, fake-IP ranges as
// parsed, a rule too long to match a host dropped with a warning, the
// connect timeout; and it travels.
func TestConfigPolicy(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "block.txt"), []byte("file.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Browser.AllowPrivateURLs = true
	cfg.Security.FakeIPRanges = []string{"198.18.0.1/15", "10.0.0.0/8"}
	cfg.Security.WebsiteBlocklist.Enabled = true
	cfg.Security.WebsiteBlocklist.Domains = []string{"conf.example", strings.Repeat("a", policy.MaxRuleBytes+1)}
	cfg.Security.WebsiteBlocklist.SharedFiles = []string{"block.txt"}
	cfg.Web.Direct.ConnectTimeout = 4 * time.Second
	p, warns := node.ConfigPolicy(cfg, home)
	if !p.AllowPrivateURLs || p.Active || !reflect.DeepEqual(p.FakeIPRanges, []string{"198.18.0.0/15"}) || p.ConnectTimeoutMS != 4000 {
		t.Errorf("policy = %+v", p)
	}
	if s := p.Blocklist.Sources; !p.Blocklist.Enabled || len(s) != 2 || !reflect.DeepEqual(s[0].Patterns, []string{"conf.example"}) ||
		s[1].Source != filepath.Join(home, "block.txt") || !reflect.DeepEqual(s[1].Patterns, []string{"file.example"}) {
		t.Errorf("blocklist = %+v", p.Blocklist)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "10.0.0.0/8") || !strings.Contains(warns[1], "longer than") {
		t.Errorf("warnings = %q, want the dropped range and the long rule", warns)
	}
	if b, err := p.Encode(); err != nil {
		t.Error(err)
	} else if _, err := node.DecodePolicy(b); err != nil {
		t.Error(err)
	}
}
