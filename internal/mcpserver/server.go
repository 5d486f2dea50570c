// Package mcpserver serves Gatehouse's tool registry (internal/tools) over the
// Model Context Protocol with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): stdio (newline-delimited JSON-RPC)
// and streamable HTTP. The server is built once and run on either transport.
//
// Each MCP session is its own task (tools package doc): stdio has one session
// per process, streamable HTTP one per Mcp-Session-Id. When a session closes
// (stdin EOF, DELETE /mcp, idle expiry) the registry's task-end hooks run, so
// per-task state is released and a later session can never reach it. Clients
// of protocol 2026-07-28 have no session: over HTTP their calls run in their
// principal's sessionless task (principals.go). Every HTTP call runs as the
// principal of its bearer token (principal.From(ctx) in the tool handlers;
// stdio is principal.Default), and two principals never share a session,
// a task or a stored page.
//
// Tool results are the tool's JSON result as one text content item, with
// isError set on a whole-call refusal. Page text, and every other string a
// page wrote (tools.Paged; internal/tools/pages.go lists the fields), is
// wrapped in content boundaries with a per-call nonce unless
// Options.DisableContentBoundaries is set. No reply names a path under the
// server's home: tools give store names, and the server shows anything else
// under it as $GATEHOUSE_HOME (paths.go). Truncated pages name web_read in their footer and carry a
// resource_link to the stored full text, which is readable as an MCP resource
// (template gatehouse://store/{name}; resources/list lists the session's own
// stored pages). Every JSON-RPC error carries a standard code (JSON-RPC 2.0
// §5.1), and refusals of ours carry their reason code in data.reason.
package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/metrics"
	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// DefaultMaxConcurrentCalls is the per-session cap on tool calls running at
// once when Options.MaxConcurrentCalls is 0.
const DefaultMaxConcurrentCalls = 4

// Log record and keys: one canonical record per tool call.
const (
	LogToolCall   = "mcp tool call"
	KeyTool       = "tool"
	KeyTask       = "task"
	KeyDurationMS = "duration_ms"
	KeyRefused    = "refused"
	KeyReasons    = "reasons"
	KeyCancelled  = "cancelled"
)

// Instructions is the server instructions text: what Gatehouse guarantees,
// in three lines (the boundary sentence is added when boundaries are on).
const Instructions = "Gatehouse runs its gates before any byte is fetched: URLs carrying credentials, private or cloud-metadata addresses and blocklisted sites are refused.\n" +
	"Every refusal or failure carries a stable reason code (the \"reason\" field) and a message naming the fix.\n" +
	"Pages served from Gatehouse's cache say so (meta.cached, meta.age_s in seconds); a truncated page's footer names the web_read call that pages through the rest."

// Options configure New. The zero value of each field is the safe default.
type Options struct {
	// Registry is the tool registry to serve (required).
	Registry *tools.Registry
	// Store is the full-text store served as resources
	// (gatehouse://store/{name}); nil serves none.
	Store *truncate.Store
	// Version is reported in the MCP implementation info.
	Version string
	// Logger receives one record per call (LogToolCall); nil → slog.Default().
	Logger *slog.Logger
	// DisableContentBoundaries turns off the untrusted-content markers around
	// page text (CLI --no-content-boundaries). Off by default: boundaries on.
	DisableContentBoundaries bool
	// MaxConcurrentCalls caps tool calls running at once per session; more
	// are refused with reason too_many_calls. 0 → DefaultMaxConcurrentCalls.
	MaxConcurrentCalls int
	// StoreScopedByPrincipal says that the store behind web_read keeps each
	// principal's pages apart and serves a page only to the principal that
	// stored it (the shared state layer, keyed by principal.From(ctx)).
	// Sessionless calls (protocol 2026-07-28) then read every page of their
	// principal, whichever replica stored it, instead of only the pages
	// this process's results linked. Leave it false for a store shared by
	// principals (the local disk store): this server's memory is then what
	// keeps one principal from another's pages.
	StoreScopedByPrincipal bool
	// Metrics records calls, refusals, latency, cache lookups and open
	// sessions, and is what /metrics serves; nil → metrics.Default.
	Metrics *metrics.Set
	// Audit receives one event per tool call and per URL a call asked for
	// (audit.go); nil writes no audit trail.
	Audit audit.Hook
}

