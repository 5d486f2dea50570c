package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

type evalOut struct {
	Results []struct {
		Expression string  `json:"expression"`
		Allowed    bool    `json:"allowed"`
		Reason     *string `json:"reason"`
	} `json:"results"`
}

func TestCheckEvalJSONInInputOrder(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("browser:\n  restrict_evaluate: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exprs := []string{
		"document.title",
		`document["coo"+"kie"]`,
		"fetch(`http://169.254.169.254/latest/meta-data/`)",
		"location.href = 'http://10.0.0.5/admin'",
		"/'/.test(s) // a regexp, not a literal",
		`/"/.test(a) || document["coo"+"kie"]`, // a quote scan mis-pairs here; the lexer does not
	}
	// Local backend: the private literal passes (the egress proxy would judge
	// the request), the metadata literal never does.
	code, out, errs := cli(t, home, append([]string{"check", "--json", "--eval"}, exprs...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s\n%s", code, errs, out)
	}
	var got evalOut
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := []struct {
		allowed bool
		reason  string
	}{{true, ""}, {false, "eval_denylist"}, {false, "eval_denylist"}, {true, ""}, {true, ""}, {false, "eval_denylist"}}
	if len(got.Results) != len(want) {
		t.Fatalf("results: %s", out)
	}
	for i, w := range want {
		g := got.Results[i]
		r := ""
		if g.Reason != nil {
			r = *g.Reason
		}
		if g.Expression != exprs[i] || g.Allowed != w.allowed || r != w.reason {
			t.Errorf("%d %q: allowed=%v reason=%q, want %v %q", i, exprs[i], g.Allowed, r, w.allowed, w.reason)
		}
	}

	// Cloud backend with the denylist off: only the URL pre-screen applies.
	home2 := t.TempDir()
	code, out, errs = cli(t, home2, "check", "--json", "--backend", "cloud", "--eval", "document.cookie", "location.href = 'http://10.0.0.5/admin'", "'http://169.254.169.254/'")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s\n%s", code, errs, out)
	}
	got = evalOut{}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 3 || !got.Results[0].Allowed || got.Results[1].Allowed || *got.Results[1].Reason != "eval_private_literal" || got.Results[2].Allowed || *got.Results[2].Reason != "eval_private_literal" {
		t.Errorf("cloud: %s", out)
	}
	if code, out, _ := cli(t, home2, "check", "--eval", "document.title"); code != 0 {
		t.Errorf("allowed expression: exit %d\n%s", code, out)
	}
}
