package navgate

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/browser/evalpolicy"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

// stubResolver answers every public-looking name with a public address; the
// names the vectors treat as unresolvable fail.
type stubResolver map[string]string

func (s stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := s[host]; ok {
		if a == "" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

func testGates(t *testing.T, allowPrivate bool, blocked ...string) *Gates {
	t.Helper()
	cfg := config.Default()
	cfg.Browser.AllowPrivateURLs = allowPrivate
	if len(blocked) > 0 {
		cfg.Security.WebsiteBlocklist.Enabled = true
		cfg.Security.WebsiteBlocklist.Domains = blocked
	}
	g, warns := New(cfg, t.TempDir(), stubResolver{}, nil)
	if len(warns) > 0 {
		t.Fatalf("warnings: %v", warns)
	}
	return g
}

func TestVectorNavigateGate(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.navigate_gate", 14) {
		var in struct {
			Backend      string `json:"backend"`
			URLClass     string `json:"url_class"`
			AllowPrivate bool   `json:"allow_private"`
			Sidecar      bool   `json:"sidecar"`
			URL          string `json:"url"`
			FinalURL     string `json:"final_url"`
			PolicyRule   string `json:"policy_rule"`
		}
		var want struct {
			Allowed          *bool             `json:"allowed"`
			ErrorKind        string            `json:"error_kind"`
			URL              string            `json:"url"`
			PageResetTo      string            `json:"page_reset_to"`
			SessionKeySuffix string            `json:"session_key_suffix"`
			PostRedirect     string            `json:"post_redirect_check"`
			BlockedByPolicy  map[string]string `json:"blocked_by_policy"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(v.Note, func(t *testing.T) {
			var rules []string
			if in.PolicyRule != "" {
				rules = append(rules, in.PolicyRule)
			}
			g := testGates(t, in.AllowPrivate, rules...)
			url := in.URL
			if url == "" && in.URLClass == "private" {
				url = "http://192.168.1.10/"
			}
			key := "task"
			if in.Sidecar {
				key = sessionkey.NavigationKey("task", url, sessionkey.Route{CloudProvider: true, AutoLocal: true},
					func(u string) bool { return sessionkey.URLIsPrivate(context.Background(), u, stubResolver{}, nil) })
				if want.SessionKeySuffix != "" && !strings.HasSuffix(key, want.SessionKeySuffix) {
					t.Fatalf("key %q lacks suffix %q", key, want.SessionKeySuffix)
				}
			}
			active := g.GuardActive(in.Backend == "local", key)
			res := g.CheckURL(context.Background(), url, active)
			if want.PostRedirect == "skipped" {
				if !res.Allowed || g.RedirectRefusal(url, in.FinalURL, active) != nil || g.RedirectRefusal(url, "", active) != nil {
					t.Fatal("post-redirect check not skipped")
				}
				return
			}
			var code reason.Code
			if !res.Allowed {
				code = *res.Reason
			} else if rerr := g.RedirectRefusal(url, in.FinalURL, active); rerr != nil {
				code = rerr.Code
			}
			allowed := code == ""
			if want.Allowed != nil && allowed != *want.Allowed {
				t.Fatalf("allowed=%v (code %q), want %v", allowed, code, *want.Allowed)
			}
			if want.ErrorKind != "" && ErrorKind(code) != want.ErrorKind {
				t.Errorf("error kind %q (code %q), want %q", ErrorKind(code), code, want.ErrorKind)
			}
			if want.BlockedByPolicy != nil {
				b := res.BlockedByPolicy
				if b == nil || b.Host != want.BlockedByPolicy["host"] || b.Rule != want.BlockedByPolicy["rule"] || b.Source != want.BlockedByPolicy["source"] {
					t.Errorf("blocked_by_policy %+v, want %v", b, want.BlockedByPolicy)
				}
			}
		})
	}
}

func TestVectorPageURLBlocked(t *testing.T) {
	g := testGates(t, false)
	for _, v := range vectors.Area(t, "browser.page_url_blocked", 12) {
		var in struct {
			PageURL string `json:"page_url"`
			Active  bool   `json:"ssrf_guard_active"`
		}
		var want struct {
			Blocked bool `json:"blocked"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(v.Note, func(t *testing.T) {
			got := PageURLBlocked(in.PageURL, func(u string) bool { return g.JudgeStatic(u, in.Active) != nil })
			if got != want.Blocked {
				t.Errorf("PageURLBlocked(%q) = %v, want %v", in.PageURL, got, want.Blocked)
			}
		})
	}
	// Gatehouse is stricter than the spec for the browser's own pages.
	for _, u := range []string{"chrome://settings", "devtools://devtools/bundled/inspector.html", "file:///etc/passwd"} {
		if rerr := g.PageRefusal(u, false); rerr == nil || rerr.Code != reason.PageBlocked {
			t.Errorf("PageRefusal(%q) = %v, want page_blocked", u, rerr)
		}
	}
	for _, u := range []string{"about:blank", "https://example.com/", "http://127.0.0.1:3000/", "data:text/html,hi"} {
		if rerr := g.PageRefusal(u, false); rerr != nil {
			t.Errorf("PageRefusal(%q) with the guard off = %v, want allowed", u, rerr)
		}
	}
	for _, u := range []string{"http://169.254.169.254/", "view-source:http://169.254.169.254/"} {
		if rerr := g.PageRefusal(u, false); rerr == nil {
			t.Errorf("PageRefusal(%q) allowed a metadata page", u)
		}
	}
}

// TestURLLiteralsIPv6: a bracketed IPv6 host is part of the literal, so the
// pre-screen refuses the IPv6 metadata endpoint like the IPv4 one (hostile
// review 9: "fetch('http://[fd00:ec2::254]/')" passed `check --eval`).
func TestURLLiteralsIPv6(t *testing.T) {
	for expr, want := range map[string][]string{
		"fetch('http://[fd00:ec2::254]/latest')":   {"http://[fd00:ec2::254]/latest"},
		"fetch(`https://u@[::1]:8080/x`)":          {"https://u@[::1]:8080/x"},
		"a = ['http://example.com/a']":             {"http://example.com/a"},
		"'http://' + host":                         {},
		"x='http://[::ffff:169.254.169.254]/'; y;": {"http://[::ffff:169.254.169.254]/"},
	} {
		if got := evalpolicy.URLLiterals(expr); !slices.Equal(got, want) {
			t.Errorf("evalpolicy.URLLiterals(%q) = %q, want %q", expr, got, want)
		}
	}
	g, _ := New(config.Default(), t.TempDir(), stubResolver{}, nil)
	for _, expr := range []string{"fetch('http://[fd00:ec2::254]/')", "fetch('http://[::ffff:169.254.169.254]/')"} {
		if e := g.CheckEval(context.Background(), expr, EvalSettings{}, false); e == nil || e.Code != reason.EvalURLLiteral {
			t.Errorf("%s: %v, want eval_url_literal", expr, e)
		}
	}
}