// Server is a Gatehouse MCP server. One Server serves any number of sessions
// on any transport; it is safe for concurrent use.
type Server struct {
	opts      Options
	log       *slog.Logger
	mcp       *mcp.Server
	stdioTask string
	paths     pathHider // the server's home, hidden from clients (paths.go)

	owners        owners        // Mcp-Session-Id → principal (principals.go)
	principalIdle time.Duration // sessionless tasks end after this long without calls (HTTPOptions.SessionIdle)

	mu          sync.Mutex
	sessions    map[*mcp.ServerSession]*session
	byPrincipal map[string]*session // principal → its sessionless session (principals.go)
	running     map[string]int      // task → calls in flight

	toolNames map[string]bool // the registered tools' names (toolLabel)
}

// session is what the server keeps per MCP session: its task id and a
// context that ends with the session, so calls still running when a session
// closes or expires are interrupted rather than left behind. A principal's
// sessionless calls (protocol 2026-07-28) share one such session
// (principals.go).
type session struct {
	task   string
	id     string // Mcp-Session-Id ("" on stdio and for sessionless calls)
	ctx    context.Context
	cancel context.CancelFunc

	sessionless bool        // the calls of one principal without a session
	idle        *time.Timer // sessionless: ends the session when idle
	lastUse     time.Time   // sessionless: when a call last started (guarded by Server.mu)
	storeScoped bool        // sessionless with Options.StoreScopedByPrincipal: the store decides what it may read

	mu     sync.Mutex
	stored map[string]string // store names this session's results linked → page URL
	snaps  map[string]bool   // browser snapshot store names this session's results named
}

// New builds the server: every usable tool of opts.Registry (listed with its
// schema, description and annotations) and the stored-page resource template.
// It panics if opts.Registry is nil (a programming error).
func New(opts Options) *Server {
	if opts.Registry == nil {
		panic("mcpserver.New: Options.Registry is nil")
	}
	if opts.MaxConcurrentCalls <= 0 {
		opts.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	}
	s := &Server{
		opts: opts, log: opts.Logger,
		stdioTask: "mcp-stdio-" + randomHex(6),
		sessions:  map[*mcp.ServerSession]*session{},
		running:   map[string]int{},
		paths:     newPathHider(opts.Registry.Home()),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.opts.Metrics == nil {
		s.opts.Metrics = metrics.Default()
	}
	s.opts.Metrics.Sessions("mcp", s.openSessions)
	instr := Instructions
	if !opts.DisableContentBoundaries {
		instr += "\n" + tools.BoundaryInstructions
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "gatehouse", Title: "Gatehouse", Version: version}, &mcp.ServerOptions{
		Instructions: instr,
		Logger:       sdkLogger(opts.Logger),
		Capabilities: &mcp.ServerCapabilities{},
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			s.taskOf(ctx, req.Session)
		},
	})
	s.mcp.AddReceivingMiddleware(s.middleware)
	s.toolNames = map[string]bool{}
	for _, t := range opts.Registry.Tools() {
		s.toolNames[t.Name()] = true
		s.mcp.AddTool(mcpTool(t), s.handler(t.Name()))
	}
	if opts.Store != nil {
		s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: tools.StoreURIPrefix + "{name}",
			Name:        "stored-page",
			Title:       "Stored full text of a truncated page",
			Description: "The complete text of a page whose web_extract result was truncated; the name is the footer's web_read path.",
			MIMEType:    "text/markdown",
		}, s.readResource)
	}
	return s
}

// MCP returns the underlying SDK server (to run it on another transport).
func (s *Server) MCP() *mcp.Server { return s.mcp }

