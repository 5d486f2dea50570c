package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// doctorReport is `gatehouse doctor --json`. The config fields come first:
// when config.yaml is broken (reason config_invalid) every tool refuses, so
// Web, Chromium and Unavailable are omitted.
type doctorReport struct {
	Home   string `json:"home"`
	Config string `json:"config"`
	// Exists: config.yaml is present (absent means built-in defaults).
	Exists bool `json:"exists"`
	// Warnings of loading config.yaml (unknown keys, missing shared files),
	// redacted.
	Warnings []string `json:"warnings"`
	// MissingSharedFiles lists security.website_blocklist.shared_files that
	// do not exist (their rules are skipped; the tools keep running, spec §A8).
	MissingSharedFiles []string `json:"missing_shared_files"`
	// EnvWarnings are the problems of $GATEHOUSE_HOME/.env: a line that was
	// skipped (its key is then missing), a file others can read, a file
	// that cannot be read. They name the line, never a value.
	EnvWarnings []string `json:"env_warnings"`
	// Reason and Error are set when config.yaml cannot be used (config_invalid).
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`

	Web      *provider.Report `json:"web,omitempty"`
	Chromium *ChromiumStatus  `json:"chromium,omitempty"`
	// Browser is the browser backend the configuration selects and whether
	// its network is Gatehouse's (covered by the egress proxy).
	Browser *browser.BackendStatus `json:"browser_backend,omitempty"`
	// Unavailable lists registered tools this process cannot serve (not
	// listed over MCP), each with why and the fix.
	Unavailable []tools.Unusable `json:"tools_unavailable,omitempty"`
	// Principals is the --tokens file's status (doctor --tokens FILE).
	Principals *PrincipalsStatus `json:"principals,omitempty"`
	// State is the shared-state backend (GATEHOUSE_REDIS_URL): disk (the
	// embedded default) or redis, with reachability and latency. Never a
	// password.
	State *stateStatus `json:"state,omitempty"`
	OK    bool         `json:"ok"`
}

// stateStatus is doctor's view of the shared state (internal/state).
type stateStatus struct {
	Backend string `json:"backend"`          // "disk" or "redis"
	Redis   string `json:"redis,omitempty"`  // redis://host:port/db (rediss:// for TLS), no secret
	Source  string `json:"source,omitempty"` // GATEHOUSE_REDIS_URL or state.redis_url
	// Password says whether a password is configured (never which).
	Password  bool    `json:"password,omitempty"`
	Reachable *bool   `json:"reachable,omitempty"`
	LatencyMS float64 `json:"latency_ms,omitempty"` // one PING round trip
	Reason    string  `json:"reason,omitempty"`     // state_bad_url or state_unavailable
	Error     string  `json:"error,omitempty"`
}

// doctorState reports the shared state: with a Redis URL, one PING (the
// only network traffic doctor sends).
func (a *app) doctorState() *stateStatus {
	a.loadDotEnv()
	t, ok, err := state.FromConfig(a.cfg, a.dotenv)
	if err != nil {
		st := &stateStatus{Backend: state.KindRedis}
		if e := reason.As(err); e != nil {
			st.Reason, st.Error = string(e.Code), e.Message
		}
		return st
	}
	if !ok {
		return &stateStatus{Backend: state.KindDisk}
	}
	st := &stateStatus{Backend: state.KindRedis, Redis: t.String(), Source: t.Source, Password: t.HasPassword()}
	r := state.Open(state.Options{Target: t, Guard: stateGuard(a)})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	h := r.Health(ctx)
	reachable := h.Err == nil
	st.Reachable = &reachable
	if h.Err != nil {
		if e := reason.As(h.Err); e != nil {
			st.Reason, st.Error = string(e.Code), e.Message
		}
	} else {
		st.LatencyMS = float64(h.Latency.Microseconds()) / 1000
	}
	return st
}

func printState(w io.Writer, st *stateStatus) {
	switch {
	case st == nil:
	case st.Backend == state.KindDisk:
		fmt.Fprintln(w, "state → disk (embedded default: cache and stored pages under home, memo in this process; set GATEHOUSE_REDIS_URL to share them between replicas)")
		fmt.Fprintln(w)
	case st.Reason == string(reason.StateBadURL):
		fmt.Fprintf(w, "state → redis: BROKEN [%s]\n  %s\n\n", st.Reason, st.Error)
	default:
		pw := "no password"
		if st.Password {
			pw = "password set"
		}
		if st.Reachable != nil && *st.Reachable {
			fmt.Fprintf(w, "state → redis %s (from %s, %s): reachable, PING %.2f ms\n\n", st.Redis, st.Source, pw, st.LatencyMS)
		} else {
			fmt.Fprintf(w, "state → redis %s (from %s, %s): UNREACHABLE [%s]\n  %s\n\n", st.Redis, st.Source, pw, st.Reason, st.Error)
		}
	}
}

func (a *app) doctorCmd() *cobra.Command {
	var asJSON bool
	var tokensFile string
	c := &cobra.Command{
		Use:   "doctor [--json] [--tokens FILE]",
		Short: "Check config.yaml, show which backends search and extract resolve to and why, find misconfigurations",
		Long: `doctor loads $GATEHOUSE_HOME/config.yaml the way every tool does and reports whether it
loads (a broken file makes every web tool refuse with config_invalid, naming file,
line:column and the fix), its warnings, and the security.website_blocklist.shared_files
that are missing (their rules are skipped with a warning; the tools keep running).

It then lists every web provider, whether its API key or URL is present (never the
value), what web_search and web_extract resolve to right now and why, the keyless tier
switches, and whether Chromium is found. With --tokens FILE it checks a principals file
the way "gatehouse mcp --tokens FILE" does and lists its principal names (never tokens). It warns about misconfigurations before they
bite (for example web.backend: xai with no web.extract_backend, which makes every
extract fail), each with the fix as a command. It shows the shared-state backend: disk (the
embedded default) or the Redis of GATEHOUSE_REDIS_URL / state.redis_url, with its host,
reachability and PING latency (never a password). Nothing else is sent over the network.

Exit status: 0 when the configuration loads and every configured selection can work,
1 otherwise.`,
		Args: argsExact(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			d := config.Diagnose(home)
			rep := doctorReport{Home: home, Config: d.Path, Exists: d.Exists,
				Warnings: []string{}, EnvWarnings: []string{}, MissingSharedFiles: nonNil(d.MissingSharedFiles())}
			// The tools print .env warnings on stderr as they load it; doctor
			// reports them (its stderr is discarded below).
			if _, warns, err := config.LoadEnv(home); err != nil {
				rep.EnvWarnings = append(rep.EnvWarnings, urlsafe.Redact(err.Error())+" (API keys from the environment only)")
			} else {
				for _, w := range warns {
					rep.EnvWarnings = append(rep.EnvWarnings, urlsafe.Redact(w.String()))
				}
			}
			for _, w := range d.Warnings {
				rep.Warnings = append(rep.Warnings, urlsafe.Redact(w.String()))
			}
			if d.Refusal != nil {
				rep.Reason, rep.Error = string(d.Refusal.Code), urlsafe.Redact(d.Refusal.Message)
			} else {
				a.stderr = io.Discard // load's warnings are already in the report
				if err := a.load(); err != nil {
					return err
				}
				// The blocklist's own warnings (a rule that does not do
				// what it reads as, policy.Lint; an unreadable file);
				// missing files are listed on their own already.
				bl := a.cfg.Security.WebsiteBlocklist
				_, pw := policy.Load(bl.Enabled, bl.Domains, bl.SharedFiles, home)
				for _, w := range pw {
					if !strings.HasPrefix(w, "shared blocklist file not found") {
						rep.Warnings = append(rep.Warnings, urlsafe.Redact(w))
					}
				}
				rep.State = a.doctorState()
				ch := findChromium(a.cfg.Browser.ExecutablePath, a.cfg.Browser.Headed)
				rep.Web, rep.Chromium = a.doctorProviders(), &ch
				bs := browser.Backend(a.cfg, a.dotenv)
				rep.Browser = &bs
				if reg, err := a.registry(); err == nil {
					rep.Unavailable = reg.Unavailable()
					reg.Close()
				}
				// Every warning a tool call prints (dropped
				// security.fake_ip_ranges entries, …) is a doctor
				// warning too, once.
				for _, w := range a.warnLog {
					if !slices.Contains(rep.Warnings, w) && !slices.Contains(rep.EnvWarnings, w) && !strings.HasPrefix(w, "shared blocklist file not found") {
						rep.Warnings = append(rep.Warnings, w)
					}
				}
			}
			if tokensFile != "" {
				rep.Principals = principalsStatus(tokensFile)
			}
			rep.OK = d.OK() && rep.Web != nil && !rep.Web.Failed() && (rep.Browser == nil || rep.Browser.Problem == "") &&
				(rep.Principals == nil || rep.Principals.OK) && (rep.State == nil || rep.State.Reason == "")
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printDoctor(a.stdout, &rep, d)
			}
			if !rep.OK {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().StringVar(&tokensFile, "tokens", "", "also check this gatehouse mcp --tokens file (principal names, never tokens)")
	return c
}

func printDoctor(w io.Writer, rep *doctorReport, d config.Diagnostics) {
	fmt.Fprintf(w, "Gatehouse %s\nhome:   %s\n", version, rep.Home)
	switch {
	case rep.Reason != "":
		fmt.Fprintf(w, "config: %s: BROKEN [%s]\n  %s\n", rep.Config, rep.Reason, rep.Error)
	case !rep.Exists:
		fmt.Fprintf(w, "config: %s: not present (built-in defaults)\n", rep.Config)
	default:
		fmt.Fprintf(w, "config: %s: ok\n", rep.Config)
	}
	for _, x := range rep.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", x)
	}
	for _, x := range rep.EnvWarnings {
		fmt.Fprintf(w, "  .env warning: %s\n", x)
	}
	for _, f := range d.SharedFiles {
		state := "ok"
		if !f.Exists {
			state = "MISSING (rules skipped, tools keep running)"
		}
		fmt.Fprintf(w, "shared blocklist file: %s: %s\n", f.Path, state)
	}
	fmt.Fprintln(w)
	printPrincipals(w, rep.Principals)
	if rep.Web == nil {
		fmt.Fprintln(w, "every web tool refuses until config.yaml is fixed")
		return
	}
	printProviders(w, rep.Web)
	printState(w, rep.State)
	if rep.Chromium.Found {
		fmt.Fprintf(w, "chromium → %s\n", rep.Chromium.Path)
		if rep.Chromium.NoSandbox {
			fmt.Fprintln(w, "  sandbox off: Gatehouse runs as root, where Chromium cannot sandbox its renderers (the egress proxy stays the network boundary); run as an unprivileged user to keep it on")
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "chromium → not found: %s\n\n", rep.Chromium.Fix)
	}
	if b := rep.Browser; b != nil {
		name := b.Backend
		if b.Provider != "" {
			name += " (" + b.Provider + ")"
		}
		if b.Endpoint != "" {
			name += " at " + b.Endpoint
		}
		fmt.Fprintf(w, "browser backend → %s: %s\n", name, b.Note)
		if b.Problem != "" {
			fmt.Fprintf(w, "  problem: %s\n", b.Problem)
		}
		fmt.Fprintln(w)
	}
	for _, g := range groupUnusable(rep.Unavailable) {
		if c := rep.Chromium; c != nil && !c.Found && strings.HasPrefix(c.Fix, g.Why) {
			g.Why = "no Chromium (see chromium above)"
		}
		if len(g.Names) == 1 {
			fmt.Fprintf(w, "tool %s is unavailable: %s\n", g.Names[0], g.Why)
			continue
		}
		fmt.Fprintf(w, "%d tools are unavailable (%s): %s\n", len(g.Names), strings.Join(g.Names, ", "), g.Why)
	}
	if len(rep.Unavailable) > 0 {
		fmt.Fprintln(w)
	}
	if len(rep.Web.Advice) == 0 && len(rep.Warnings)+len(rep.EnvWarnings) > 0 {
		fmt.Fprintf(w, "No problems found apart from the %d warning(s) above.\n", len(rep.Warnings)+len(rep.EnvWarnings))
		return
	}
	printAdvice(w, rep.Web.Advice)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
