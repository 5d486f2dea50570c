package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

func (a *app) extractCmd() *cobra.Command {
	var asJSON bool
	var charLimit int
	c := &cobra.Command{
		Use:   "extract [--json] [--char-limit N] URL...",
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
			if err := a.load(); err != nil {
				return a.refuse(asJSON, err)
			}
			svc, warns := web.Open(web.Env{
				Home: a.home, Config: a.cfg, Logger: a.logger,
				Debug: os.Getenv("GATEHOUSE_DEBUG") == "1",
			})
			for _, w := range warns {
				fmt.Fprintln(a.stderr, "gatehouse: warning:", urlsafe.Redact(w))
			}
			req := web.ExtractRequest{}
			for _, u := range args {
				req.URLs = append(req.URLs, u)
			}
			if cmd.Flags().Changed("char-limit") {
				req.CharLimit = charLimit
			}
			ctx, cancel, sigExit := signalContext()
			defer cancel()
			stop := a.progress(len(args))
			resp := svc.Extract(ctx, req)
			stop()
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(resp); err != nil {
					return err
				}
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
	c.Flags().IntVar(&charLimit, "char-limit", 0, "character budget per page (clamped to 2000..500000; default web.extract_char_limit)")
	return c
}

// progress shows a one-line progress indicator on stderr for batches when stderr
// is a terminal; the returned func clears it.
func (a *app) progress(n int) func() {
	f, ok := a.stderr.(*os.File)
	if n < 2 || !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			fmt.Fprintf(f, "\rgatehouse: extracting %d URLs… %.1fs", n, time.Since(start).Seconds())
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (a *app) printMarkdown(resp *web.ExtractResponse) {
	w := a.stdout
	if resp.Success != nil && !*resp.Success {
		fmt.Fprintf(w, "REFUSED [%s]: %s\n", resp.Reason, resp.Error)
		return
	}
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
	}
}