func mcpTool(t *tools.Tool) *mcp.Tool {
	a := t.Annotations()
	ann := &mcp.ToolAnnotations{
		Title:          t.Title(),
		ReadOnlyHint:   a.ReadOnly,
		IdempotentHint: a.Idempotent,
		OpenWorldHint:  &a.OpenWorld,
	}
	if !a.ReadOnly {
		ann.DestructiveHint = &a.Destructive
	}
	return &mcp.Tool{
		Name:        t.Name(),
		Title:       t.Title(),
		Description: t.Description(),
		InputSchema: t.InputSchema(),
		Annotations: ann,
	}
}

// taskOf returns the task id of a session, registering the session on first
// sight so its end releases the task. HTTP task ids are derived from the
// session id by hashing (the id itself is a credential of the session and is
// never logged).
func (s *Server) taskOf(ctx context.Context, ss *mcp.ServerSession) string {
	return s.sessionOf(ctx, ss).task
}

// sessionOf returns the session a request belongs to: the sessionless
// session of its principal for a request of protocol 2026-07-28 served
// without a session (ctx says so), else that of ss.
func (s *Server) sessionOf(ctx context.Context, ss *mcp.ServerSession) *session {
	if isSessionless(ctx) {
		return s.principalSession(principal.From(ctx))
	}
	if ss == nil {
		return &session{task: s.stdioTask, ctx: context.Background()}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.sessions[ss]; ok {
		return se
	}
	ctx, cancel := context.WithCancel(context.Background())
	se := &session{task: s.taskName(ss), id: ss.ID(), ctx: ctx, cancel: cancel}
	s.sessions[ss] = se
	go func() {
		ss.Wait()
		cancel() // interrupt calls still running in this session
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		s.log.Info("mcp session ended", KeyTask, se.task)
		s.opts.Registry.EndTask(se.task)
	}()
	return se
}

// interruptSessions cancels the calls running in the HTTP session with
// that Mcp-Session-Id, or in every HTTP session when id is "". The SDK ends
// a session only after its running handlers return, so a DELETE or a
// shutdown interrupts them first. id "" also interrupts the calls of every
// principal's sessionless session (protocol 2026-07-28): a drain or
// shutdown interrupts every running call, sessionful or not.
func (s *Server) interruptSessions(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, se := range s.sessions {
		if se.id != "" && (id == "" || se.id == id) {
			se.cancel()
		}
	}
	if id == "" {
		for _, se := range s.byPrincipal {
			se.cancel()
		}
	}
}

// acquire reserves a call slot for task; false when the per-session cap is
// reached. Sessionless calls (uncapped here) are capped per principal by
// the HTTP layer's Limiter instead: one principal's agents share that task.
func (s *Server) acquire(task string, uncapped bool) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !uncapped && s.running[task] >= s.opts.MaxConcurrentCalls {
		return nil, false
	}
	s.running[task]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.running[task]--; s.running[task] <= 0 {
			delete(s.running, task)
		}
	}, true
}

func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		se := s.sessionOf(ctx, req.Session)
		task := se.task
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		defer context.AfterFunc(se.ctx, stop)()
		release, ok := s.acquire(task, se.sessionless)
		if !ok {
			res := &tools.Result{Value: tools.Refusal(reason.Newf(reason.TooManyCalls, "",
				"This session already has %d tool calls running; wait for one to finish, then retry.", s.opts.MaxConcurrentCalls)), Refused: true}
			s.record(ctx, name, task, start, res, req.Params.Arguments)
			return s.toMCP(res, se)
		}
		defer release()
		opts := tools.Options{Task: task, Surface: tools.SurfaceMCP, MayRead: se.mayRead}
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			var mu sync.Mutex
			opts.Progress = func(done, total int, msg string) {
				mu.Lock()
				defer mu.Unlock()
				// Best effort: a client that went away must not fail the call.
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: float64(done), Total: float64(total), Message: msg,
				})
			}
		}
		res, err := s.opts.Registry.Call(ctx, name, req.Params.Arguments, opts)
		if err != nil {
			s.log.Error(LogToolCall, KeyTool, name, KeyTask, task, "err", err)
			res = &tools.Result{Value: tools.Refusal(reason.Newf(reason.ToolFailed, "",
				"%s failed unexpectedly; this is a Gatehouse bug, please report it with the server log.", name)), Refused: true}
		}
		s.record(ctx, name, task, start, res, req.Params.Arguments)
		return s.toMCP(res, se)
	}
}

