package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// EnvToken is the environment variable holding the node token: a node
// whose --listen address is not loopback refuses to start without it, and
// replicas send it (Authorization: Bearer) on the CDP WebSocket and the
// control API.
const EnvToken = "GATEHOUSE_NODE_TOKEN"

// HeaderRelay names the client's CDP relay connection: sent on the relay's
// handshake and with every session proxy opened, so the node closes the
// proxies of a relay that closed (the replica that drove them is gone;
// Chromium disposes their BrowserContexts, created with disposeOnDetach).
const HeaderRelay = "X-Gatehouse-Relay"

// Paths of a node's listener.
const (
	PathCDP      = "/cdp"         // WebSocket relay to the node's Chromium
	PathSessions = "/v1/sessions" // POST: open a session proxy; /v1/sessions/{id}: POST an op, DELETE closes
	// PathSpares is POST: reserve a ready spare for the caller's relay
	// (ReserveSpare); /v1/spares/{id}: POST renews the reservation, DELETE
	// releases it. Only the relay that reserved a spare may renew, release
	// or bind it (OpenRequest.Spare).
	PathSpares = "/v1/spares"
)

// ReserveTTL is how long a node keeps a reserved spare that is neither
// bound nor renewed (POST /v1/spares/{id}); the node then closes it.
const ReserveTTL = 60 * time.Second

// OpenRequest asks a node for a session's egress proxy.
type OpenRequest struct {
	Name string `json:"name"` // the session key, for the node's logs
	// Policy is the session's egress policy from the replica's config
	// (browser.Gates.SessionPolicy): the node judges the session's traffic
	// with it, never with its own config. Required: a request without one
	// (a replica older than the node) is refused, never judged with a
	// fallback.
	Policy *Policy `json:"policy"`
	// Handle: a handle session's proxy (issue 19), not tied to the relay
	// that opened it; it lives while its index key (handle.ProxyKey,
	// written by the node with TTL TTLMS) does.
	Handle bool  `json:"handle,omitempty"`
	TTLMS  int64 `json:"ttl_ms,omitempty"`
	// Spare is the id of a spare this request's relay reserved
	// (Client.ReserveSpare): the session is that spare, its policy bound
	// once, its id the reservation's. A spare reserved by another relay
	// is refused (403), one already bound too (409), one the node no
	// longer holds (expired, reclaimed for a session, its relay closed) is
	// 404. "" opens a new session as before.
	Spare string `json:"spare,omitempty"`
}

// OpenResponse is a node's session proxy: its URL as the node's Chromium
// reaches it, and the credential that only that session's BrowserContext
// holds.
type OpenResponse struct {
	ID    string `json:"id"`
	Proxy string `json:"proxy"`
	User  string `json:"user"`
	Pass  string `json:"pass"`
	// Context and Target name a spare session the node made (a
	// BrowserContext behind this proxy, its credential primed, and its
	// blank tab): the replica attaches to Target (backend.Local.AttachTab)
	// instead of creating a tab, and the node disposes Context when the
	// session closes. Both empty: the replica creates the context and tab.
	Context string `json:"context,omitempty"`
	Target  string `json:"target,omitempty"`
	// TTLMS is a reservation's lifetime (POST /v1/spares and its renewal)
	// in milliseconds: unbound and not renewed within it, the node closes
	// the spare. 0 for a session.
	TTLMS int64 `json:"ttl_ms,omitempty"`
}

// OpRequest is one call on a node's session proxy (egress.ProxySession's
// method named by Op, times as ages so node and replica clocks need not
// agree).
type OpRequest struct {
	Op      string `json:"op"`
	Target  string `json:"target,omitempty"`
	URL     string `json:"url,omitempty"`
	Opener  string `json:"opener,omitempty"`
	Host    string `json:"host,omitempty"`
	Port    uint16 `json:"port,omitempty"`
	AgeMS   int64  `json:"age_ms,omitempty"`
	QuietMS int64  `json:"quiet_ms,omitempty"`
	MaxMS   int64  `json:"max_ms,omitempty"`
	Name    string `json:"name,omitempty"`
	Token   string `json:"token,omitempty"`
	Accept  bool   `json:"accept,omitempty"` // OpAnswer: accept (else dismiss)
	Prompt  string `json:"prompt,omitempty"` // OpAnswer: a prompt's text when accepting
}

