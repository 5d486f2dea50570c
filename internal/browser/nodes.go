package browser

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/pnanav"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Browser nodes (issue 19; docs/browser.md "Browser nodes"): with
// Options.Nodes set and a node registered, a new session is a
// BrowserContext in the least-loaded node's Chromium behind a session proxy
// the node runs (node.Pool places it; node.Proxy answers the Manager's
// proxy calls over the node's API), so every gate of the Manager holds
// unchanged. With no node registered, sessions stay in this process.

// sessionProxy is a session's egress proxy: in-process or a node's.
type sessionProxy = node.SessionProxy

// NodeOptions configures placement on browser nodes.
type NodeOptions struct {
	Registry *node.Registry // the node registry in Redis; required
	Allow    node.Allow     // browser.node_allow (node.ParseAllow); zero: loopback only
	Token    string         // sent to nodes (node.EnvToken); "" sends none
	Spares   int            // spares held per node, attached ahead of sessions (node.HeldOptions.Floor): 0 default, < 0 none
}

// NodeReadiness is the readiness reason of browser placement (for
// /readyz): nil without nodes configured or registered, or when one has
// room; else "no browser node has room" (only nodes browser.node_allow
// allows count), "no registered browser node is allowed by
// browser.node_allow" or the registry's failure.
func (m *Manager) NodeReadiness(ctx context.Context) error {
	if m.nodes == nil {
		return nil
	}
	return m.nodes.Readiness(ctx)
}

// placeOnNode opens key's session on a registered node (node.Pool.Place:
// browser_capacity when all are full, browser_node_refused when
// node_allow refuses); placed false: no node is registered.
func (m *Manager) placeOnNode(ctx context.Context, key string, active bool) (*Session, bool, error) {
	if m.nodes == nil {
		return nil, false, nil
	}
	var s *Session
	var ttl time.Duration // with records: a handle session (records.go)
	if m.recs != nil {
		ttl = handle.RecordTTL(m.idleTimeout())
	}
	placed, id, err := m.nodes.Place(ctx, key, m.gates.SessionPolicy(active), ttl, func(c *node.Conn, p *node.Proxy) error {
		o := m.nodeTabOptions(p)
		// The node answered from a spare (nodeserver/spares.go): its
		// context, credential and renderer are ready; the node disposes the
		// context when the session closes. A spare this replica held is
		// attached already (node/held.go), with these options.
		bctx, target := p.Spare()
		tab := p.Attached()
		var err error
		if tab == nil && target != "" {
			tab, err = c.Browser.AttachTab(ctx, target, bctx, o)
		} else if tab == nil {
			tab, err = c.Browser.NewTab(ctx, o)
		}
		if err != nil {
			return err
		}
		if ttl > 0 && target == "" && !p.Bind(tab.BrowserContextID()) {
			tab.Dispose()
			return reason.New(reason.BrowserFailed, "", "The browser node did not take the session's context; call browser_navigate again.")
		}
		s = &Session{active: active, tab: tab, proxy: p, nextRef: 1,
			frameK: map[backend.FrameID]int{}, frameOf: map[int]backend.FrameID{}, frameRef: map[int]int{}}
		if ttl > 0 {
			s.handle, s.principal, s.recFresh = handle.New(), principal.From(ctx), true
			s.rec = &handle.Record{Version: handle.RecordVersion, Handle: s.handle, Context: tab.BrowserContextID(),
				Target: tab.TargetID(), Proxy: p.ID(), NextRef: 1}
		}
		return nil
	})
	if err != nil || !placed {
		return nil, placed, err
	}
	s.node = id
	if s.rec != nil {
		s.rec.Node = id
	}
	m.logger.Info("browser session placed on a node", "session", key, "node", id)
	return s, true, nil
}

// nodeTabOptions are the TabOptions of a node session whose proxy is p,
// also those node.Pool attaches its held spares with: none depends on the
// session's principal or key.
func (m *Manager) nodeTabOptions(p *node.Proxy) backend.TabOptions {
	user, pass := p.Credentials()
	return backend.TabOptions{ProxyURL: p.URL(), ProxyUser: user, ProxyPass: pass, ProxyProbeURL: egress.ProxyAuthProbeURL,
		OnTopLevel:   pnanav.Reporter(p),
		DialogPolicy: dialogPolicy(m.cfg), DialogTimeout: m.cfg.Browser.DialogTimeout,
		DownloadDir: m.downloadDir(), DownloadCap: m.downloadCap,
		// Without records the session ends with this replica's relay; with them any replica may attach.
		DisposeOnDetach: m.recs == nil, Detach: m.recs != nil}
}

// NodeSpareStats is node.Pool.HeldStats (zero without nodes).
func (m *Manager) NodeSpareStats() node.HeldStats {
	if m.nodes == nil {
		return node.HeldStats{}
	}
	return m.nodes.HeldStats()
}