// record writes the canonical log record of one call, its metrics and its
// audit events (audit.go); args are the call's arguments.
func (s *Server) record(ctx context.Context, name, task string, start time.Time, res *tools.Result, args json.RawMessage) {
	var reasons []string
	var codes []reason.Code
	if r, ok := res.Value.(tools.Reasoned); ok {
		codes = r.Reasons()
		for _, c := range codes {
			reasons = append(reasons, string(c))
		}
	}
	d := time.Since(start)
	cancelled := ctx.Err() != nil
	s.log.Info(LogToolCall, KeyTool, name, KeyTask, task,
		KeyDurationMS, d.Milliseconds(), KeyRefused, res.Refused,
		KeyReasons, strings.Join(reasons, ","), KeyCancelled, cancelled)
	if len(codes) == 0 && res.Refused {
		// Browser results carry their code at the top, not as Reasoned.
		if rc := topOutcome(res).Reason; rc != "" {
			codes = []reason.Code{reason.Code(rc)}
		}
	}
	s.opts.Metrics.Call(name, d, res.Refused, cancelled, codes)
	countCache(s.opts.Metrics, res)
	s.audit(ctx, name, d, res, args)
}

// toMCP renders a tool result: boundaries around page text and around any
// server's words a message quotes, forged markers escaped in every string
// (tools.Boundary.Seal), the JSON result
// as text content, a resource_link per stored page (remembered in se, for
// resources/list).
func (s *Server) toMCP(res *tools.Result, se *session) (*mcp.CallToolResult, error) {
	var pages []tools.Page
	var bd *tools.Boundary
	if s.opts.DisableContentBoundaries {
		if p, ok := res.Value.(tools.Paged); ok {
			pages = p.Pages()
		}
	} else {
		bd = tools.NewBoundary()
		pages = bd.WrapPages(res.Value)
	}
	b, err := res.JSON(false)
	if err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	if bd != nil {
		// The last resort: every other string of the result, too (a
		// vendor's quoted answer wrapped, forged markers escaped).
		if b, err = bd.Seal(b); err != nil {
			return nil, fmt.Errorf("encoding result: %w", err)
		}
	}
	text := s.paths.hide(strings.TrimSuffix(string(b), "\n"))
	se.rememberSnapshots(text)
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: res.Refused}
	for _, im := range images(res.Value) {
		out.Content = append(out.Content, im)
	}
	if s.opts.Store != nil {
		for _, p := range pages {
			if p.Stored == "" {
				continue
			}
			se.remember(p.Stored, p.URL)
			out.Content = append(out.Content, &mcp.ResourceLink{
				URI: tools.StoreURIPrefix + p.Stored, Name: p.Stored,
				Title:       "Full text of " + p.URL,
				Description: "The complete page; page through it with web_read or read this resource.",
				MIMEType:    "text/markdown",
			})
		}
	}
	return out, nil
}

// readResource serves gatehouse://store/{name} with the confinement rules of
// web_read (truncate.Store.Load). Page text is wrapped in a boundary too.
// As with web_read over MCP, a session reads only the pages its own results
// linked (session.mayRead), and resources/list lists only those.
// Refusals are JSON-RPC errors whose data is {"uri": …, "reason": …}
// (storeError).
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, ok := strings.CutPrefix(uri, tools.StoreURIPrefix)
	if !ok {
		return nil, storeError(uri, reason.New(reason.ReadOutsideStore, "", "Only "+tools.StoreURIPrefix+"<name> resources are served."))
	}
	got, text, err := s.opts.Store.For(ctx).Load(name)
	if err != nil {
		return nil, storeError(uri, err)
	}
	if !s.sessionOf(ctx, req.Session).mayRead(got) {
		return nil, storeError(uri, tools.NotThisSession(got))
	}
	if !s.opts.DisableContentBoundaries {
		text = tools.NewBoundary().Wrap(text, "", false)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: s.paths.hide(text)}}}, nil
}