// OpResponse is the answer to an OpRequest.
type OpResponse struct {
	OK       bool              `json:"ok,omitempty"`
	IDs      []string          `json:"ids,omitempty"`
	Refusals []WireRefusal     `json:"refusals,omitempty"`
	Stats    egress.ProxyStats `json:"stats"`
	Token    string            `json:"token,omitempty"`
	Dialog   *Dialog           `json:"dialog,omitempty"` // OpDialog, OpAnswer
}

// Dialog is a JavaScript dialog open in a session's tab as the node's
// dialog watch saw it (nodeserver/dialogs.go): its type (alert, confirm,
// prompt, beforeunload), message, the URL of the frame that opened it, a
// prompt's default text, and how long it has been open (ms).
type Dialog struct {
	Target        string `json:"target"`
	Type          string `json:"type"`
	Message       string `json:"message"`
	URL           string `json:"url,omitempty"`
	DefaultPrompt string `json:"default_prompt,omitempty"`
	AgeMS         int64  `json:"age_ms"`
}

// WireRefusal is an egress.Refusal with its time as an age.
type WireRefusal struct {
	AgeMS  int64       `json:"age_ms"`
	Method string      `json:"method"`
	Host   string      `json:"host"`
	Port   uint16      `json:"port"`
	Reason reason.Code `json:"reason"`
}

// Ops of OpRequest.
const (
	OpRefusedSince = "refused_since"
	OpFailedSince  = "failed_since"
	OpCommitted    = "toplevel_committed"
	OpGone         = "toplevel_gone"
	OpNavigating   = "toplevel_navigating"
	OpPrivateDocs  = "private_documents"
	OpPublicTops   = "public_toplevels"
	OpDrain        = "drain"
	OpAllowNav     = "allow_navigation"
	OpAllowDone    = "allow_done"
	OpStats        = "stats"
	OpSetName      = "set_name"
	// OpBind names the BrowserContext behind a handle session's proxy
	// (Target): the node disposes it when it closes the proxy.
	OpBind = "bind"
	// OpDialog reads the JavaScript dialog open in the bound
	// BrowserContext's tab Target ("" any of its tabs): OpResponse.Dialog,
	// nil when none is open.
	OpDialog = "dialog"
	// OpAnswer accepts (Accept, Prompt) or dismisses that dialog; the
	// response's Dialog is the one answered, nil when none was open.
	OpAnswer = "answer_dialog"
)

// CapacityStatus is the HTTP status of a node that has no room for another
// session (the reason code browser_capacity in the body).
const CapacityStatus = http.StatusServiceUnavailable

// Client reaches one node at the address its record names, after Allow
// judged it: every connection (CDP WebSocket, control API) is dialed by an
// egress guard whose only exception is that address. Safe for concurrent
// use.
type Client struct {
	Record Record
	ap     netip.AddrPort
	guard  *egress.Guard
	http   *http.Client
	token  string
	relay  string
}

// NewClient judges rec.Addr with allow (resolving names with r) and returns
// a client for it; it does not connect. A refused address is a
// browser_node_refused *reason.Error and nothing is dialed.
func NewClient(ctx context.Context, rec Record, allow Allow, r egress.Resolver, token string) (*Client, error) {
	aps, err := allow.Resolve(ctx, r, rec.Addr)
	if err != nil {
		return nil, err
	}
	ap := aps[0]
	g := Guard(ap, r)
	var rid [16]byte
	rand.Read(rid[:])
	return &Client{Record: rec, ap: ap, guard: g, token: token, relay: hex.EncodeToString(rid[:]),
		http: g.Client(egress.ClientOptions{Timeout: 30 * time.Second})}, nil
}

// Addr is the vetted address the client dials.
func (c *Client) Addr() netip.AddrPort { return c.ap }

// CDPURL is the node's CDP WebSocket (dial it with DialContext and Header).
func (c *Client) CDPURL() string { return "ws://" + c.ap.String() + PathCDP }

// DialContext dials through the client's guard (backend.DialFunc).
func (c *Client) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return c.guard.DialContext(ctx, network, addr)
}

// Header is the header of every request to the node: the node token, when
// set, and the relay id (HeaderRelay).
func (c *Client) Header() http.Header {
	h := http.Header{}
	h.Set(HeaderRelay, c.relay)
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	return h
}

// CloseIdle closes the control API's idle connections.
func (c *Client) CloseIdle() { c.http.CloseIdleConnections() }

