package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func (a *app) checkCmd() *cobra.Command {
	var asJSON, evalMode bool
	var forTool, backend string
	c := &cobra.Command{
		Use:   "check [--json] [--for extract|browser] [--backend local|cloud] URL... | check [--json] [--backend local|cloud] --eval EXPR...",
		Short: "Run only the gates on URLs and say, per URL, whether it would be refused and why",
		Long: `check runs the URL gates without fetching anything (DNS is resolved): parse,
secret, scheme, SSRF and website policy. Output is in input order; each URL gets
allowed, the refusing gate and a stable reason code.

--for extract (default) applies web_extract's rules. --for browser applies the
browser's: credential-named query parameters are allowed, and with --backend local
(the default) private addresses are allowed, cloud metadata endpoints never.

--eval treats the arguments as JavaScript expressions and runs only
browser_console's eval policy as configured (spec §B8.3): the
browser.restrict_evaluate denylist (browser.allow_unsafe_evaluate overrides it)
and the pre-screen of http(s) URL literals (metadata endpoints on every backend,
private addresses with --backend cloud). Output: {"results":[{"expression",
"allowed","reason"}]} in input order.

Exit status: 0 when every URL is allowed, 1 when any is refused, 2 on a usage error.`,
		Args: argsMin(1, "at least one URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch forTool {
			case "extract", "browser":
			default:
				return usageError{fmt.Errorf("--for must be extract or browser, not %q", forTool)}
			}
			if backend != "local" && backend != "cloud" {
				return usageError{fmt.Errorf("--backend must be local or cloud, not %q", backend)}
			}
			if evalMode {
				return a.checkEval(args, backend, asJSON)
			}
			reg, err := a.checkRegistry()
			if err != nil {
				return err // config_invalid: fail closed (run prints it)
			}
			ctx, cancel, _ := signalContextAfter(quickSignalDelay)
			defer cancel()
			var results []web.CheckResult
			for len(args) > 0 { // web_check takes tools.MaxCheckURLs per call
				n := min(len(args), tools.MaxCheckURLs)
				res, err := reg.CallValue(ctx, tools.WebCheck, tools.CheckInput{URLs: args[:n], For: forTool, Backend: backend},
					tools.Options{Surface: tools.SurfaceCLI, Task: cliTask()})
				if err != nil {
					return err
				}
				out, ok := res.Value.(*tools.CheckOutput)
				if !ok {
					return toolFailure(tools.WebCheck, res, cmd.CommandPath())
				}
				results = append(results, out.Results...)
				args = args[n:]
			}
			refused := false
			for _, r := range results {
				refused = refused || !r.Allowed
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(map[string]any{"results": results}); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "URL\tALLOWED\tGATE\tREASON\tHOST")
				for _, r := range results {
					fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%s\n", r.URL, r.Allowed, deref(r.Gate), deref(r.Reason), deref(r.Host))
				}
				tw.Flush()
				for _, r := range results {
					if !r.Allowed {
						fmt.Fprintf(a.stdout, "\n%s\n  %s\n", r.URL, r.Message)
					}
				}
			}
			if refused {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, `print {"results":[…]} as JSON`)
	c.Flags().StringVar(&forTool, "for", "extract", "apply the rules of this tool: extract or browser")
	c.Flags().StringVar(&backend, "backend", "local", "browser backend for --for browser: local or cloud")
	c.Flags().BoolVar(&evalMode, "eval", false, "the arguments are JavaScript expressions: run only the browser eval policy on them")
	return c
}

func deref[T ~string](p *T) string {
	if p == nil {
		return "-"
	}
	if *p == "" {
		return "-"
	}
	return string(*p)
}
