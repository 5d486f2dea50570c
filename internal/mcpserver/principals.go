package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/principal"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Principals and the sessionless protocol (issue 18).
//
// Every HTTP request is authenticated as a principal (HTTPOptions.Tokens: the
// --tokens file; one Token is principal.Default), carried in the request's
// context with principal.With. The SDK runs a session's handlers in the
// context of the request that created it, so a tool call sees the principal
// of its session's initialize request; the HTTP layer lets only that
// principal use the session's Mcp-Session-Id (another gets 404, exactly as
// for an unknown id).
//
// A request of protocol 2026-07-28 or later carries its version and
// capabilities in _meta and no Mcp-Session-Id; it is served by the SDK's
// stateless handler, one throwaway SDK session per request. Its task, the
// state that outlives the call (browser sessions, the pages its results
// linked), is the principal's sessionless task: one per principal, ended
// after the session idle time (HTTPOptions.SessionIdle) without calls, never
// shared by two principals. The browser-fleet issue replaces it with
// explicit browser handles.

// sessionlessKey marks the context of a request served without a session.
type sessionlessKey struct{}

func withSessionless(ctx context.Context) context.Context {
	return context.WithValue(ctx, sessionlessKey{}, true)
}

func isSessionless(ctx context.Context) bool {
	v, _ := ctx.Value(sessionlessKey{}).(bool)
	return v
}

// postInfo is what checkPost learned of a POST body.
type postInfo struct {
	sessionless bool     // a request of protocol ≥ 2026-07-28 without Mcp-Session-Id
	calls       int      // tools/call requests in it (a batch may hold several)
	tools       []string // params.name of each of those tools/call requests (as sent: not yet a label)
}

// inspectPost reads what routing and admission need from a POST body that
// is valid JSON (one message or a batch): whether it uses the sessionless
// protocol (the MCP-Protocol-Version header or a message's
// _meta[io.modelcontextprotocol/protocolVersion] is 2026-07-28 or later) and
// how many tools/call requests it holds. An initialize request is never
// sessionless.
func inspectPost(h http.Header, body []byte) postInfo {
	var info postInfo
	if v := h.Get("Mcp-Protocol-Version"); v >= legacyInit {
		info.sessionless = true
	}
	type msg struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]any `json:"_meta"`
			Name string         `json:"name"`
		} `json:"params"`
	}
	var msgs []msg
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		json.Unmarshal(t, &msgs)
	} else {
		var m msg
		if json.Unmarshal(t, &m) == nil {
			msgs = append(msgs, m)
		}
	}
	initialize := false
	for _, m := range msgs {
		if v, _ := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string); v >= legacyInit {
			info.sessionless = true
		}
		initialize = initialize || m.Method == "initialize"
		if m.Method == "tools/call" && len(m.ID) > 0 {
			info.calls++
			info.tools = append(info.tools, m.Params.Name)
		}
	}
	// initialize starts a session whatever version it names: the session
	// handler answers it (and refuses a 2026-07-28 one with the versions it
	// negotiates).
	info.sessionless = info.sessionless && !initialize
	return info
}

// admit takes n call slots of the request's principal from lim. It returns
// the release of all of them, or writes the refusal and returns false: 429
// with Retry-After for a *principal.Refusal (too_many_calls, rate_limited),
// 503 for any other limiter error (e.g. the shared store unreachable: its
// reason code, state_unavailable). The body is a JSON-RPC error with code
// CodeLimited whose data holds {"reason", "retry_after_s"}.
// refused is the reason code of the refusal ("" when admitted).
func admit(w http.ResponseWriter, r *http.Request, lim principal.Limiter, n int, id any) (release func(), refused reason.Code) {
	var rels []func()
	release = func() {
		for _, f := range rels {
			f()
		}
	}
	name := principal.From(r.Context())
	for range n {
		rel, err := lim.Acquire(r.Context(), name)
		if err == nil {
			rels = append(rels, rel)
			continue
		}
		release()
		var ref *principal.Refusal
		if errors.As(err, &ref) {
			secs := int(principal.RetryAfterSeconds(ref.RetryAfter) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeRPCErrorWith(w, http.StatusTooManyRequests, id, CodeLimited, ref.Message, map[string]any{"reason": ref.Reason, "retry_after_s": secs})
			return nil, reason.Code(ref.Reason)
		}
		code := reason.Of(err)
		if code == "" {
			code = reason.ToolFailed
		}
		w.Header().Set("Retry-After", "1")
		writeRPCErrorWith(w, http.StatusServiceUnavailable, id, CodeLimited, "Service unavailable: "+err.Error(), map[string]any{"reason": code, "retry_after_s": 1})
		return nil, code
	}
	return release, ""
}

// CodeLimited is the JSON-RPC error code (the implementation-defined server
// error range of JSON-RPC 2.0 §5.1) of a tools/call refused by the
// per-principal limits before it ran; data.reason says which.
const CodeLimited = -32000

// owners maps each HTTP session's Mcp-Session-Id to its principal.
type owners struct {
	mu sync.Mutex
	m  map[string]string
}

// bind records that session ss belongs to principal name, until it ends.
func (o *owners) bind(ss *mcp.ServerSession, name string) {
	id := ss.ID()
	if id == "" {
		return
	}
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string]string{}
	}
	_, had := o.m[id]
	o.m[id] = name
	o.mu.Unlock()
	if had {
		return
	}
	go func() {
		ss.Wait()
		o.mu.Lock()
		delete(o.m, id)
		o.mu.Unlock()
	}()
}

