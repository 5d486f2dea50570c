package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/mcpserver"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
)

// defaultDrain bounds how long `gatehouse mcp --http` lets running tool
// calls finish after SIGTERM/SIGINT (--drain): below the 30 s a container
// runtime waits before SIGKILL (Kubernetes terminationGracePeriodSeconds,
// docker stop -t), so the process ends on its own terms.
const defaultDrain = 20 * time.Second

// serveUntilSignal serves hs until it fails or ctx ends (SIGTERM/SIGINT);
// then it drains (mcpserver.HTTPServer.Drain) for at most drain. Exit status:
// 0 when every running call finished in time; an error (status 1) naming how
// many calls were cancelled at the deadline, so a supervisor sees that work
// was cut off.
func serveUntilSignal(ctx context.Context, hs *mcpserver.HTTPServer, drain time.Duration, stderr io.Writer) error {
	served := make(chan error, 1)
	go func() { served <- hs.Wait(context.Background()) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	hs.StopAccepting()
	fmt.Fprintf(stderr, "gatehouse: shutting down: listener closed, draining running tool calls (at most %v)\n", drain)
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := hs.Drain(dctx)
	if errors.Is(err, mcpserver.ErrDrainTimeout) {
		return fmt.Errorf("shut down after --drain %v: %w", drain, err)
	}
	return err
}

// configReady is the /readyz check of a valid config: a config.yaml that no
// longer loads makes every call refuse (config_invalid), so the replica is
// not ready. poll (may be nil) is the config reload, so a probe sees a
// change without waiting for a tool call. The message names no path: /readyz
// needs no token.
func configReady(reg *tools.Registry, poll func()) mcpserver.ReadyCheck {
	return mcpserver.ReadyCheck{Name: "config", Check: func(context.Context) error {
		if poll != nil {
			poll()
		}
		if e := reg.Refusing(); e != nil {
			return fmt.Errorf("%s: config.yaml does not load, every tool call is refused until it is fixed (the server log names the line)", e.Code)
		}
		return nil
	}}
}

// toolsReady is the /readyz check of the tools' own resources
// (tools.Registry.Ready): with browser nodes registered (issue 19), "no
// browser node has room" while every node is at its --max-sessions, so a
// new browser session would be refused with browser_capacity. It is
// advisory: /readyz stays 200 and names it ("ready; browser: no browser
// node has room"), since the replica still serves every other tool.
func toolsReady(reg *tools.Registry) mcpserver.ReadyCheck {
	return mcpserver.ReadyCheck{Name: "browser", Check: reg.Ready, Advisory: true}
}

// readyChecks are the readiness checks beyond the config: the shared
// state's Redis PING (internal/state) when GATEHOUSE_REDIS_URL is set.
func (a *app) readyChecks() []mcpserver.ReadyCheck {
	if a.state == nil {
		return nil
	}
	return []mcpserver.ReadyCheck{{Name: "redis", Check: a.state.Ping}}
}

// openAudit opens the audit trail of --audit: "" none, "-" stderr, else a
// file appended to (mode 0600; audit.OpenFile refuses one other users can
// read). The returned close func is never nil.
func (a *app) openAudit(path string) (audit.Hook, func(), error) {
	switch path {
	case "":
		return nil, func() {}, nil
	case "-":
		return audit.NewWriter(a.stderr, nil), func() {}, nil
	}
	f, err := audit.OpenFile(path)
	if err != nil {
		return nil, nil, err
	}
	w := audit.NewWriter(f, func(err error) {
		a.logger.Error("writing the audit file failed; later lines may be lost", "path", path, "error", err)
	})
	return w, func() { f.Close() }, nil
}
