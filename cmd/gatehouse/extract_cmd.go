package main

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func (a *app) extractCmd() *cobra.Command {
	var asJSON bool
	var charLimit int
	var backend, render string
	var links bool
	var maxAge int
	c := &cobra.Command{
		Use:   "extract [--json] [--char-limit N] [--render auto|always|never] [--links] [--max-age S] URL...",
		Short: "Fetch up to 5 URLs through the gates and print clean markdown",
		Long: `extract runs web_extract: each URL passes the secret, SSRF, website-policy and cache
gates, is fetched by the configured backend (the embedded 'direct' backend needs no
API key) and converted to markdown. Pages longer than the character budget
(web.extract_char_limit, or --char-limit, clamped to 2000..500000) are cut to a
head and tail window; the full text is saved under $GATEHOUSE_HOME/cache/web and the
footer says where and at which line to read on.

At most 5 URLs per call (more is a usage error). A page served from the disk cache
says so: meta.cached is true and meta.age_s gives its age in seconds.

Exit status: 0 when at least one URL was extracted, 1 when all failed or the call
was refused, 2 on a usage error, 128+signal when interrupted (130 SIGINT, 143
SIGTERM; the rows finished so far are still printed, the rest are marked
interrupted).`,
		Args: func(c *cobra.Command, args []string) error {
			if err := argsMin(1, "at least one URL")(c, args); err != nil {
				return err
			}
			if len(args) > web.MaxURLs {
				return usageError{fmt.Errorf("extract takes at most %d URLs per call (web_extract batch limit); got %d. Split them into several calls", web.MaxURLs, len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if backend != "" {
				a.override = func(c *config.Config) { c.Web.ExtractBackend, c.Web.ExtractBackendFrom = backend, "--backend" }
			}
			reg, err := a.registry()
			if err != nil {
				return err // config_invalid: fail closed (run prints it)
			}
			in := tools.ExtractInput{}
			for _, u := range args {
				in.URLs = append(in.URLs, u)
			}
			if cmd.Flags().Changed("char-limit") {
				in.CharLimit = &charLimit
			}
			in.Render, in.IncludeLinks = render, links
			if cmd.Flags().Changed("max-age") {
				in.MaxAgeS = &maxAge
			}
			ctx, cancel, sigExit := signalContext()
			defer cancel()
			prog, stop := a.progress(len(args))
			res, err := reg.CallValue(ctx, tools.WebExtract, in, tools.Options{Surface: tools.SurfaceCLI, Task: cliTask(), Progress: prog})
			stop()
			reg.EndTask(cliTask())
			reg.Close() // the render step may have started Chromium
			if err != nil {
				return err
			}
			out, ok := res.Value.(*tools.ExtractOutput)
			if !ok || res.Refused && !asJSON { // refused as a whole (before the handler ran: a flag value the schema refuses)
				return toolFailure(tools.WebExtract, res, cmd.CommandPath())
			}
			resp := out.ExtractResponse
			if asJSON {
				b, err := res.JSON(true)
				if err != nil {
					return err
				}
				a.stdout.Write(b)
			} else {
				a.printMarkdown(resp)
			}
			if code := sigExit(); code != 0 {
				return exitError{code}
			}
			if resp.Success != nil && !*resp.Success {
				return exitError{1}
			}
			for _, r := range resp.Results {
				if r.OK() {
					return nil
				}
			}
			return exitError{1}
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, `print the tool result as JSON ({"results":[…]})`)
	c.Flags().StringVar(&backend, "backend", "", "extract backend for this call only (direct, firecrawl, tavily, exa, parallel, keenable); resolved as strictly as web.extract_backend")
	c.Flags().IntVar(&charLimit, "char-limit", 0, "character budget per page (clamped to 2000..500000; default web.extract_char_limit)")
	// These flags are web_extract properties: their help (and, through the
	// registry's validation, their allowed values) come from the tool's one
	// schema, filled in when the help is shown: building the schema on every
	// start would cost every command, even --version (docs/benchmarks.md).
	c.Flags().StringVar(&render, "render", "", "")
	c.Flags().BoolVar(&links, "links", false, "")
	c.Flags().IntVar(&maxAge, "max-age", 0, "")
	c.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		for flag, prop := range map[string]string{"render": "render", "links": "include_links", "max-age": "max_age_s"} {
			c.Flags().Lookup(flag).Usage = schemaHelp(prop)
		}
		cmd.Parent().HelpFunc()(cmd, args) // the help the other commands get
	})
	return c
}

// schemaHelp returns the description of a web_extract input property, with
// its allowed values when it has an enum.
func schemaHelp(prop string) string {
	p, ok := tools.ExtractSchema().Properties[prop]
	if !ok {
		return ""
	}
	help := p.Description
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, v := range p.Enum {
			vals[i] = fmt.Sprint(v)
		}
		help += " (" + strings.Join(vals, "|") + ")"
	}
	return help + " [web_extract " + prop + "]"
}

// progress shows a one-line progress indicator on stderr for batches when
// stderr is a terminal: elapsed time and URLs finished, fed by the tool's
// progress reports (the same ones MCP clients get). It returns the reporter
// to pass to the tool and a func that clears the line.
func (a *app) progress(n int) (report func(done, total int, msg string), stop func()) {
	f, ok := a.stderr.(*os.File)
	if n < 2 || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, func() {}
	}
	start := time.Now()
	var finished atomic.Int64
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			fmt.Fprintf(f, "\rgatehouse: extracting %d URLs… %d/%d done, %.1fs", n, finished.Load(), n, time.Since(start).Seconds())
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	report = func(d, total int, _ string) { finished.Store(int64(d)) }
	return report, func() { close(done); <-exited }
}

