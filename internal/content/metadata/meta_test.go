package metadata

import (
	"testing"
)

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"2024-03-05T09:30:00Z":          "2024-03-05T09:30:00Z",
		"2024-03-05T09:30:00.123+0100":  "2024-03-05T09:30:00+01:00",
		"2024-03-05 09:30":              "2024-03-05T09:30:00Z",
		"2024-03-05":                    "2024-03-05",
		"2024/3/5":                      "2024-03-05",
		"March 5, 2024":                 "2024-03-05",
		"5 Mar 2024":                    "2024-03-05",
		"Tue, 05 Mar 2024 09:30:00 GMT": "2024-03-05T09:30:00Z",
		"2024-03":                       "2024-03",
		"yesterday":                     "",
		"":                              "",
		"0001-01-01":                    "",
	} {
		if got := parseDate(in); got != want {
			t.Errorf("parseDate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShellSignals(t *testing.T) {
	for _, tc := range []struct {
		name, page string
		shell      bool
	}{
		{"react root", `<html><head><script src="/app.js"></script></head><body><div id="root"></div></body></html>`, true},
		{"noscript", `<html><body><noscript>You need to enable JavaScript to run this app.</noscript><div class="x"></div><script>boot()</script></body></html>`, true},
		{"custom element", `<html><body><my-app></my-app><script type="module" src="/m.js"></script></body></html>`, true},
		{"article with scripts", `<html><body><div id="root">` + metaBody + metaBody + `</div><div id="portal"></div><script src="/a.js"></script></body></html>`, false},
		{"empty without scripts", `<html><body><div id="root"></div></body></html>`, false},
		{"json-ld only", `<html><body><div id="root"></div><script type="application/ld+json">{}</script></body></html>`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := PageFacts(tc.page, nil, "")
			if got := f.Shell.AppShell(); got != tc.shell {
				t.Errorf("AppShell = %v, want %v (%+v)", got, tc.shell, f.Shell)
			}
		})
	}
}

// metaBody is an article with two links, for the shell signals.
const metaBody = `<article><h1>Harbour lights</h1>
<p>The harbour master kept the lights burning through the long winter nights, and every ship that passed the rocks owed him its safe passage home.</p>
<p>Read the <a href="/history">history of the harbour</a> and the <a href="https://other.example/tides#today">tide tables</a>.</p></article>`
