package browser

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/browser/evalpolicy"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// An expression that moves the page to a URL the gates refuse gets its result
// withheld and leaves the tab on about:blank (spec §B8.3 step 6).
func TestEvalThatMovesToRefusedPageIsWithheldAndReset(t *testing.T) {
	m, ps := manager(t)
	task := "eval-moves"
	defer m.CloseTask(task)
	mustNav(t, m, task, ps.url("allowed.test", "/next"))
	// blocked.test is on the website blocklist: not a private/metadata literal,
	// so the pre-screen lets it through on the local backend; the page check
	// after the eval catches where the page went.
	r := m.Console(context.Background(), task, ConsoleInput{Expression: "location.href = '" + ps.url("blocked.test", "/next") + "'; 'moved'"})
	if r.Success || r.Reason != reason.PageBlocked || !strings.Contains(r.Error, "withheld") || r.Result != nil {
		t.Fatalf("moved eval: %+v", r)
	}
	if r.URL != "about:blank" {
		t.Errorf("tab not reset: url %q", r.URL)
	}
	s, _ := m.Session(task)
	cur, err := s.tab.Current(context.Background())
	if err != nil || cur.URL != "about:blank" {
		t.Errorf("tab now on %q (%v), want about:blank", cur.URL, err)
	}
	if n := ps.count("blocked.test", "/next"); n != 0 {
		t.Errorf("blocked host got %d requests", n)
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
	g, _ := NewGates(config.Default(), t.TempDir(), stubResolver{}, nil)
	for _, expr := range []string{"fetch('http://[fd00:ec2::254]/')", "fetch('http://[::ffff:169.254.169.254]/')"} {
		if e := g.CheckEval(context.Background(), expr, EvalSettings{}, false); e == nil || e.Code != reason.EvalURLLiteral {
			t.Errorf("%s: %v, want eval_url_literal", expr, e)
		}
	}
}