func (c *Client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.ap.String()+path, body)
	if err != nil {
		return 0, err
	}
	req.Header = c.Header()
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	lr := io.LimitReader(resp.Body, 1<<20)
	if resp.StatusCode != http.StatusOK {
		// The node's one-line explanation (its errors are plain text).
		msg, _ := io.ReadAll(io.LimitReader(lr, 512))
		io.Copy(io.Discard, lr) //nolint:errcheck
		line, _, _ := strings.Cut(strings.ToValidUTF8(string(msg), "?"), "\n")
		return resp.StatusCode, fmt.Errorf("browser node %s: HTTP %d: %s", c.ap, resp.StatusCode, strings.TrimSpace(line))
	}
	if out != nil {
		if err := json.NewDecoder(lr).Decode(out); err != nil {
			return resp.StatusCode, fmt.Errorf("browser node %s: bad answer: %w", c.ap, err)
		}
	}
	return resp.StatusCode, nil
}

// OpenProxy asks the node for a session proxy judged with pol. A node
// without room answers CapacityStatus: the error is then browser_capacity.
// A pol over the wire's bounds (Policy.Encode) is browser_failed naming
// the problem, and nothing is sent; the node validates the rest.
func (c *Client) OpenProxy(ctx context.Context, name string, pol Policy) (*Proxy, error) {
	return c.openProxy(ctx, OpenRequest{Name: name, Policy: &pol})
}

// OpenHandleProxy is OpenProxy for a handle session (issue 19): the proxy
// outlives this client's relay while its index key lives (ttl, refreshed
// by handle.Store.Put).
func (c *Client) OpenHandleProxy(ctx context.Context, name string, pol Policy, ttl time.Duration) (*Proxy, error) {
	return c.openProxy(ctx, OpenRequest{Name: name, Policy: &pol, Handle: true, TTLMS: ttl.Milliseconds()})
}

// AttachProxy returns the node's session proxy id (a handle session's,
// opened by any replica) with its credential, fetched from the node
// (never stored in Redis). A proxy the node does not know is an error.
func (c *Client) AttachProxy(ctx context.Context, id string) (*Proxy, error) {
	if !idRe.MatchString(id) {
		return nil, fmt.Errorf("browser node %s: bad session proxy id", c.ap)
	}
	var or OpenResponse
	if _, err := c.do(ctx, http.MethodGet, PathSessions+"/"+id, nil, &or); err != nil {
		return nil, err
	}
	if or.ID != id {
		return nil, fmt.Errorf("browser node %s: answered for another session proxy", c.ap)
	}
	return c.newProxy(or), nil
}

func (c *Client) newProxy(or OpenResponse) *Proxy {
	p := &Proxy{c: c, id: or.ID, url: or.Proxy, user: or.User, pass: or.Pass, spareCtx: or.Context, spareTarget: or.Target,
		events: make(chan event, 256), done: make(chan struct{})}
	go p.run()
	return p
}

func (c *Client) openProxy(ctx context.Context, in OpenRequest) (*Proxy, error) {
	if _, err := in.Policy.Encode(); err != nil {
		return nil, reason.Wrap(reason.BrowserFailed, "", "This replica's egress policy cannot be sent to a browser node ("+err.Error()+"); fix security.* in config.yaml.", err)
	}
	var or OpenResponse
	st, err := c.do(ctx, http.MethodPost, PathSessions, in, &or)
	if st == CapacityStatus {
		return nil, CapacityError(time.Second)
	}
	if err != nil {
		return nil, reason.Wrap(reason.BrowserFailed, "", "The browser node did not open a session proxy; call browser_navigate again.", err)
	}
	if or.ID == "" || !idRe.MatchString(or.ID) {
		return nil, reason.New(reason.BrowserFailed, "", "The browser node answered without a session id.")
	}
	return c.newProxy(or), nil
}

// CapacityError is the browser_capacity refusal, retry after retry.
func CapacityError(retry time.Duration) *reason.Error {
	return reason.Newf(reason.BrowserCapacity, "",
		"Every browser node is at its session capacity (--max-sessions); no new browser session can start now. Retry in %d s, close a session you no longer need (browser_close), or add a browser node.",
		int(max(retry, time.Second)/time.Second))
}

