package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
	"github.com/gatehouse-dev/gatehouse/internal/config"
)

// nodeCmd is `gatehouse browser-node` (issue 19; docs/browser.md "Browser
// nodes"): one Chromium plus its egress proxies, registered in Redis for
// the replicas; SIGTERM or SIGINT deregisters it and stops Chromium.
func (a *app) nodeCmd() *cobra.Command {
	var listen, advertise string
	var maxSessions, spares, maxSpares int
	var watchDialogs bool
	var heartbeat time.Duration
	c := &cobra.Command{
		Use:   "browser-node --listen HOST:PORT [--max-sessions N]",
		Short: "Run a browser node: Chromium and its egress proxy, registered in Redis for the replicas",
		Long: `Runs one Chromium (the headless shell by default) and its egress proxies as a
browser node. It registers itself in Redis (GATEHOUSE_REDIS_URL, required) with
its address, capacity and a heartbeat; replicas (gatehouse mcp with the same
GATEHOUSE_REDIS_URL) place new browser sessions on it. Chromium's own debugging
port stays on 127.0.0.1; replicas reach it through the node's CDP relay at
ws://HOST:PORT/cdp. A --listen address that is not loopback needs
GATEHOUSE_NODE_TOKEN (the replicas send the same value). Replicas dial a node only
at an address their browser.node_allow allows (empty: loopback only).
SIGTERM deregisters the node and stops Chromium.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen == "" {
				return usageError{fmt.Errorf("--listen HOST:PORT is required\nUsage: %s", cmd.UseLine())}
			}
			switch {
			case maxSessions < 1 || maxSessions > node.MaxCapacity:
				return usageError{fmt.Errorf("--max-sessions %d is outside 1–%d", maxSessions, node.MaxCapacity)}
			case spares < 0 || maxSpares < 0:
				return usageError{fmt.Errorf("--spares and --max-spares are counts: 0 or more (--max-spares 0 turns spares off)")}
			case spares > maxSpares:
				return usageError{fmt.Errorf("--spares %d is above --max-spares %d (the floor of spares kept ready may not exceed their ceiling)", spares, maxSpares)}
			}
			if err := a.load(); err != nil {
				return err
			}
			st, err := a.openState()
			if err != nil {
				return err
			}
			if st == nil {
				return usageError{fmt.Errorf("GATEHOUSE_REDIS_URL (or config state.redis_url) is not set: a browser node registers itself in Redis")}
			}
			defer st.Close()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			s, err := nodeserver.Start(ctx, nodeserver.Options{Config: a.cfg, Home: a.home, Listen: listen, Advertise: advertise,
				MaxSessions: maxSessions, Token: config.Lookup(a.dotenv, node.EnvToken), Registry: node.NewRegistry(st.Client()), Logger: a.logger,
				Heartbeat: heartbeat, Spares: noneIfZero(spares), MaxSpares: noneIfZero(maxSpares),
				WatchDialogs: watchDialogs})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "gatehouse browser-node %s listening on %s (capacity %d)\n", s.ID(), s.Addr(), s.Capacity())
			var died bool
			select {
			case <-ctx.Done():
			case <-s.Dead():
				died = true
			}
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = s.Close(cctx)
			if died {
				return fmt.Errorf("browser-node %s: Chromium exited; the node deregistered and stops", s.ID())
			}
			return err
		},
	}
	c.Flags().StringVar(&listen, "listen", "", "HOST:PORT to serve the CDP relay and the session proxy API on (required)")
	c.Flags().StringVar(&advertise, "advertise", "", "HOST:PORT written in the node's record for replicas to dial (default: the listen address)")
	c.Flags().IntVar(&maxSessions, "max-sessions", nodeserver.DefaultMaxSessions, "sessions this node takes at once (sized for 2 cores by default)")
	c.Flags().IntVar(&spares, "spares", nodeserver.DefaultSpares, "least number of spare sessions kept ready in free slots (0: no floor); more while demand is higher, up to --max-spares")
	c.Flags().IntVar(&maxSpares, "max-spares", nodeserver.DefaultMaxSpares, "most spare sessions, ready or reserved by replicas (0: spares off)")
	c.Flags().BoolVar(&watchDialogs, "watch-dialogs", true, "watch the JavaScript dialogs of every handle session's tab, so a replica other than the one that saw one open reports and answers it (docs/browser.md)")
	c.Flags().DurationVar(&heartbeat, "heartbeat-ttl", node.HeartbeatTTL, "lifetime of the node's record in Redis, refreshed every third of it")
	c.Flags().MarkHidden("heartbeat-ttl") //nolint:errcheck // tests shorten it
	return c
}

// noneIfZero maps a flag's 0 ("none") to nodeserver.Options' -1 (its 0
// is the default).
func noneIfZero(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}
