package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func (a *app) checkCmd() *cobra.Command {
	var asJSON bool
	var forTool, backend string
	c := &cobra.Command{
		Use:   "check [--json] [--for extract|browser] [--backend local|cloud] URL...",
		Short: "Run only the gates on URLs and say, per URL, whether it would be refused and why",
		Long: `check runs the URL gates without fetching anything (DNS is resolved): parse,
secret, scheme, SSRF and website policy. Output is in input order; each URL gets
allowed, the refusing gate and a stable reason code.

--for extract (default) applies web_extract's rules. --for browser applies the
browser's: credential-named query parameters are allowed, and with --backend local
(the default) private addresses are allowed, cloud metadata endpoints never.

Exit status: 0 when every URL is allowed, 1 when any is refused, 2 on a usage error.`,
		Args: argsMin(1, "at least one URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var mode web.CheckMode
			switch forTool {
			case "extract":
				mode.Extract = true
			case "browser":
			default:
				return usageError{fmt.Errorf("--for must be extract or browser, not %q", forTool)}
			}
			if backend != "local" && backend != "cloud" {
				return usageError{fmt.Errorf("--backend must be local or cloud, not %q", backend)}
			}
			if err := a.load(); err != nil {
				return a.refuse(asJSON, err)
			}
			cfg := *a.cfg
			if !mode.Extract && (backend == "local" || cfg.Browser.AllowPrivateURLs) {
				// A local browser may open private pages (spec §B8.1 3b); metadata stays blocked.
				cfg.Security.AllowPrivateURLs = true
			}
			pol, pw := web.LoadPolicy(&cfg, a.home)
			guard, warns := web.NewPolicyGuard(&cfg, nil, nil, pol)
			for _, w := range append(warns, pw...) {
				fmt.Fprintln(a.stderr, "gatehouse: warning:", urlsafe.Redact(w))
			}
			ctx, cancel, _ := signalContext()
			defer cancel()
			results := make([]web.CheckResult, len(args))
			refused := false
			for i, u := range args {
				results[i] = web.CheckURL(ctx, guard, pol, u, mode)
				refused = refused || !results[i].Allowed
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
