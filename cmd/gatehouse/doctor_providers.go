package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// ChromiumStatus says whether a Chromium binary was found.
type ChromiumStatus struct {
	Found bool   `json:"found"`
	Path  string `json:"path,omitempty"`
	Fix   string `json:"fix,omitempty"`
	// NoSandbox is set when the local Chromium runs without its sandbox
	// because this process runs as root (Chromium cannot sandbox as
	// root): said here once instead of at every browser start.
	NoSandbox bool `json:"no_sandbox,omitempty"`
}

// findChromium reports the binary the browser tools would run, with the same
// lookup (backend.FindBrowser: browser.executable_path, CHROME_PATH, headless
// the headless shell, /usr/lib/chromium/chromium, PATH), so doctor and the
// tool list agree.
func findChromium(configured string, headed bool) ChromiumStatus {
	p, err := backend.FindBrowser(configured, headed)
	if err != nil {
		return ChromiumStatus{Fix: err.Error() + " (browser tools need it; web_search and web_extract do not)"}
	}
	return ChromiumStatus{Found: true, Path: p, NoSandbox: os.Geteuid() == 0}
}

// unusableGroup is the tools that are unavailable for the same reason.
type unusableGroup struct {
	Names []string
	Why   string
}

// groupUnusable groups the unavailable tools by their reason, in the order
// each reason first appears: the twelve browser tools share one ("Chromium
// was not found; …"), which is then printed once, not once per tool.
func groupUnusable(us []tools.Unusable) []unusableGroup {
	var out []unusableGroup
	at := map[string]int{}
	for _, u := range us {
		i, ok := at[u.Why]
		if !ok {
			i = len(out)
			at[u.Why] = i
			out = append(out, unusableGroup{Why: u.Why})
		}
		out[i].Names = append(out[i].Names, u.Name)
	}
	return out
}

// doctorProviders builds the provider section of `gatehouse doctor` from the
// loaded config and .env. Values of keys are never read into the report.
func (a *app) doctorProviders() *provider.Report {
	a.loadDotEnv()
	return provider.Doctor(provider.SettingsFrom(a.cfg, a.dotenv), a.cfg.Web.KeylessRescue)
}

func printProviders(w io.Writer, r *provider.Report) {
	fmt.Fprintln(w, "Providers (keys and URLs: presence only, never values):")
	fmt.Fprintf(w, "  %-11s %-15s %-48s %s\n", "NAME", "CAN", "KEY / URL", "IF SELECTED")
	for _, p := range r.Providers {
		var caps []string
		if p.Search {
			caps = append(caps, "search")
		}
		if p.Extract {
			caps = append(caps, "extract")
		}
		var creds []string
		for _, pr := range []*provider.Presence{p.Key, p.URL} {
			if pr != nil {
				creds = append(creds, pr.Var+"="+map[bool]string{true: "set", false: "unset"}[pr.Present])
			}
		}
		if len(creds) == 0 {
			creds = []string{"-"}
		}
		status := "ready (" + p.Mode + ")"
		if !p.Ready {
			status = "not ready: " + p.Note
		}
		if p.Tier != "" && p.Tier != "auto" {
			status += ", tier " + p.Tier
		}
		fmt.Fprintf(w, "  %-11s %-15s %-48s %s\n", p.Name, strings.Join(caps, ","), strings.Join(creds, " "), status)
	}
	fmt.Fprintln(w)
	for _, c := range []struct {
		name string
		st   provider.ResolvedStatus
	}{{"search", r.Search}, {"extract", r.Extract}} {
		if c.st.Error != "" {
			fmt.Fprintf(w, "%-8s → CANNOT RESOLVE [%s]: %s\n", c.name, c.st.Reason, c.st.Error)
			continue
		}
		fmt.Fprintf(w, "%-8s → %s (%s): %s\n", c.name, c.st.Backend, c.st.Mode, c.st.Why)
		if c.st.Notice != "" {
			fmt.Fprintf(w, "  note: %s\n", c.st.Notice)
		}
	}
	onoff := map[bool]string{true: "on", false: "off"}
	fmt.Fprintf(w, "keyless  → fallback %s, rescue %s, ring %s\n", onoff[r.Keyless.Fallback], onoff[r.Keyless.Rescue], strings.Join(r.Keyless.Ring, " → "))
}

func printAdvice(w io.Writer, advice []provider.Advice) {
	if len(advice) == 0 {
		fmt.Fprintln(w, "No problems found.")
		return
	}
	fmt.Fprintln(w, "Advice:")
	for _, a := range advice {
		fmt.Fprintf(w, "  %s [%s]: %s\n", strings.ToUpper(a.Severity), a.Code, a.Message)
		if a.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", a.Fix)
		}
	}
}