// CodeResourceNotFound is the JSON-RPC error code of a resource that does not
// exist (MCP 2025-06-18 and 2025-11-25 server/resources §Error Handling).
const CodeResourceNotFound = -32002

// storeError is the JSON-RPC error of a refused resources/read: code
// CodeResourceNotFound for read_not_found, read_symlink and read_not_regular
// (there is no stored page at that URI), -32602 Invalid params for a URI
// that cannot name a stored page (read_outside_store: "..", an empty or
// foreign name, a NUL), -32603 otherwise; data carries the URI and the
// reason code, the message the fix.
func storeError(uri string, err error) error {
	code := int64(jsonrpc.CodeInternalError)
	rc := reason.Of(err)
	switch rc {
	case reason.ReadNotFound, reason.ReadSymlink, reason.ReadNotRegular:
		code = CodeResourceNotFound
	case reason.ReadOutsideStore:
		code = jsonrpc.CodeInvalidParams
	}
	data, _ := json.Marshal(map[string]string{"uri": uri, "reason": string(rc)})
	msg := "Resource not found"
	if code != CodeResourceNotFound {
		msg = "Resource refused"
	}
	return &jsonrpc.Error{Code: code, Message: msg + ": " + err.Error(), Data: data}
}

// mayRead reports whether this session may read the stored page name: a
// truncated web_extract page (<host>-<hash of the URL>.md, a name anyone
// knowing the URL can compute) only when this session's results linked it;
// a browser snapshot (browser-snapshot-<hash of its text>.txt) only when
// this session's results named it: a caller who guesses the text of a page
// another session or principal browsed must not learn that it was browsed
// (issue 18: a handle is never authentication). The store is shared by
// every session and principal of the process; this is what scopes it.
func (se *session) mayRead(name string) bool {
	if se.storeScoped {
		return true
	}
	se.mu.Lock()
	defer se.mu.Unlock()
	if strings.HasSuffix(name, ".txt") {
		return se.snaps[name]
	}
	_, ok := se.stored[name]
	return ok
}

// snapshotNameRe matches the store name of a browser snapshot in a result.
var snapshotNameRe = lazyregexp.New(`browser-snapshot-[0-9a-f]{10}\.txt`)

// rememberSnapshots records the browser snapshot store names a result's
// text names (a truncated snapshot's note), so this session may read them.
func (se *session) rememberSnapshots(text string) {
	if !strings.Contains(text, "browser-snapshot-") {
		return
	}
	names := snapshotNameRe.FindAllString(text, -1)
	se.mu.Lock()
	defer se.mu.Unlock()
	if se.snaps == nil {
		se.snaps = map[string]bool{}
	}
	for _, n := range names {
		se.snaps[n] = true
	}
}

// remember records that this session's results linked the stored page name.
func (se *session) remember(name, url string) {
	se.mu.Lock()
	defer se.mu.Unlock()
	if se.stored == nil {
		se.stored = map[string]string{}
	}
	se.stored[name] = url
}

// listResources answers resources/list with the stored pages this session's
// tool results linked (resource_link), with name, title, MIME type and size
// in bytes; a page no longer in the store is left out. Other sessions' pages
// are not listed: their names would tell which URLs another task read.
func (s *Server) listResources(ctx context.Context, req mcp.Request) *mcp.ListResourcesResult {
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if (ss == nil && !isSessionless(ctx)) || s.opts.Store == nil {
		return out
	}
	se := s.sessionOf(ctx, ss)
	se.mu.Lock()
	names := make([]string, 0, len(se.stored))
	for n := range se.stored {
		names = append(names, n)
	}
	urls := maps.Clone(se.stored)
	se.mu.Unlock()
	sort.Strings(names)
	for _, n := range names {
		fi, err := os.Lstat(filepath.Join(s.opts.Store.Dir, n))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out.Resources = append(out.Resources, &mcp.Resource{
			URI: tools.StoreURIPrefix + n, Name: n, Title: "Full text of " + urls[n],
			MIMEType: "text/markdown", Size: fi.Size(),
		})
	}
	return out
}

