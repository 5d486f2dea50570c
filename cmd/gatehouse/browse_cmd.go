package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

func (a *app) browseCmd() *cobra.Command {
	var asJSON, repl bool
	var task string
	c := &cobra.Command{
		Use:   "browse [--json] [--task ID] URL | browse --repl [--task ID]",
		Short: "Open a URL in Gatehouse's gated Chromium and print its accessibility snapshot, or drive it line by line",
		Long: `browse opens URL in a fresh Chromium session (all its traffic goes through
Gatehouse's egress proxy and gates) and prints the compact accessibility snapshot:
lines such as '- button "Save" [ref=e5]'.

--repl reads one call per line from stdin and prints each JSON result on one line;
its commands, one per browser tool, are listed below (plus help and quit).
Refs are the [ref=eN] values of the latest snapshot ("e3" and "@e3" both work).

Exit status: 0 on success, 1 when the (last) call failed, 2 on a usage error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if repl && len(args) > 0 || !repl && len(args) != 1 {
				return usageError{fmt.Errorf("give one URL, or --repl without arguments\nUsage: %s", cmd.UseLine())}
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			if task == "" {
				task = cliTask()
			}
			defer func() {
				reg.EndTask(task)
				if err := reg.Close(); err != nil {
					fmt.Fprintln(a.stderr, "gatehouse: warning: closing the browser:", err)
				}
			}()
			ctx, cancel, exitCode := signalContext()
			defer cancel()
			opts := tools.Options{Task: task, Surface: tools.SurfaceCLI}
			if repl {
				failed, err := a.browseREPL(ctx, reg, opts, cmd.InOrStdin())
				if err != nil {
					return err
				}
				if c := exitCode(); c != 0 {
					return exitError{c}
				}
				if failed {
					return exitError{1}
				}
				return nil
			}
			res, err := reg.CallValue(ctx, tools.BrowserNavigate, map[string]any{"url": args[0]}, opts)
			if err != nil {
				return err
			}
			if asJSON {
				b, _ := res.JSON(true)
				a.stdout.Write(b)
			} else if out, ok := res.Value.(*tools.NavigateOutput); ok && !res.Refused {
				fmt.Fprintf(a.stdout, "# %s — %s\n%s\n", out.URL, out.Title, out.Snapshot)
			} else {
				return toolFailure(tools.BrowserNavigate, res, cmd.CommandPath())
			}
			if c := exitCode(); c != 0 {
				return exitError{c}
			}
			if res.Refused {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the browser_navigate result as JSON")
	c.Flags().BoolVar(&repl, "repl", false, "read one browser call per line from stdin and print each JSON result")
	c.Flags().StringVar(&task, "task", "", "task id (sessions are per task; default: one per process)")
	defaultHelp := c.HelpFunc()
	c.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		defaultHelp(cmd, args)
		if reg, err := a.registry(); err == nil {
			fmt.Fprint(a.stdout, "\nREPL commands (--repl):\n"+replHelp(reg))
			reg.Close()
		}
	})
	return c
}

// replUsage is the REPL command line of each browser tool. The help lists
// the registry's browser tools through it (replHelp), so a tool missing here
// shows as such and TestBrowseHelpListsEveryBrowserTool fails.
var replUsage = map[string]string{
	tools.BrowserNavigate: "navigate URL", tools.BrowserSnapshot: "snapshot [full]",
	tools.BrowserClick: "click REF", tools.BrowserType: "type REF TEXT", tools.BrowserFill: "fill REF=TEXT [REF=TEXT]",
	tools.BrowserScroll: "scroll up|down", tools.BrowserBack: "back",
	tools.BrowserPress: "press KEY", tools.BrowserConsole: "console [EXPR|clear]",
	tools.BrowserGetImages: "images", tools.BrowserVision: "vision [--annotate] QUESTION",
	tools.BrowserDialog: "dialog accept|dismiss [PROMPT TEXT]", tools.BrowserClose: "close",
}

// replHelp lists one line per browser tool of reg (registration order):
// its REPL command, title and tool name; then help and quit.
func replHelp(reg *tools.Registry) string {
	var b strings.Builder
	for _, t := range reg.All() {
		if !strings.HasPrefix(t.Name(), "browser_") {
			continue
		}
		u, ok := replUsage[t.Name()]
		if !ok {
			u = "(no REPL command)"
		}
		fmt.Fprintf(&b, "  %-36s %s (%s)\n", u, t.Title(), t.Name())
	}
	fmt.Fprintf(&b, "  %-36s %s\n  %-36s %s\n", "help", "this list", "quit", "end the REPL (or EOF)")
	return b.String()
}

// replCall turns one REPL line into a tool name and arguments. ok is false for
// an empty line; help/quit are reported by name.
func replCall(line string) (tool string, args map[string]any, err error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", nil, nil
	}
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f[0]))
	need := func(n int, usage string) error {
		if len(f)-1 < n {
			return fmt.Errorf("usage: %s", usage)
		}
		return nil
	}
	switch strings.ToLower(f[0]) {
	case "navigate", "open", "goto":
		if err := need(1, "navigate URL"); err != nil {
			return "", nil, err
		}
		return tools.BrowserNavigate, map[string]any{"url": f[1]}, nil
	case "snapshot":
		return tools.BrowserSnapshot, map[string]any{"full": len(f) > 1 && f[1] == "full"}, nil
	case "click":
		if err := need(1, "click REF"); err != nil {
			return "", nil, err
		}
		return tools.BrowserClick, map[string]any{"ref": f[1]}, nil
	case "fill":
		// fill e7=Ada e8=ada@example.com: one field per REF=TEXT word.
		if err := need(1, replUsage[tools.BrowserFill]); err != nil {
			return "", nil, err
		}
		var fields []map[string]any
		for _, w := range f[1:] {
			ref, text, ok := strings.Cut(w, "=")
			if !ok || ref == "" {
				return "", nil, fmt.Errorf("usage: %s (each field is REF=TEXT, no spaces)", replUsage[tools.BrowserFill])
			}
			fields = append(fields, map[string]any{"ref": ref, "text": text})
		}
		return tools.BrowserFill, map[string]any{"fields": fields}, nil
	case "type":
		if err := need(1, "type REF TEXT"); err != nil {
			return "", nil, err
		}
		text := strings.TrimSpace(strings.TrimPrefix(rest, f[1]))
		return tools.BrowserType, map[string]any{"ref": f[1], "text": text}, nil
	case "scroll":
		if err := need(1, "scroll up|down"); err != nil {
			return "", nil, err
		}
		return tools.BrowserScroll, map[string]any{"direction": f[1]}, nil
	case "back":
		return tools.BrowserBack, map[string]any{}, nil
	case "press", "key":
		if err := need(1, "press KEY"); err != nil {
			return "", nil, err
		}
		return tools.BrowserPress, map[string]any{"key": f[1]}, nil
	case "console", "eval":
		switch {
		case rest == "":
			return tools.BrowserConsole, map[string]any{}, nil
		case rest == "clear":
			return tools.BrowserConsole, map[string]any{"clear": true}, nil
		}
		return tools.BrowserConsole, map[string]any{"expression": rest}, nil
	case "images":
		return tools.BrowserGetImages, map[string]any{}, nil
	case "vision", "screenshot":
		annotate := false
		if len(f) > 1 && f[1] == "--annotate" {
			annotate = true
			rest = strings.TrimSpace(strings.TrimPrefix(rest, "--annotate"))
		}
		if rest == "" {
			// browser_vision's question is required (spec browser_vision
			// row; the tool's input schema): the REPL asks for it as an
			// MCP client must give it, instead of making one up.
			return "", nil, fmt.Errorf("usage: %s (QUESTION, what to look for, is required)", replUsage[tools.BrowserVision])
		}
		return tools.BrowserVision, map[string]any{"question": rest, "annotate": annotate}, nil
	case "close":
		return tools.BrowserClose, map[string]any{}, nil
	case "dialog":
		if err := need(1, "dialog accept|dismiss [PROMPT TEXT]"); err != nil {
			return "", nil, err
		}
		args := map[string]any{"action": f[1]}
		if text := strings.TrimSpace(strings.TrimPrefix(rest, f[1])); text != "" {
			args["prompt_text"] = text
		}
		return tools.BrowserDialog, args, nil
	case "help", "quit", "exit":
		return strings.ToLower(f[0]), nil, nil
	}
	return "", nil, fmt.Errorf("unknown command %q (try help)", f[0])
}

// browseREPL runs the REPL until EOF, quit or ctx ends. failed reports whether
// the last call was refused.
func (a *app) browseREPL(ctx context.Context, reg *tools.Registry, opts tools.Options, in io.Reader) (failed bool, err error) {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return failed, nil
		case line, ok = <-lines:
			if !ok {
				return failed, nil
			}
		}
		tool, args, perr := replCall(line)
		switch {
		case perr != nil:
			enc.Encode(map[string]any{"success": false, "error": perr.Error(), "reason": "invalid_arguments"})
			failed = true
			continue
		case tool == "":
			continue
		case tool == "help":
			fmt.Fprint(a.stdout, replHelp(reg))
			continue
		case tool == "quit" || tool == "exit":
			return failed, nil
		}
		res, err := reg.CallValue(ctx, tool, args, opts)
		if err != nil {
			return true, err
		}
		b, _ := res.JSON(false)
		a.stdout.Write(b)
		failed = res.Refused
		if f, ok := a.stdout.(*os.File); ok {
			f.Sync()
		}
	}
}