// owner returns the principal of session id, if it is known.
func (o *owners) owner(id string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	name, ok := o.m[id]
	return name, ok
}

// principalTask is the task id of a principal's sessionless calls: derived
// from the name by hashing, so equal on every replica and never equal for
// two names.
func principalTask(name string) string {
	sum := sha256.Sum256([]byte("gatehouse-principal\x00" + name))
	return "mcp-principal-" + hex.EncodeToString(sum[:8])
}

// principalSession returns the sessionless session of principal name,
// starting it on first use; it ends (its task with it) after idle without
// a call running.
func (s *Server) principalSession(name string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byPrincipal == nil {
		s.byPrincipal = map[string]*session{}
	}
	se := s.byPrincipal[name]
	if se != nil {
		se.lastUse = time.Now()
		se.idle.Reset(s.idleAfter())
		return se
	}
	ctx, cancel := context.WithCancel(context.Background())
	se = &session{task: principalTask(name), ctx: ctx, cancel: cancel, sessionless: true, storeScoped: s.opts.StoreScopedByPrincipal, lastUse: time.Now()}
	s.byPrincipal[name] = se
	se.idle = time.AfterFunc(s.idleAfter(), func() { s.expirePrincipal(name, se) })
	s.log.Info("mcp sessionless task started", KeyTask, se.task)
	return se
}

// idleAfter is the idle time of sessionless sessions; s.mu is held.
func (s *Server) idleAfter() time.Duration {
	if s.principalIdle > 0 {
		return s.principalIdle
	}
	return DefaultSessionIdle
}

// expirePrincipal ends se, the sessionless session of name, unless a call
// of it is still running or started within the idle time (then it looks
// again later).
func (s *Server) expirePrincipal(name string, se *session) {
	s.mu.Lock()
	if s.byPrincipal[name] != se { // already ended
		s.mu.Unlock()
		return
	}
	if idle := s.idleAfter(); s.running[se.task] > 0 || time.Since(se.lastUse) < idle {
		se.idle.Reset(idle - min(time.Since(se.lastUse), idle/2))
		s.mu.Unlock()
		return
	}
	delete(s.byPrincipal, name)
	s.mu.Unlock()
	s.endSessionless(se)
}

func (s *Server) endSessionless(se *session) {
	se.idle.Stop()
	se.cancel()
	s.log.Info("mcp session ended", KeyTask, se.task)
	s.opts.Registry.EndTask(se.task)
}

// endPrincipalSessions ends every sessionless session (server shutdown).
func (s *Server) endPrincipalSessions() {
	s.mu.Lock()
	all := s.byPrincipal
	s.byPrincipal = nil
	s.mu.Unlock()
	for _, se := range all {
		s.endSessionless(se)
	}
}

// sessionNotFound answers a request that names another principal's session
// exactly as the SDK answers an unknown Mcp-Session-Id (404, "session not
// found", converted to JSON-RPC by rpcErrorWriter), so a session id is never
// a credential across principals and its existence is not disclosed.
func sessionNotFound(w *rpcErrorWriter) {
	writeRPCError(w, http.StatusNotFound, w.id, jsonrpc.CodeInvalidRequest, "session not found")
}
