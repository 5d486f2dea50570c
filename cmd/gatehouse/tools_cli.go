package main

import (
	"fmt"
	"os"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
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
	st, err := a.openState()
	if err != nil {
		return nil, err
	}
	reg, warns := build(tools.Env{Web: web.Env{
		Home: a.home, Config: a.cfg, Logger: a.logger,
		Debug:  os.Getenv("GATEHOUSE_DEBUG") == "1",
		DotEnv: a.dotenv, State: st,
	}})
	for _, w := range warns {
		a.warn(w)
	}
	return reg, nil
}

// refusingRegistry is the registry `gatehouse mcp` serves when the config
// cannot be used (cause is a config_invalid refusal): the tools of the
// built-in defaults, listed as usual, every call refused with cause, so that
// an agent sees the file, line:column and fix instead of a server that
// exits before initialize (or one that runs unprotected on defaults).
func (a *app) refusingRegistry(cause error) (*tools.Registry, bool) {
	rerr := reason.As(cause)
	if rerr == nil || rerr.Code != reason.ConfigInvalid {
		return nil, false
	}
	if a.home == "" {
		return nil, false
	}
	a.cfg = config.Default()
	reg, _ := tools.Default(tools.Env{Web: web.Env{Home: a.home, Config: a.cfg, Logger: a.logger, DotEnv: map[string]string{}}})
	reg.RefuseAll(rerr)
	return reg, true
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
