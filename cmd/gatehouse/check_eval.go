package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
)

// checkEval is `gatehouse check --eval EXPR...`: browser_console's eval policy
// (browser.Gates.CheckEval, the same function the tool calls) on each
// expression, in input order. Exit status 1 when any is refused.
func (a *app) checkEval(exprs []string, backend string, asJSON bool) error {
	if err := a.load(); err != nil {
		return err
	}
	gates, warns := browser.NewGates(a.cfg, a.home, nil, nil)
	for _, w := range warns {
		a.warn(w)
	}
	ctx, cancel, _ := signalContextAfter(quickSignalDelay)
	defer cancel()
	set := browser.EvalSettings{Restrict: a.cfg.Browser.RestrictEvaluate, AllowUnsafe: a.cfg.Browser.AllowUnsafeEvaluate}
	res := gates.CheckEvals(ctx, exprs, set, gates.GuardActive(backend == "local", ""))
	refused := false
	for _, r := range res {
		refused = refused || !r.Allowed
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]any{"results": res}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "EXPRESSION\tALLOWED\tREASON")
		for _, r := range res {
			fmt.Fprintf(tw, "%s\t%v\t%s\n", r.Expression, r.Allowed, deref(r.Reason))
		}
		tw.Flush()
		for _, r := range res {
			if !r.Allowed {
				fmt.Fprintf(a.stdout, "\n%s\n  %s\n", r.Expression, r.Message)
			}
		}
	}
	if refused {
		return exitError{1}
	}
	return nil
}
