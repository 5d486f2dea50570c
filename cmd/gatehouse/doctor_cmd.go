package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// doctorReport is `gatehouse doctor --json`.
type doctorReport struct {
	Home     string           `json:"home"`
	Config   string           `json:"config"`
	Web      *provider.Report `json:"web"`
	Chromium ChromiumStatus   `json:"chromium"`
	// Unavailable lists registered tools this process cannot serve (not
	// listed over MCP), each with why and the fix.
	Unavailable []tools.Unusable `json:"tools_unavailable"`
	OK          bool             `json:"ok"`
}

func (a *app) doctorCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Show which backends search and extract resolve to, and why; find misconfigurations",
		Long: `doctor lists every web provider, whether its API key or URL is present (never the
value), what web_search and web_extract resolve to right now and why, the keyless tier
switches, and whether Chromium is found. It warns about misconfigurations before they
bite (for example web.backend: xai with no web.extract_backend, which makes every
extract fail), each with the fix as a command. Nothing is sent over the network.

Exit status: 0 when every configured selection can work, 1 when one cannot.`,
		Args: argsExact(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.load(); err != nil {
				return err
			}
			rep := doctorReport{Home: a.home, Config: config.Path(a.home), Web: a.doctorProviders(), Chromium: findChromium(lookPath)}
			if reg, err := a.registry(); err == nil {
				rep.Unavailable = reg.Unavailable()
			}
			rep.OK = !rep.Web.Failed()
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				w := a.stdout
				fmt.Fprintf(w, "Gatehouse %s\nhome:   %s\nconfig: %s\n\n", version, rep.Home, rep.Config)
				printProviders(w, rep.Web)
				if rep.Chromium.Found {
					fmt.Fprintf(w, "chromium → %s\n\n", rep.Chromium.Path)
				} else {
					fmt.Fprintf(w, "chromium → not found: %s\n\n", rep.Chromium.Fix)
				}
				for _, u := range rep.Unavailable {
					fmt.Fprintf(w, "tool %s is unavailable: %s\n", u.Name, u.Why)
				}
				if len(rep.Unavailable) > 0 {
					fmt.Fprintln(w)
				}
				printAdvice(w, rep.Web.Advice)
			}
			if !rep.OK {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}