// SessionProxy is a browser session's egress proxy as the browser Manager
// drives it: an in-process *egress.ProxySession, or a node's *Proxy.
type SessionProxy interface {
	URL() string
	Credentials() (user, pass string)
	SetName(name string)
	Stats() egress.ProxyStats
	Close() error
	RefusedSince(t time.Time) []egress.Refusal
	FailedSince(t time.Time) []egress.Refusal
	TopLevelCommitted(id, rawURL, opener string)
	TopLevelGone(id string)
	TopLevelNavigating(id string)
	PrivateDocuments() bool
	PublicTopLevels(except string) []string
	Drain(ctx context.Context, quiet, max time.Duration) bool
	AllowNavigation(id, host string, port uint16) (done func())
}

var (
	_ SessionProxy = (*egress.ProxySession)(nil)
	_ SessionProxy = (*Proxy)(nil)
)

// Proxy is a session's egress proxy on a node, driven over the node's
// control API: the same methods the Manager calls on an in-process
// egress.ProxySession. Top-level document events are sent in order by one
// goroutine (they come from the tab's event loop, which must not block on
// the network); a query waits until the events before it were delivered.
type Proxy struct {
	c               *Client
	id              string
	url, user, pass string
	spareCtx        string // OpenResponse.Context, Target: a spare the node made
	spareTarget     string
	reserved        atomic.Bool // a reserved spare not bound yet (ReserveSpare): Close releases it
	attached        atomic.Pointer[backend.Tab]
	events          chan event
	done            chan struct{}
	closeOnce       sync.Once
}

// opTimeoutProxy bounds one proxy op.
const opTimeoutProxy = 10 * time.Second

// event is one queued op, or a flush marker (flushed set).
type event struct {
	req     OpRequest
	flushed chan struct{}
}

func (p *Proxy) run() {
	for {
		select {
		case ev := <-p.events:
			if ev.flushed != nil {
				close(ev.flushed)
				continue
			}
			p.call(ev.req, nil)
		case <-p.done:
			return
		}
	}
}

// flush waits until the events queued before it were delivered.
func (p *Proxy) flush() {
	ch := make(chan struct{})
	select {
	case p.events <- event{flushed: ch}:
	case <-p.done:
		return
	}
	select {
	case <-ch:
	case <-p.done:
	case <-time.After(opTimeoutProxy):
	}
}

func (p *Proxy) call(in OpRequest, out *OpResponse) bool {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeoutProxy)
	defer cancel()
	var o OpResponse
	if _, err := p.c.do(ctx, http.MethodPost, PathSessions+"/"+p.id, in, &o); err != nil {
		return false
	}
	if out != nil {
		*out = o
	}
	return true
}

func (p *Proxy) send(ev OpRequest) {
	select {
	case p.events <- event{req: ev}:
	case <-p.done:
	}
}

func (p *Proxy) query(in OpRequest) OpResponse {
	p.flush()
	var o OpResponse
	p.call(in, &o)
	return o
}

// URL is the proxy's URL as the node's Chromium reaches it.
func (p *Proxy) URL() string { return p.url }

// Credentials is the session's proxy credential.
func (p *Proxy) Credentials() (user, pass string) { return p.user, p.pass }

// SetName renames the session in the node's logs.
func (p *Proxy) SetName(name string) { p.send(OpRequest{Op: OpSetName, Name: name}) }

// Stats returns the session's egress counters on the node (zero when the
// node does not answer).
func (p *Proxy) Stats() egress.ProxyStats { return p.query(OpRequest{Op: OpStats}).Stats }

func refusals(w []WireRefusal) []egress.Refusal {
	now := time.Now()
	out := make([]egress.Refusal, 0, len(w))
	for _, r := range w {
		out = append(out, egress.Refusal{Time: now.Add(-time.Duration(r.AgeMS) * time.Millisecond), Method: r.Method, Host: r.Host, Port: r.Port, Reason: r.Reason})
	}
	return out
}

// RefusedSince is egress.ProxySession.RefusedSince on the node.
func (p *Proxy) RefusedSince(t time.Time) []egress.Refusal {
	return refusals(p.query(OpRequest{Op: OpRefusedSince, AgeMS: time.Since(t).Milliseconds()}).Refusals)
}

// FailedSince is egress.ProxySession.FailedSince on the node.
func (p *Proxy) FailedSince(t time.Time) []egress.Refusal {
	return refusals(p.query(OpRequest{Op: OpFailedSince, AgeMS: time.Since(t).Milliseconds()}).Refusals)
}

// TopLevelCommitted is egress.ProxySession.TopLevelCommitted (queued).
func (p *Proxy) TopLevelCommitted(id, rawURL, opener string) {
	p.send(OpRequest{Op: OpCommitted, Target: id, URL: rawURL, Opener: opener})
}