// printMarkdown prints the rows of a web_extract result that was not
// refused as a whole (a whole-call refusal is toolFailure's).
func (a *app) printMarkdown(resp *web.ExtractResponse) {
	w := a.stdout
	for i, r := range resp.Results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		label := r.URL
		if label == "" {
			label = fmt.Sprintf("item %d", i)
		}
		fmt.Fprintf(w, "════ %s ════\n", label)
		if !r.OK() {
			fmt.Fprintf(w, "ERROR [%s]: %s\n", r.Reason, *r.Error)
			continue
		}
		var facts []string
		if m := r.Meta; m != nil {
			facts = append(facts, "via "+m.Provider)
			if m.Cached {
				facts = append(facts, fmt.Sprintf("cached %ds ago", m.AgeS))
			}
			if m.FinalURL != "" && m.FinalURL != r.URL {
				facts = append(facts, "final URL "+m.FinalURL)
			}
			if m.Rendered {
				facts = append(facts, "rendered")
			}
			if m.Pages > 0 {
				facts = append(facts, fmt.Sprintf("%d PDF pages", m.Pages))
			}
			if m.Truncated {
				facts = append(facts, fmt.Sprintf("truncated from %d chars", m.OriginalChars))
			} else {
				facts = append(facts, fmt.Sprintf("%d chars", m.OriginalChars))
			}
		}
		if r.Title != "" {
			fmt.Fprintf(w, "Title: %s\n", r.Title)
		}
		fmt.Fprintf(w, "(%s)\n\n", strings.Join(facts, ", "))
		fmt.Fprintln(w, strings.TrimRight(r.Content, "\n"))
		if r.Links != nil {
			fmt.Fprintf(w, "\nLinks (%d):\n", len(r.Links))
			for _, l := range r.Links {
				verdict := ""
				if !l.Allowed {
					verdict = fmt.Sprintf(" [refused: %s]", l.Reason)
				}
				fmt.Fprintf(w, "- %s %s%s\n", l.URL, l.Text, verdict)
			}
		}
	}
}
