package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

func (a *app) mcpCmd() *cobra.Command {
	var httpAddr, token, tokensFile string
	var allowHosts, onlyTools []string
	var noBoundaries bool
	var maxCalls int
	var idle time.Duration
	var maxBody int64
	var reload time.Duration
	var drain time.Duration
	var metricsAddr, auditPath string
	c := &cobra.Command{
		Use:   "mcp [--http 127.0.0.1:PORT [--token T | --tokens FILE]]",
		Short: "Serve the tools to an agent over MCP (stdio, or streamable HTTP with --http)",
		Long: `mcp serves Gatehouse's tools over the Model Context Protocol.

Without --http it speaks newline-delimited JSON-RPC on stdin/stdout (one session,
one task; logs go to stderr): configure an agent to run "gatehouse mcp".

With --http HOST:PORT it serves streamable HTTP at http://HOST:PORT/mcp: each
Mcp-Session-Id is its own task, DELETE /mcp ends a session, idle sessions expire
(--session-idle). Requests whose Host or Origin header does not name this server
get 403 before any handler runs (DNS-rebinding protection; no environment
variable turns it off). Binding anything but a loopback address requires a
bearer token (--token or GATEHOUSE_MCP_TOKEN); clients send
"Authorization: Bearer <token>".

--tokens FILE serves several callers (principals) on one endpoint: one
NAME:SHA256-HEX-OF-TOKEN line each ('#' comments and blank lines allowed; make a
hash with: printf %s "$TOKEN" | sha256sum). The file must not be readable by
group or others (chmod 600). Each principal has its own tasks, stored pages and
limits (mcp.principal_max_calls, mcp.principal_rate; over them: 429 with
Retry-After). Clients of protocol 2026-07-28 need no session: their calls run
in their principal's task.

Page text in results is wrapped in untrusted-content markers with a per-call
nonce; --no-content-boundaries or "mcp.content_boundaries: false" turns that off.
Truncated pages name web_read in their footer and link the stored full text as
the resource gatehouse://store/<name>.

A running server re-reads config.yaml when it changed (checked at a tool call,
at most every --config-reload, default 30s): later calls run with the new
website blocklist, security and other settings (browser sessions are restarted),
and a config.yaml broken mid-session makes every call refuse with
config_invalid until it is fixed.

Operations (--http only; docs/mcp.md "Operations", docs/deploy.md): GET /healthz
answers 200 while the process serves, GET /readyz 200 when it can serve (503 and
a one-line reason otherwise: draining, a broken config, a failing readiness
check); neither needs the token. GET /metrics is Prometheus text behind the
token, or on its own token-free listener with --metrics-addr. A replica running
mcp.replica_max_calls tool calls answers the next one 429 with Retry-After.
SIGTERM or SIGINT drains: the listener closes, /readyz turns 503, running calls
finish (at most --drain), then the process exits 0; calls still running at the
deadline are cancelled and the exit status is 1. --audit FILE (or - for
stderr; stdio too) appends one JSON line per tool call and per URL a call
asked for.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := mcpLimitsValid(maxCalls, maxBody, idle); err != nil {
				return err
			}
			if err := httpAddrValid(httpAddr); err != nil {
				return err
			}
			if reload < 0 {
				return usageError{fmt.Errorf("--config-reload %v: want 0 (never) or a positive duration such as 30s (default %v)", reload, defaultConfigReload)}
			}
			if drain < 0 {
				return usageError{fmt.Errorf("--drain %v: want 0 (no wait) or a positive duration such as 20s (default %v)", drain, defaultDrain)}
			}
			if metricsAddr != "" && httpAddr == "" {
				return usageError{fmt.Errorf("--metrics-addr needs --http: metrics are served by the HTTP server")}
			}
			if err := httpAddrValid(metricsAddr); err != nil {
				return usageError{fmt.Errorf("--metrics-addr: %w", err)}
			}
			hook, closeAudit, err := a.openAudit(auditPath)
			if err != nil {
				return err
			}
			defer closeAudit()
			reg, err := a.registry()
			if err != nil {
				// A broken config.yaml: serve anyway, and refuse every
				// tool call with config_invalid (file, line:column, fix),
				// as the CLI commands do.
				r, ok := a.refusingRegistry(err)
				if !ok {
					return err
				}
				fmt.Fprintf(a.stderr, "gatehouse: every tool call is refused until the config is fixed: %s\n", reason.As(err).Message)
				reg = r
			}
			defer func() { closeRegistry(reg) }()
			if err := reg.Restrict(onlyTools); err != nil {
				return usageError{fmt.Errorf("--tools: %v", err)}
			}
			// Per-principal limits (HTTP): config mcp.principal_max_calls
			// and mcp.principal_rate, re-read with config.yaml.
			principalLimits := func() principal.Limits {
				return principal.Limits{MaxCalls: a.cfg.MCP.PrincipalMaxCalls, Rate: a.cfg.MCP.PrincipalRate}
			}
			lim := newPrincipalLimiter(a, principalLimits())
			var poll func()
			if reload > 0 {
				w := newConfigReload(a, reg, reload)
				w.reloaded = func() { lim.set(a, principalLimits()) }
				reg.SetBeforeCall(w.poll)
				poll = w.poll
			}
			env := tools.Env{}
			env.Web.Home, env.Web.Config, env.Web.State = a.home, a.cfg, a.state
			opts := mcpserver.Options{
				Registry: reg, Store: env.Store(), Version: version, Logger: a.logger,
				DisableContentBoundaries: noBoundaries || !a.cfg.MCP.ContentBoundaries,
				MaxConcurrentCalls:       maxCalls,
				Audit:                    hook,
				// Redis keeps each principal's stored pages apart, so a
				// sessionless web_read may read them on any replica.
				StoreScopedByPrincipal: a.state != nil,
			}
			if opts.DisableContentBoundaries {
				a.logger.Warn("content boundaries are off: page text reaches the model unmarked",
					"by", map[bool]string{true: "--no-content-boundaries", false: "mcp.content_boundaries: false"}[noBoundaries])
			}
			for _, u := range reg.Unavailable() {
				a.logger.Info("tool not served", "tool", u.Name, "why", u.Why)
			}
			srv := mcpserver.New(opts)
			ctx, cancel, _ := signalContext()
			defer cancel()
			if httpAddr == "" {
				// Bad lines get a -32700/-32600 reply, not the session's end.
				return srv.Run(ctx, mcpserver.NewLineTransport(a.stdinOr(), a.stdout))
			}
			if token == "" {
				token = os.Getenv("GATEHOUSE_MCP_TOKEN")
			}
			var toks *principal.Tokens
			if tokensFile != "" {
				if token != "" {
					return usageError{fmt.Errorf("--tokens and --token (or GATEHOUSE_MCP_TOKEN) cannot be used together: put every principal in the --tokens file, or use one --token")}
				}
				if toks, err = principal.ReadTokensFile(tokensFile); err != nil {
					return err
				}
			}
			if token != "" && strings.TrimSpace(token) == "" {
				// No client can send it (every request would get 401).
				return usageError{fmt.Errorf("the bearer token (--token or GATEHOUSE_MCP_TOKEN) is only white space: set a real token, or unset it for a loopback-only server")}
			}
			hs, err := srv.Listen(mcpserver.HTTPOptions{
				Addr: httpAddr, Token: token, Tokens: toks, AllowedHosts: allowHosts,
				MaxBodyBytes: maxBody, SessionIdle: idle,
				Limiter:         lim,
				ReadyChecks:     append(append([]mcpserver.ReadyCheck{configReady(reg, poll)}, a.readyChecks()...), toolsReady(reg)),
				ReplicaMaxCalls: a.cfg.MCP.ReplicaMaxCalls,
				SeparateMetrics: metricsAddr != "",
			})
			if err != nil {
				return err
			}
			if metricsAddr != "" {
				ma, err := hs.ServeMetrics(metricsAddr)
				if err != nil {
					hs.Close()
					return err
				}
				fmt.Fprintf(a.stderr, "gatehouse: metrics on http://%s%s (no token)\n", ma, mcpserver.PathMetrics)
			}
			auth := "no token (loopback only)"
			switch {
			case toks != nil:
				auth = fmt.Sprintf("bearer tokens of %d principals", toks.Len())
			case token != "":
				auth = "bearer token required"
			}
			fmt.Fprintf(a.stderr, "gatehouse: MCP streamable HTTP on %s (%s)\n", hs.URL, auth)
			return serveUntilSignal(ctx, hs, drain, a.stderr)
		},
	}
	c.Flags().StringSliceVar(&onlyTools, "tools", nil, "serve only the tools matching these name patterns (comma-separated globs, e.g. browser_* for the browser toolset); default every tool")
	c.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on HOST:PORT (e.g. 127.0.0.1:8765) instead of stdio")
	c.Flags().StringVar(&token, "token", "", "bearer token HTTP clients must send (default $GATEHOUSE_MCP_TOKEN); required for a non-loopback --http")
	c.Flags().StringVar(&tokensFile, "tokens", "", "file of principals, one NAME:SHA256-HEX-OF-TOKEN per line (mode 600), for several callers on one --http endpoint; not with --token")
	c.Flags().StringSliceVar(&allowHosts, "allow-host", nil, "extra host name accepted in Host/Origin headers (repeatable), for a server reached by DNS name")
	c.Flags().BoolVar(&noBoundaries, "no-content-boundaries", false, "do not wrap page text in untrusted-content markers")
	c.Flags().IntVar(&maxCalls, "max-calls", mcpserver.DefaultMaxConcurrentCalls, "tool calls one session may run at once, at least 1 (more are refused with too_many_calls)")
	c.Flags().DurationVar(&idle, "session-idle", mcpserver.DefaultSessionIdle, "close HTTP sessions idle this long, > 0 (their task state is released)")
	c.Flags().Int64Var(&maxBody, "max-body-bytes", mcpserver.DefaultMaxBodyBytes, "largest HTTP request body accepted, in bytes, at least 1 (larger ones get 413)")
	c.Flags().DurationVar(&reload, "config-reload", defaultConfigReload, "re-read config.yaml at a tool call when it changed, at most this often (spec §A8's 30 s policy cache; 0: never)")
	c.Flags().DurationVar(&drain, "drain", defaultDrain, "on SIGTERM/SIGINT, let running tool calls finish for at most this long, then cancel them and exit 1 (--http)")
	c.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve /metrics (and /healthz, /readyz) on this HOST:PORT without the bearer token, instead of on the --http listener behind it")
	c.Flags().StringVar(&auditPath, "audit", "", "append one JSON line per tool call and per URL judged to FILE (created mode 0600), or - for stderr")
	defaultHelp := c.HelpFunc()
	c.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		defaultHelp(cmd, args)
		a.printToolAvailability()
	})
	return c
}

// mcpLimitsValid refuses limits that mean nothing (a usage error: exit 2,
// reason usage_error under --json): --max-calls and --max-body-bytes must
// be at least 1, --session-idle positive. None of them has an "unlimited"
// value.
func mcpLimitsValid(maxCalls int, maxBody int64, idle time.Duration) error {
	switch {
	case maxCalls < 1:
		return usageError{fmt.Errorf("--max-calls %d: want at least 1 (tool calls one session may run at once; default %d)", maxCalls, mcpserver.DefaultMaxConcurrentCalls)}
	case maxBody < 1:
		return usageError{fmt.Errorf("--max-body-bytes %d: want at least 1 (largest HTTP request body in bytes; default %d)", maxBody, mcpserver.DefaultMaxBodyBytes)}
	case idle <= 0:
		return usageError{fmt.Errorf("--session-idle %v: want a positive duration such as 30m (default %v)", idle, mcpserver.DefaultSessionIdle)}
	}
	return nil
}

// httpAddrValid refuses an --http value that is not HOST:PORT with a port
// from 0 to 65535 (a usage error: exit status 2), before anything starts:
// the listener would otherwise fail later with the resolver's words
// ("lookup tcp/notaport: unknown port"), and a service name such as "http"
// would be looked up in /etc/services. "" (stdio) is valid; HOST may be
// empty (all interfaces, which then needs a token).
func httpAddrValid(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError{fmt.Errorf("--http %q is not HOST:PORT: give a host and a port from 0 to 65535, e.g. 127.0.0.1:8765", addr)}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return usageError{fmt.Errorf("--http %q: the port %q is not a number from 0 to 65535; give HOST:PORT, e.g. 127.0.0.1:8765", addr, port)}
	}
	return nil
}

// printToolAvailability lists the tools this process would serve and, for
// the others, why not (help text; `doctor` reads the same registry).
func (a *app) printToolAvailability() {
	reg, err := a.registry()
	if err != nil {
		return
	}
	// One name column wide enough for the longest name (browser_get_images).
	w := 0
	for _, t := range reg.All() {
		w = max(w, len(t.Name()))
	}
	var b strings.Builder
	b.WriteString("\nTools served in this environment:\n")
	for _, t := range reg.Tools() {
		fmt.Fprintf(&b, "  %-*s  %s\n", w, t.Name(), t.Title())
	}
	if u := reg.Unavailable(); len(u) > 0 {
		b.WriteString("Not served here:\n")
		for _, g := range groupUnusable(u) {
			if len(g.Names) == 1 {
				fmt.Fprintf(&b, "  %-*s  %s\n", w, g.Names[0], g.Why)
				continue
			}
			// One reason for several tools (Chromium missing: the
			// twelve browser tools) is printed once, under their names.
			fmt.Fprintf(&b, "  %s\n  %-*s  %s\n", strings.Join(g.Names, ", "), w, "", g.Why)
		}
	}
	fmt.Fprint(a.stdout, b.String())
}

func (a *app) stdinOr() io.Reader {
	if a.stdin != nil {
		return a.stdin
	}
	return os.Stdin
}