// TopLevelGone is egress.ProxySession.TopLevelGone (queued).
func (p *Proxy) TopLevelGone(id string) { p.send(OpRequest{Op: OpGone, Target: id}) }

// TopLevelNavigating is egress.ProxySession.TopLevelNavigating.
func (p *Proxy) TopLevelNavigating(id string) {
	p.query(OpRequest{Op: OpNavigating, Target: id})
}

// PrivateDocuments is egress.ProxySession.PrivateDocuments on the node;
// false when the node does not answer (the stricter answer).
func (p *Proxy) PrivateDocuments() bool { return p.query(OpRequest{Op: OpPrivateDocs}).OK }

// PublicTopLevels is egress.ProxySession.PublicTopLevels on the node.
func (p *Proxy) PublicTopLevels(except string) []string {
	return p.query(OpRequest{Op: OpPublicTops, Target: except}).IDs
}

// Drain is egress.ProxySession.Drain on the node.
func (p *Proxy) Drain(_ context.Context, quiet, maxWait time.Duration) bool {
	return p.query(OpRequest{Op: OpDrain, QuietMS: quiet.Milliseconds(), MaxMS: maxWait.Milliseconds()}).OK
}

// AllowNavigation is egress.ProxySession.AllowNavigation on the node; the
// returned function ends the allowance.
func (p *Proxy) AllowNavigation(id, host string, port uint16) func() {
	tok := p.query(OpRequest{Op: OpAllowNav, Target: id, Host: host, Port: port}).Token
	return func() {
		if tok != "" {
			p.call(OpRequest{Op: OpAllowDone, Token: tok}, nil)
		}
	}
}

// CloseProxy closes the node's session proxy id (a handle session's, which
// another replica may have opened); errors are ignored (the node closes it
// when its index key expires).
func (c *Client) CloseProxy(ctx context.Context, id string) {
	if idRe.MatchString(id) {
		c.do(ctx, http.MethodDelete, PathSessions+"/"+id, nil, nil) //nolint:errcheck
	}
}

// Spare names the spare session the node opened this proxy with (its
// BrowserContext and blank tab, to attach to), or "", "" when the replica
// creates the tab itself. Ids a node sends are checked (cdpID's shape);
// a malformed one is reported as none.
func (p *Proxy) Spare() (bctx, target string) {
	if !cdpID(p.spareCtx) || !cdpID(p.spareTarget) {
		return "", ""
	}
	return p.spareCtx, p.spareTarget
}

// cdpID reports whether v has the shape of a CDP target or context id:
// 1–64 of [0-9A-Za-z._-].
func cdpID(v string) bool {
	if len(v) == 0 || len(v) > 64 {
		return false
	}
	for _, r := range v {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// ID is the proxy's id on the node.
func (p *Proxy) ID() string { return p.id }

// Bind tells the node the BrowserContext behind the proxy (OpBind); false
// when the node did not take it.
func (p *Proxy) Bind(bctx string) bool {
	p.flush()
	return p.call(OpRequest{Op: OpBind, Target: bctx}, nil)
}

// PendingDialog returns the JavaScript dialog open in target, a tab of the
// session's BrowserContext ("" any of them), as the node saw it open:
// false when none is, or the node did not answer.
func (p *Proxy) PendingDialog(target string) (Dialog, bool) {
	var out OpResponse
	if !p.call(OpRequest{Op: OpDialog, Target: target}, &out) || out.Dialog == nil {
		return Dialog{}, false
	}
	return *out.Dialog, true
}

// AnswerDialog accepts (with prompt for a prompt) or dismisses the dialog
// open in target ("" any tab of the session) through the node, which saw it
// open (a replica that attached later cannot answer it over its own CDP
// session): the dialog answered, false when none was open or the node did
// not answer.
func (p *Proxy) AnswerDialog(target string, accept bool, prompt string) (Dialog, bool) {
	var out OpResponse
	if !p.call(OpRequest{Op: OpAnswer, Target: target, Accept: accept, Prompt: prompt}, &out) || out.Dialog == nil {
		return Dialog{}, false
	}
	return *out.Dialog, true
}

// Release stops driving the proxy from this replica without closing it on
// the node (a handle session another replica may drive).
func (p *Proxy) Release() {
	p.closeOnce.Do(func() {
		p.flush()
		close(p.done)
	})
}

// Close closes the session's proxy on the node (its slot is free again).
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.flush()
		close(p.done)
		ctx, cancel := context.WithTimeout(context.Background(), opTimeoutProxy)
		defer cancel()
		path := PathSessions
		if p.reserved.Load() {
			path = PathSpares
		}
		p.c.do(ctx, http.MethodDelete, path+"/"+p.id, nil, nil) //nolint:errcheck // the node also frees it when it restarts
	})
	return nil
}

