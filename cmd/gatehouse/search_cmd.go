package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// loadDotEnv reads $GATEHOUSE_HOME/.env (API keys) once; warnings name the
// line, never a value.
func (a *app) loadDotEnv() {
	if a.dotenv != nil {
		return
	}
	env, warns, err := config.LoadEnv(a.home)
	for _, w := range warns {
		a.warn(w.String())
	}
	if err != nil {
		a.warn(err.Error() + " (API keys from the environment only)")
		env = map[string]string{}
	}
	a.dotenv = env
}

func (a *app) searchCmd() *cobra.Command {
	var asJSON bool
	var limit int
	var backend string
	c := &cobra.Command{
		Use:   "search [--json] [--limit N] [--backend NAME] QUERY...",
		Short: "Search the web with the configured backend and print the results",
		Long: `search runs web_search: the query (the arguments joined by spaces; operators such
as site:, filetype:, -term and "quoted phrases" pass through) goes to the search
backend resolved from web.search_backend, else web.backend, else the first vendor
whose key is set, else the keyless free tier (run 'gatehouse doctor' to see which
and why). Within one process (the MCP server), identical searches within
web.cache_ttl_minutes are answered from a memo. Results are metadata only: title,
URL, description, position. A query carrying an API key or token is refused.
A result URL that carries a credential or points at a private or metadata address
is flagged UNSAFE with its reason.

Exit status: 0 on success, 1 when the search failed, 2 on a usage error.`,
		Args: argsMin(1, "a query"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("limit") && (limit < 1 || limit > web.MaxSearchLimit) {
				return usageError{fmt.Errorf("--limit %d is out of range: use 1 to %d results", limit, web.MaxSearchLimit)}
			}
			if backend != "" {
				a.override = func(c *config.Config) { c.Web.SearchBackend, c.Web.SearchBackendFrom = backend, "--backend" }
			}
			reg, err := a.registry()
			if err != nil {
				return err // config_invalid: fail closed (run prints it)
			}
			in := tools.SearchInput{Query: strings.Join(args, " ")}
			if strings.TrimSpace(in.Query) == "" {
				return usageError{fmt.Errorf("QUERY is empty: give the words to search for, e.g. %s golang generics", cmd.CommandPath())}
			}
			if cmd.Flags().Changed("limit") {
				in.Limit = limit
			}
			ctx, cancel, sigExit := signalContext()
			defer cancel()
			res, err := reg.CallValue(ctx, tools.WebSearch, in, tools.Options{Surface: tools.SurfaceCLI, Task: cliTask()})
			reg.EndTask(cliTask())
			if err != nil {
				return err
			}
			if _, ok := res.Value.(*tools.SearchOutput); !ok || res.Refused && !asJSON {
				return searchFailure(res, cmd.CommandPath())
			}
			if asJSON {
				b, _ := res.JSON(true)
				a.stdout.Write(b)
			} else {
				a.printSearch(res)
			}
			if code := sigExit(); code != 0 {
				return exitError{code}
			}
			if res.Refused {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, `print the tool result as JSON ({"success":true,"data":{"web":[…]},"meta":{…}})`)
	c.Flags().IntVar(&limit, "limit", 5, "number of results, 1 to 100 (out of range: a usage error)")
	c.Flags().StringVar(&backend, "backend", "", "search backend for this call only; resolved as strictly as web.search_backend")
	return c
}

// searchFailure is toolFailure for a refused web_search result: a failed
// search whose backend was picked automatically (meta.notice, the keyless
// free-tier ring nobody chose) keeps that disclosure in text mode as a
// "note:" line under the FAILED line, as a successful one prints it under
// its rows. Under --json the result itself is printed, meta included.
func searchFailure(res *tools.Result, cmdPath string) error {
	err := toolFailure(tools.WebSearch, res, cmdPath)
	out, ok := res.Value.(*tools.SearchOutput)
	if !ok || out.SearchResponse == nil || out.Meta == nil || out.Meta.Notice == "" {
		return err
	}
	if re := reason.As(err); re != nil {
		return reason.New(re.Code, re.Gate, re.Message+"\nnote: "+out.Meta.Notice)
	}
	return err
}

// printSearch prints the rows of a web_search result that was not refused
// (a refusal is toolFailure's).
func (a *app) printSearch(res *tools.Result) {
	w := a.stdout
	out, ok := res.Value.(*tools.SearchOutput)
	if !ok || out.SearchResponse == nil {
		return
	}
	r := out.SearchResponse
	for _, row := range r.Data.Web {
		fmt.Fprintf(w, "%d. %s\n   %s\n", row.Position, row.Title, row.URL)
		if row.UnsafeURL != nil {
			fmt.Fprintf(w, "   UNSAFE [%s]: %s\n", row.UnsafeURL.Reason, row.UnsafeURL.Message)
		}
		if d := strings.TrimSpace(row.Description); d != "" {
			fmt.Fprintf(w, "   %s\n", d)
		}
	}
	if m := r.Meta; m != nil {
		facts := []string{"via " + m.Provider}
		if m.ServedBy != "" {
			facts = append(facts, "served by "+m.ServedBy)
		}
		if m.Cached {
			facts = append(facts, "from the memo")
		}
		if m.RescuedFrom != "" {
			facts = append(facts, "rescued from "+m.RescuedFrom+": "+m.BackendError)
		}
		fmt.Fprintf(w, "(%d results, %s)\n", len(r.Data.Web), strings.Join(facts, ", "))
		if m.Notice != "" {
			fmt.Fprintf(w, "note: %s\n", m.Notice)
		}
	}
}
