package main

import (
	"fmt"
	"os"

	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// registry loads the config and builds the tool registry every subcommand
// calls tools through (the same one `gatehouse mcp` serves).
func (a *app) registry() (*tools.Registry, error) { return a.registryOf(tools.Default) }

// checkRegistry is registry with web_check only (tools.Check: no browser
// manager, no web service), for `gatehouse check`.
func (a *app) checkRegistry() (*tools.Registry, error) { return a.registryOf(tools.Check) }

func (a *app) registryOf(build func(tools.Env) (*tools.Registry, []string)) (*tools.Registry, error) {
	if err := a.load(); err != nil {
		return nil, err
	}
	if a.override != nil {
		a.override(a.cfg)
	}
	a.loadDotEnv()
	reg, warns := build(tools.Env{Web: web.Env{
		Home: a.home, Config: a.cfg, Logger: a.logger,
		Debug:  os.Getenv("GATEHOUSE_DEBUG") == "1",
		DotEnv: a.dotenv,
	}})
	for _, w := range warns {
		fmt.Fprintln(a.stderr, "gatehouse: warning:", urlsafe.Redact(w))
	}
	return reg, nil
}

// cliTask is the task id of this CLI process (one task per process).
func cliTask() string { return fmt.Sprintf("cli-%d", os.Getpid()) }

// closeRegistry releases the process-wide resources of reg when its tools
// hold any (the browser tools give the registry a Close that stops
// Chromium); a registry without such tools needs nothing.
func closeRegistry(reg any) {
	if c, ok := reg.(interface{ Close() error }); ok {
		c.Close()
	}
}