// ErrSparesOff is ReserveSpare's error when the node keeps no spares
// (--max-spares 0): a replica asks that node again only after SparesOffRetry.
var ErrSparesOff = errors.New("the browser node keeps no spare sessions (--max-spares 0)")

// SparesOffRetry is how long a replica leaves a node that keeps no spares
// before asking it again (its operator may restart it with spares).
const SparesOffRetry = 5 * time.Minute

// ErrSpareGone is BindSpare's and RenewSpare's error when the node no
// longer holds the reservation (it expired, was reclaimed for a session,
// or its relay closed).
var ErrSpareGone = errors.New("the browser node no longer holds the reserved spare")

// ReserveSpare reserves one of the node's ready spares for this client's
// relay: a proxy that refuses every request until bound, and the
// BrowserContext and blank tab behind it (Proxy.Spare), for the caller to
// attach to ahead of a session. The reservation ends with the relay, when
// released (Proxy.Close), or ReserveTTL after it was made or last renewed
// (RenewSpare); it counts against the node's capacity until then but
// never keeps a session out (the node reclaims it for an open that needs
// its slot). Errors: the node's refusal (none ready: 503 with
// Retry-After; the relay not open: 409) or the network's.
func (c *Client) ReserveSpare(ctx context.Context) (*Proxy, error) {
	var or OpenResponse
	if st, err := c.do(ctx, http.MethodPost, PathSpares, struct{}{}, &or); st == http.StatusNotImplemented {
		return nil, ErrSparesOff
	} else if err != nil {
		return nil, err
	}
	if !idRe.MatchString(or.ID) || !cdpID(or.Context) || !cdpID(or.Target) {
		return nil, fmt.Errorf("browser node %s: a spare reservation without a valid id, context or target", c.ap)
	}
	p := c.newProxy(or)
	p.reserved.Store(true)
	return p, nil
}

// RenewSpare restarts the ReserveTTL of the reserved spare behind px:
// ErrSpareGone when the node no longer holds it.
func (c *Client) RenewSpare(ctx context.Context, px *Proxy) error {
	st, err := c.do(ctx, http.MethodPost, PathSpares+"/"+px.id, struct{}{}, nil)
	if st == http.StatusNotFound {
		return ErrSpareGone
	}
	return err
}

// BindSpare makes the reserved spare behind px a session named name,
// judged with pol from here on (bound once, on the node, before it
// answers), a handle session when handleTTL > 0 (as OpenHandleProxy):
// px is then the session's proxy, with the same id. ErrSpareGone when
// the node no longer holds the reservation; other refusals are
// browser_failed (a full node never refuses: the slot is the spare's).
func (c *Client) BindSpare(ctx context.Context, px *Proxy, name string, pol Policy, handleTTL time.Duration) error {
	if _, err := pol.Encode(); err != nil {
		return reason.Wrap(reason.BrowserFailed, "", "This replica's egress policy cannot be sent to a browser node ("+err.Error()+"); fix security.* in config.yaml.", err)
	}
	in := OpenRequest{Name: name, Policy: &pol, Spare: px.id}
	if handleTTL > 0 {
		in.Handle, in.TTLMS = true, handleTTL.Milliseconds()
	}
	var or OpenResponse
	st, err := c.do(ctx, http.MethodPost, PathSessions, in, &or)
	if st == http.StatusNotFound {
		return ErrSpareGone
	}
	if err != nil {
		return reason.Wrap(reason.BrowserFailed, "", "The browser node did not bind its reserved spare; call browser_navigate again.", err)
	}
	if or.ID != px.id || or.Proxy != px.url {
		return reason.New(reason.BrowserFailed, "", "The browser node bound another session than the reserved spare; call browser_navigate again.")
	}
	px.reserved.Store(false)
	return nil
}

// Attached returns, once, the tab the Pool attached to this proxy's spare
// before the session was placed (its reserved, pre-attached spares), or
// nil: the caller then attaches to Spare's target or creates the tab. The
// caller owns the returned tab.
func (p *Proxy) Attached() *backend.Tab { return p.attached.Swap(nil) }
