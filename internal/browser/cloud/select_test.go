package cloud

import (
	"errors"
	"testing"
)

func TestSelect(t *testing.T) {
	env := func(m map[string]string) Lookup { return func(k string) string { return m[k] } }
	both := env(map[string]string{"BROWSERBASE_API_KEY": "k", "BROWSERBASE_PROJECT_ID": "p", "BROWSER_USE_API_KEY": "u", "FIRECRAWL_API_KEY": "f"})
	for _, c := range []struct {
		name   string
		set    bool
		env    Lookup
		want   string // provider name, "" = none
		pinned bool
		errSel bool // sel.Err (pinned, unconfigured)
	}{
		{"", false, both, NameBrowserUse, false, false}, // auto-detect: Browser Use first
		{"", false, env(map[string]string{"BROWSERBASE_API_KEY": "k", "BROWSERBASE_PROJECT_ID": "p"}), NameBrowserbase, false, false},
		{"", false, env(map[string]string{"BROWSERBASE_API_KEY": "k"}), "", false, false}, // project id missing
		{"", false, env(map[string]string{"FIRECRAWL_API_KEY": "f"}), "", false, false},   // Firecrawl only by name
		{"firecrawl", true, both, NameFirecrawl, true, false},
		{"nous", true, both, NameBrowserUse, true, false},
		{"local", true, both, "", true, false},
		{"camofox", true, both, "", true, false},
		{"browserbase", true, env(nil), NameBrowserbase, true, true},
	} {
		sel, err := Select(c.name, c.set, c.env, nil)
		if err != nil {
			t.Fatalf("%q: %v", c.name, err)
		}
		got := ""
		if sel.Provider != nil {
			got = sel.Provider.Name()
		}
		if got != c.want || sel.Pinned != c.pinned || (sel.Err != nil) != c.errSel {
			t.Errorf("%q set=%v: got %q pinned=%v err=%v", c.name, c.set, got, sel.Pinned, sel.Err)
		}
	}
	_, err := Select("browserbsae", true, both, nil)
	var u *UnknownProviderError
	if !errors.As(err, &u) || u.Name != "browserbsae" {
		t.Errorf("unknown name: %v", err)
	}
	sel, _ := Select("browserbase", true, env(map[string]string{"BROWSERBASE_API_KEY": "k", "BROWSERBASE_PROJECT_ID": "p",
		"BROWSERBASE_KEEP_ALIVE": "false", "BROWSERBASE_PROXIES": "0", "BROWSERBASE_ADVANCED_STEALTH": "true", "BROWSERBASE_SESSION_TIMEOUT": "900"}), nil)
	bb := sel.Provider.(*Browserbase)
	if bb.KeepAlive || bb.Proxies || !bb.AdvancedStealth || bb.Timeout != 900 {
		t.Errorf("browserbase env switches: %+v", bb)
	}
}
