package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// doctorCmd reports the configuration's health: whether config.yaml loads
// (else the config_invalid refusal every tool gives, with file, line:column
// and fix), its warnings, and the shared blocklist files that are missing.
func (a *app) doctorCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check the configuration: config.yaml status, warnings, missing shared blocklist files",
		Long: `doctor loads $GATEHOUSE_HOME/config.yaml the way every tool does and reports:
whether it loads (a broken file makes every web tool refuse with config_invalid),
the warnings it gives, and the security.website_blocklist.shared_files that are
missing (their rules are skipped with a warning; the tools keep running).

Exit status: 0 when the configuration loads, 1 when the tools would refuse.`,
		Args: argsExact(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			d := config.Diagnose(home)
			if asJSON {
				warns := make([]string, len(d.Warnings))
				for i, w := range d.Warnings {
					warns[i] = urlsafe.Redact(w.String())
				}
				out := map[string]any{
					"config": d.Path, "exists": d.Exists, "ok": d.OK(), "warnings": warns,
					"missing_shared_files": nonNil(d.MissingSharedFiles()),
				}
				if d.Refusal != nil {
					out["reason"], out["error"] = d.Refusal.Code, urlsafe.Redact(d.Refusal.Message)
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else {
				w := a.stdout
				switch {
				case d.Refusal != nil:
					fmt.Fprintf(w, "config: %s: BROKEN [%s]\n  %s\n", d.Path, d.Refusal.Code, urlsafe.Redact(d.Refusal.Message))
				case !d.Exists:
					fmt.Fprintf(w, "config: %s: not present (built-in defaults)\n", d.Path)
				default:
					fmt.Fprintf(w, "config: %s: ok\n", d.Path)
				}
				for _, x := range d.Warnings {
					fmt.Fprintf(w, "  warning: %s\n", urlsafe.Redact(x.String()))
				}
				for _, f := range d.SharedFiles {
					state := "ok"
					if !f.Exists {
						state = "MISSING (rules skipped, tools keep running)"
					}
					fmt.Fprintf(w, "shared blocklist file: %s: %s\n", f.Path, state)
				}
			}
			if !d.OK() {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
