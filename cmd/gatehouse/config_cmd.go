package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
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
	var getJSON, pathJSON bool
	get := &cobra.Command{
		Use:   "get [--json] KEY",
		Short: "Print the merged value of KEY (defaults included); KEY may be a block such as 'browser'",
		Args:  argsExact(1, "exactly one KEY, e.g. web.extract_char_limit"),
		RunE: func(_ *cobra.Command, args []string) error {
			home, err := config.Home()
			if err != nil {
				return configFailed(err)
			}
			if getJSON {
				v, err := config.GetJSON(home, args[0])
				if err != nil {
					return configFailed(err)
				}
				return a.printJSON(struct {
					Success bool            `json:"success"`
					Key     string          `json:"key"`
					Value   json.RawMessage `json:"value"`
				}{true, args[0], v})
			}
			out, err := config.Get(home, args[0])
			if err != nil {
				return configFailed(err)
			}
			fmt.Fprint(a.stdout, ensureNL(out))
			return nil
		},
	}
	get.Flags().BoolVar(&getJSON, "json", false, `print {"success":true,"key":KEY,"value":VALUE} (a block is an object)`)
	c.AddCommand(get)
	c.AddCommand(&cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set KEY to VALUE (YAML scalar or flow list) in config.yaml, keeping other keys and comments",
		Long: `set writes KEY: VALUE into config.yaml atomically, keeping your other keys and comments.
VALUE is read as YAML: 30, true, "[a.dev, b.dev]"; a list key also takes "a.dev, b.dev".
A blocklist entry that would not do what it reads as (a CIDR range, a port, "*") is refused.
Negative numbers work as they are
(gatehouse config set web.extract_timeout -1): set takes no flag but --json.`,
		// No flags, so a VALUE such as -1 is a value, not an unknown flag.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return c.Help()
			}
			// --json is the one flag set reads (anywhere before "--").
			asJSON := wantsJSON(args)
			args = withoutJSONFlag(args)
			if err := argsExact(2, "KEY and VALUE, e.g. web.extract_backend direct")(c, args); err != nil {
				return err
			}
			home, err := config.Home()
			if err != nil {
				return configFailed(err)
			}
			config.EntryCheck = blocklistEntryCheck
			if err := config.Set(home, args[0], args[1]); err != nil {
				return configFailed(err)
			}
			if asJSON {
				return a.printJSON(struct {
					Success bool   `json:"success"`
					Key     string `json:"key"`
					Path    string `json:"path"`
				}{true, args[0], config.Path(home)})
			}
			fmt.Fprintf(a.stderr, "set %s in %s\n", args[0], config.Path(home))
			return nil
		},
	})
	path := &cobra.Command{
		Use:   "path [--json]",
		Short: "Print the path of config.yaml",
		Args:  argsExact(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			home, err := config.Home()
			if err != nil {
				return configFailed(err)
			}
			if pathJSON {
				return a.printJSON(struct {
					Success bool   `json:"success"`
					Path    string `json:"path"`
				}{true, config.Path(home)})
			}
			fmt.Fprintln(a.stdout, config.Path(home))
			return nil
		},
	}
	path.Flags().BoolVar(&pathJSON, "json", false, `print {"success":true,"path":PATH}`)
	c.AddCommand(path)
	return c
}

// printJSON writes v on stdout as indented JSON.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// configFailed returns the error of a failed config command with a reason
// code, for run to print as every failure is printed: "FAILED [reason]:
// message" on stderr, or under --json the JSON error object
// ({"success":false,"error":…,"reason":…}) on stdout, exit 1. config.Get
// and config.Set give their errors a code (config_unknown_key,
// config_bad_value, config_invalid, config_write_failed); anything else (no
// home directory) is config_invalid.
func configFailed(err error) error {
	if reason.As(err) != nil {
		return err
	}
	return reason.Wrap(reason.ConfigInvalid, "", strings.TrimPrefix(err.Error(), "config: "), err)
}

// withoutJSONFlag returns args without "--json" and "--json=BOOL" before
// any "--" terminator (set parses no other flag).
func withoutJSONFlag(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--json" || strings.HasPrefix(a, "--json=") {
			continue
		}
		out = append(out, a)
	}
	return out
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
