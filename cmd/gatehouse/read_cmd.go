package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

// readCmd is `gatehouse read PATH`: lines of a page stored when an extract
// result was truncated, through the same web_read tool MCP clients call
// (confined to the store, the same reason codes).
func (a *app) readCmd() *cobra.Command {
	var offset, limit int
	var asJSON bool
	c := &cobra.Command{
		Use:   "read PATH",
		Short: "Page through the full text of a truncated extract result (web_read)",
		Long: `Print lines of a page that Gatehouse stored when an extract result was longer than
its character budget. Pass PATH, --offset and --limit as the result's footer gives
them ("To read the omitted middle: gatehouse read PATH --offset N --limit 200");
--offset is a 1-based line number. Only files in Gatehouse's store are read: other
paths, '..', symlinks and non-regular files are refused with a reason code.

When more lines follow, stderr names the command that reads on.

Exit status: 0 on success, 1 when the read was refused, 2 on a usage error.`,
		Args: argsExact(1, "PATH, the stored page a truncated result's footer names"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// 0 would be the tool's "default" (omitted): refused like any
			// other value below 1 instead of silently becoming 1 or 200.
			if offset < 1 {
				return usageError{fmt.Errorf("--offset %d: want a 1-based line number (at least 1)", offset)}
			}
			if limit < 1 {
				return usageError{fmt.Errorf("--limit %d: want a number of lines, 1..2000", limit)}
			}
			reg, err := a.registry()
			if err != nil {
				return err // config_invalid: fail closed (run prints it)
			}
			in := tools.ReadInput{Path: args[0], Offset: offset, Limit: limit}
			ctx, cancel, sigExit := signalContext()
			defer cancel()
			res, err := reg.CallValue(ctx, tools.WebRead, in, tools.Options{Surface: tools.SurfaceCLI, Task: cliTask()})
			reg.EndTask(cliTask())
			if err != nil {
				return err
			}
			out, ok := res.Value.(*tools.ReadOutput)
			if !ok || res.Refused && !asJSON { // refused as a whole (before the handler ran: a flag value the schema refuses)
				return toolFailure(tools.WebRead, res, cmd.CommandPath())
			}
			if asJSON {
				b, err := res.JSON(true)
				if err != nil {
					return err
				}
				a.stdout.Write(b)
			} else {
				fmt.Fprint(a.stdout, out.Content)
				if out.Content != "" && !strings.HasSuffix(out.Content, "\n") {
					fmt.Fprintln(a.stdout)
				}
				if out.NextOffset > 0 {
					fmt.Fprintf(a.stderr, "gatehouse: lines %d–%d of %d; read on: gatehouse read %s --offset %d\n",
						out.Offset, out.Offset+out.Lines-1, out.TotalLines, args[0], out.NextOffset)
				}
			}
			if code := sigExit(); code != 0 {
				return exitError{code}
			}
			if out.Refused() {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, `print the tool result as JSON ({"path","offset","lines","total_lines","next_offset","content"})`)
	c.Flags().IntVar(&offset, "offset", 1, "1-based line number to start at (the footer's offset)")
	c.Flags().IntVar(&limit, "limit", 200, "number of lines, 1..2000 (output is also capped at 100000 chars)")
	return c
}
