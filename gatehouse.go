// Package gatehouse embeds Gatehouse, the web-access layer for AI agents, in a
// Go program: the gates (secret-in-URL refusal, SSRF filter with DNS resolved,
// fail closed and re-checked at connect time and after redirects, website
// blocklist), the extraction pipeline (clean markdown, TTL disk cache,
// truncate-and-store) and the tool registry that `gatehouse mcp` serves.
//
// Open a Gatehouse home (the directory holding config.yaml, .env, the cache
// and stored pages), then call Extract, Search, Check and Read, or any tool by name
// with Call. Every call goes through the same tool layer as the CLI and the
// MCP server, so inputs are validated against the same schemas and results
// have the same JSON shapes (`gatehouse extract --json`, `gatehouse check
// --json`).
//
// Refusals are results, not errors: a refused URL is a Page with Error and a
// stable Reason code (see docs/reasons.md, or Reason.Doc); a whole-call
// refusal (a credential in any URL) is an ExtractResult with Refused() true.
// A Go error means the call could not run at all (bad arguments, a closed
// Gatehouse).
//
// The default configuration refuses private, loopback and link-local
// targets; only security.allow_private_urls in config.yaml relaxes that, and
// cloud-metadata endpoints stay refused regardless.
//
// Every call takes its options as a *XxxOptions (nil for the defaults) and
// typed arguments; only Call takes raw JSON, as an MCP client sends it.
//
// Embedded, PDFs are read in this process: a page whose content streams
// decode to more than 1 MiB is skipped, a document over 32 MiB of them or
// 16 MiB of file is refused (empty_content), and one still being read after
// 20 s gives extract_timeout while its reading goroutine, which cannot be
// interrupted, is abandoned (it stops at its next read of the file). The
// gatehouse binary reads each PDF in a child process with an address-space
// and CPU limit instead, killed at the deadline. go.mod's one replace line
// (a go-htmldate stub) does not apply to a program that imports this
// package; see the README's "From Go" for the line it may add and its cost.
package gatehouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// Gatehouse is an opened home. It is safe for concurrent use; all calls
// share one task (see Options.Task) whose state is released by Close.
type Gatehouse struct {
	home     string
	reg      *tools.Registry
	task     string
	warnings []string

	mu     sync.Mutex
	closed bool
}

// Options configure Open. A nil *Options means the defaults.
type Options struct {
	// Logger receives Gatehouse's log records (cache hits, decisions); nil
	// discards them.
	Logger *slog.Logger
	// Task is the task id of this Gatehouse's calls (per-task state such as
	// browser sessions is keyed by it); "" means "default".
	Task string
}

// Open opens the Gatehouse home dir: it reads dir/config.yaml (a missing file
// means the defaults) and builds the gates, the cache under dir/cache/web and
// the tool registry. dir "" means $GATEHOUSE_HOME, else ~/.gatehouse. It
// returns an error when the home cannot be resolved or config.yaml does not
// parse (the message gives the line and column); softer problems (a clamped
// value, a missing blocklist file) are kept in Warnings.
func Open(dir string, opts *Options) (*Gatehouse, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if dir == "" {
		h, err := config.Home()
		if err != nil {
			return nil, err
		}
		dir = h
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cfg, warns, err := config.Load(dir)
	if err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	g := &Gatehouse{home: dir, task: o.Task}
	for _, w := range warns {
		g.warnings = append(g.warnings, w.String())
	}
	reg, tw := tools.Default(tools.Env{Web: web.Env{Home: dir, Config: cfg, Logger: logger}})
	g.reg = reg
	g.warnings = append(g.warnings, tw...)
	if g.task == "" {
		g.task = tools.DefaultTask
	}
	return g, nil
}

// Home returns the absolute home directory.
func (g *Gatehouse) Home() string { return g.home }

// Warnings returns the non-fatal problems Open found, one human-readable
// line each.
func (g *Gatehouse) Warnings() []string { return append([]string(nil), g.warnings...) }

// Close ends the Gatehouse's task, releasing per-task state, and releases
// process-wide resources its tools hold (a browser). Later calls return
// ErrClosed. Close is idempotent; it returns the first cleanup error.
func (g *Gatehouse) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	g.mu.Unlock()
	g.reg.EndTask(g.task)
	// Process-wide resources (the browser tools' Chromium) go with the last
	// user: the registry is this Gatehouse's own.
	if c, ok := any(g.reg).(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// ErrClosed is returned by calls on a closed Gatehouse.
var ErrClosed = errors.New("gatehouse: closed")

// Reason is a stable, machine-readable refusal or failure code such as
// "ssrf_private" or "secret_in_url" (the closed set is in docs/reasons.md).
// The empty Reason means none.
type Reason string

// Doc returns the one-line documentation of r, or "" for an unknown code.
func (r Reason) Doc() string { return reason.Code(r).Doc() }

// Reasons returns every defined code, sorted.
func Reasons() []Reason {
	var out []Reason
	for _, c := range reason.All() {
		out = append(out, Reason(c))
	}
	return out
}

// call runs a tool and decodes its JSON result into out (the public mirror
// of the tool's result type). It returns whether the call was refused.
func (g *Gatehouse) call(ctx context.Context, name string, in any, progress func(done, total int, msg string), out any) (bool, error) {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return false, ErrClosed
	}
	res, err := g.reg.CallValue(ctx, name, in, tools.Options{Task: g.task, Surface: tools.SurfaceGo, Progress: progress})
	if err != nil {
		return false, err
	}
	b, err := res.JSON(false)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return false, fmt.Errorf("gatehouse: decoding %s result: %w", name, err)
	}
	return res.Refused, nil
}

// refusable is a tool result that may be a whole-call refusal.
type refusable interface{ refusal() (Reason, string) }

// refusalFields are the reason and message of a whole-call refusal, for
// results that have no fields of their own for them.
type refusalFields struct {
	Reason Reason `json:"reason"`
	Error  string `json:"error"`
}

func (r *refusalFields) refusal() (Reason, string) { return r.Reason, r.Error }

// run calls the tool through call and turns a whole-call refusal into an
// *Error: every refusal, or with argsOnly only a refusal of the arguments
// themselves (invalid_arguments, tool_unavailable); other refusals stay in
// out for the caller to read.
func (g *Gatehouse) run(ctx context.Context, name string, in any, progress func(done, total int, msg string), out refusable, argsOnly bool) error {
	refused, err := g.call(ctx, name, in, progress, out)
	if err != nil || !refused {
		return err
	}
	code, msg := out.refusal()
	if argsOnly && code != Reason(reason.InvalidArguments) && code != Reason(reason.ToolUnavailable) {
		return nil
	}
	return &Error{Reason: code, Message: msg}
}

// Error is a call refused before it ran: its arguments broke the tool's
// schema (Reason invalid_arguments) or the tool is not usable in this
// process (tool_unavailable).
type Error struct {
	Reason  Reason
	Message string
}

func (e *Error) Error() string { return "gatehouse: " + e.Message }

func toolsOptions(g *Gatehouse) tools.Options {
	return tools.Options{Task: g.task, Surface: tools.SurfaceGo}
}
