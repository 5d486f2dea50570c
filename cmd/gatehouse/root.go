package main

import (
	"context"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// app holds what every subcommand needs; built lazily by load.
type app struct {
	stdin          io.Reader // nil: os.Stdin
	stdout, stderr io.Writer
	home           string
	cfg            *config.Config
	logger         *slog.Logger
	logs           *logs // the process's stderr logging (level, warnings printed once)
	// override, if set, adjusts the loaded config for this process only
	// (per-call flags such as extract --backend).
	override func(*config.Config)
	dotenv   map[string]string
	// state is the shared state (GATEHOUSE_REDIS_URL), opened once by
	// openState; nil is the embedded default.
	state *state.Redis
	// warned holds the warnings already printed: each is printed once per
	// process, however many times the config and the tools are loaded
	// (doctor, mcp) and however many components report it (the web service
	// and the browser gates both load the blocklist).
	warned map[string]bool
	// warnLog is every warning warn printed (or would have printed to a
	// discarded stderr), in order: doctor reports them.
	warnLog []string
}

// warn prints a "gatehouse: warning:" line on stderr, redacted, unless the
// same warning was printed before in this process.
func (a *app) warn(msg string) {
	msg = urlsafe.Redact(msg)
	if a.warned[msg] {
		return
	}
	if a.warned == nil {
		a.warned = map[string]bool{}
	}
	a.warned[msg] = true
	a.warnLog = append(a.warnLog, msg)
	fmt.Fprintln(a.stderr, "gatehouse: warning:", msg)
}

// subcommand is one subcommand of the root: its name (cobra's Name(), the
// first word of Use) and its constructor.
type subcommand struct {
	name  string
	build func() *cobra.Command
}

// subcommands lists every subcommand of the root in help order.
func (a *app) subcommands() []subcommand {
	return []subcommand{
		{"extract", a.extractCmd}, {"check", a.checkCmd}, {"config", a.configCmd}, {"browse", a.browseCmd},
		{"search", a.searchCmd}, {"doctor", a.doctorCmd}, {"mcp", a.mcpCmd}, {"read", a.readCmd},
		{"browser-node", a.nodeCmd},
	}
}

// reachable returns the subcommands a command line args can reach (issue 6
// item 13: a short command builds only what it runs). Building the whole
// tree (every subcommand's flags, cobra's completion command with its four
// shells) is most of what `gatehouse --version` does after main:
//   - args[0] names a subcommand: that one only (cobra dispatches on the
//     first argument, and the root has no flags of its own that take a
//     value); its help and errors read the same, since they name only it;
//   - args is only --version: none (the root prints the version before it
//     looks at subcommands);
//   - anything else (no arguments, --help, help, completion, __complete, a
//     mistyped name that gets "Did you mean"): all of them.
func (a *app) reachable(args []string) (subs []subcommand, all bool) {
	subs = a.subcommands()
	if len(args) == 1 && args[0] == "--version" {
		return nil, false
	}
	if len(args) > 0 {
		for _, s := range subs {
			if s.name == args[0] {
				return []subcommand{s}, false
			}
		}
	}
	return subs, true
}

// newRoot builds the root command for the command line args (only the
// subcommands args can reach: reachable), logging to stderr.
func newRoot(stdout, stderr io.Writer, args []string) *cobra.Command {
	return newRootLogs(stdout, stderr, newLogs(stderr), args)
}

// newRootLogs is newRoot with the process's logging l (run shares it with
// the log package's default logger).
func newRootLogs(stdout, stderr io.Writer, l *logs, args []string) *cobra.Command {
	a := &app{stdout: stdout, stderr: stderr, logs: l}
	var verbose bool
	root := &cobra.Command{
		Use:   "gatehouse",
		Short: "Web-access layer for AI agents: gated extract, URL checks, config",
		Long: `Gatehouse fetches web pages for AI agents and returns clean markdown, behind a gate
stack that runs before any byte is fetched: secret-in-URL refusal, an SSRF filter
(DNS resolved, fail closed, re-checked at connect time and after redirects), a
website blocklist, a TTL disk cache and truncate-and-store of long pages.

Configuration lives in $GATEHOUSE_HOME (default ~/.gatehouse): config.yaml and .env.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version,
	}
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "also log info lines on stderr (cache hits, browser sessions, MCP tool calls); default: warnings and errors only, each once")
	root.PersistentPreRun = func(*cobra.Command, []string) {
		if verbose {
			l.verbose()
		}
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%s\nRun '%s --help' for usage", flagErrorText(err), c.CommandPath())}
	})
	subs, all := a.reachable(args)
	for _, s := range subs {
		root.AddCommand(s.build())
	}
	// cobra's default "completion" command is reachable only as args[0].
	root.CompletionOptions.DisableDefaultCmd = !all
	root.SetArgs(args)
	return root
}

// argsMin returns a cobra.PositionalArgs that reports a usage error below n args.
func argsMin(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError{fmt.Errorf("missing %s\nUsage: %s", what, c.UseLine())}
		}
		return nil
	}
}

func argsExact(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("expected %s\nUsage: %s", what, c.UseLine())}
		}
		return nil
	}
}

// load resolves the home dir and loads config. A config file that cannot be
// read or parsed (or that would silently weaken the website blocklist) is a
// config_invalid refusal: the tools fail closed rather than run unprotected on
// defaults (a departure from spec §A8; see config.Invalid).
func (a *app) load() error {
	home, err := config.Home()
	if err != nil {
		return err
	}
	a.home = home
	a.logger = a.logs.logger
	cfg, warns, err := config.Load(home)
	for _, w := range warns {
		a.warn(w.String())
	}
	if err != nil {
		return config.Invalid(config.Path(home), err)
	}
	a.cfg = cfg
	return nil
}

// signalContext is cancelled on SIGINT or SIGTERM: the interrupt of a running
// batch (unfinished URLs get "interrupted" rows and the results are printed).
// exitCode reports 128+signal number once a signal arrived, else 0.
func signalContext() (ctx context.Context, stop func(), exitCode func() int) {
	return signalContextAfter(0)
}

// quickSignalDelay is how long a command that is usually done in a few
// milliseconds (check) runs before it installs its signal handler (a var
// for tests).
var quickSignalDelay = 100 * time.Millisecond

// signalContextAfter is signalContext with the handler installed once the
// command has run for delay (at once when delay <= 0). Installing it is not
// free: os/signal starts a goroutine locked to its own OS thread, and
// signal.Notify and signal.Stop each wait for that thread to update the
// signal mask (a new thread and four context switches; 0.3–0.7 ms of a
// `gatehouse check` that takes 6 ms, issue 6 item 13). A command that is
// done before delay never pays it; one interrupted before delay ends as any
// process does on SIGINT/SIGTERM (the shell reports 130/143, nothing is
// printed: there was nothing to print yet), one interrupted later gets the
// graceful path.
// testHookSignalInstalled runs when a signalContext has installed its handler.
var testHookSignalInstalled = func() {}

func signalContextAfter(delay time.Duration) (ctx context.Context, stop func(), exitCode func() int) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	var got atomic.Int32
	var mu sync.Mutex
	installed, stopped := false, false
	install := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		installed = true
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		testHookSignalInstalled()
		go func() {
			select {
			case sig := <-ch:
				if s, ok := sig.(syscall.Signal); ok {
					got.Store(128 + int32(s))
				}
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	var timer *time.Timer
	if delay <= 0 {
		install()
	} else {
		timer = time.AfterFunc(delay, install)
	}
	stop = func() {
		if timer != nil {
			timer.Stop()
		}
		mu.Lock()
		stopped = true
		if installed {
			signal.Stop(ch)
		}
		mu.Unlock()
		cancel()
	}
	return ctx, stop, func() int { return int(got.Load()) }
}