// middleware runs around every request the SDK dispatches: resources/list
// is answered from the session's stored pages (listResources), and an error
// without a JSON-RPC code gets one (rpcError; JSON-RPC 2.0 §5.1), on every
// transport.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			// The session belongs to the principal of the request that
			// created it (principals.go).
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				s.owners.bind(ss, principal.From(ctx))
			}
		}
		if method == "resources/list" && s.opts.Store != nil {
			return s.listResources(ctx, req), nil
		}
		res, err := next(ctx, method, req)
		if err != nil && method == "resources/read" {
			// The SDK answers a URI that matches no template (another
			// scheme, a name with "/") itself, without a reason code.
			if we := (*jsonrpc.Error)(nil); !errors.As(err, &we) || !bytes.Contains(we.Data, []byte(`"reason"`)) {
				uri := ""
				if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil {
					uri = p.URI
				}
				err = storeError(uri, reason.Newf(reason.ReadOutsideStore, "",
					"Only %s<name> resources are served, where <name> is one file name: %s.", tools.StoreURIPrefix, truncate.StoreNameHint))
			}
		}
		if err != nil {
			err = s.hideInError(rpcError(method, true, err))
		}
		return res, err
	}
}

// RunStdio serves one session over stdin/stdout (newline-delimited JSON-RPC)
// until the client closes stdin or ctx ends; the session's task is ended on
// return. A malformed line gets a JSON-RPC error reply and the session goes
// on (NewLineTransport).
func (s *Server) RunStdio(ctx context.Context) error {
	return s.Run(ctx, NewLineTransport(os.Stdin, os.Stdout))
}

// Run serves one session on t (stdio, mcp.IOTransport over pipes, in-memory)
// until it closes or ctx ends; the session's task is ended on return.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	s.taskOf(ctx, ss)
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		ss.Close()
		<-done
		err = nil
	}
	s.opts.Registry.EndTask(s.taskName(ss))
	return err
}

// taskName is the task id of a session: the process's stdio task, or one
// derived from the Mcp-Session-Id by hashing.
func (s *Server) taskName(ss *mcp.ServerSession) string {
	id := ss.ID()
	if id == "" {
		return s.stdioTask
	}
	sum := sha256.Sum256([]byte(id))
	return "mcp-http-" + hex.EncodeToString(sum[:8])
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// images returns an image content block per image of a result that carries
// images (the browser tools' screenshot): a result with a method
// Images() []T where T has fields MIMEType string and Data []byte (the
// tools layer's Imaged interface). It is matched by shape rather than by
// interface so this package does not depend on which tools are compiled in.
func images(v any) []*mcp.ImageContent {
	if v == nil {
		return nil
	}
	m := reflect.ValueOf(v).MethodByName("Images")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 || m.Type().Out(0).Kind() != reflect.Slice {
		return nil
	}
	list := m.Call(nil)[0]
	var out []*mcp.ImageContent
	for i := 0; i < list.Len(); i++ {
		e := reflect.Indirect(list.Index(i))
		if e.Kind() != reflect.Struct {
			continue
		}
		mt, data := e.FieldByName("MIMEType"), e.FieldByName("Data")
		if mt.Kind() == reflect.String && data.Kind() == reflect.Slice && data.Type().Elem().Kind() == reflect.Uint8 && data.Len() > 0 {
			out = append(out, &mcp.ImageContent{MIMEType: mt.String(), Data: data.Bytes()})
		}
	}
	return out
}

// hideInError returns err with the server's home hidden (pathHider) in a
// JSON-RPC error's message and data; other errors as they are.
func (s *Server) hideInError(err error) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return err
	}
	msg, data := s.paths.hide(we.Message), json.RawMessage(s.paths.hide(string(we.Data)))
	if msg == we.Message && string(data) == string(we.Data) {
		return err
	}
	if len(we.Data) == 0 {
		data = nil
	}
	return &jsonrpc.Error{Code: we.Code, Message: msg, Data: data}
}
