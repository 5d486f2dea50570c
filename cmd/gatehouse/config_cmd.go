package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
)

func (a *app) configCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Read or change config.yaml in $GATEHOUSE_HOME",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown config subcommand %q (use get, set or path)", args[0])}
			}
			return usageError{fmt.Errorf("config needs a subcommand: get KEY, set KEY VALUE, or path")}
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	c.AddCommand(&cobra.Command{
		Use:   "get KEY",
		Short: "Print the merged value of KEY (defaults included); KEY may be a block such as 'browser'",
		Args:  argsExact(1, "exactly one KEY, e.g. web.extract_char_limit"),
		RunE: func(_ *cobra.Command, args []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			out, err := config.Get(home, args[0])
			if err != nil {
				return err
			}
			fmt.Fprint(a.stdout, ensureNL(out))
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set KEY to VALUE (YAML scalar or flow list) in config.yaml, keeping other keys and comments",
		Long: `set writes KEY: VALUE into config.yaml atomically, keeping your other keys and comments.
VALUE is read as YAML: 30, true, "[a.dev, b.dev]"; a list key also takes "a.dev, b.dev".
A blocklist entry that would not do what it reads as (a CIDR range, a port, "*") is refused.
Negative numbers work as they are
(gatehouse config set web.extract_timeout -1): set takes no flags.`,
		// No flags, so a VALUE such as -1 is a value, not an unknown flag.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return c.Help()
			}
			if err := argsExact(2, "KEY and VALUE, e.g. web.extract_backend direct")(c, args); err != nil {
				return err
			}
			home, err := config.Home()
			if err != nil {
				return err
			}
			config.EntryCheck = blocklistEntryCheck
			if err := config.Set(home, args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "set %s in %s\n", args[0], config.Path(home))
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "path",
		Short: "Print the path of config.yaml",
		Args:  argsExact(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, config.Path(home))
			return nil
		},
	})
	return c
}

func ensureNL(s string) string {
	if s == "" || s[len(s)-1] != '\n' {
		return s + "\n"
	}
	return s
}

// blocklistEntryCheck refuses, at `config set`, a website blocklist entry
// that would not do what it reads as (policy.Lint: a CIDR range, a port,
// several hosts in one entry, a '*' that is no "*." wildcard).
func blocklistEntryCheck(key, entry string) string {
	if key == "security.website_blocklist.domains" {
		return policy.Lint(entry)
	}
	return ""
}
