// Package tools is Gatehouse's one tool layer: every tool an agent, a person or
// a Go program can call is defined here once, as a typed input struct, a typed
// result struct and a description written for a model, and registered in a
// Registry. The MCP server (internal/mcpserver), the CLI (cmd/gatehouse) and the
// public package (module root) all call tools through Registry.Call, so a
// tool's schema, its validation and its behaviour cannot drift between surfaces.
//
// # Adding a tool
//
//  1. Write the input struct. Property names come from `json` tags; the
//     `jsonschema:"…"` tag is the property's description, written for a model:
//     what it is, units (chars, lines, seconds), limits, defaults. Optional
//     fields are pointers or `omitempty`. Adjust the inferred schema (enums,
//     bounds) in Spec.Schema (an enum whose bad value has a reason code of
//     its own names it in Spec.EnumCodes); documented leniency (accepting a shape the
//     schema does not advertise) goes in Spec.Prepare, before validation.
//  2. Write the result struct. It is marshalled as the tool's JSON result on
//     every surface. A whole-call refusal must be visible to the surface:
//     implement Refuser (usually by embedding Outcome). Page text that came from
//     the network is untrusted: implement Paged so surfaces can wrap it in
//     content boundaries (see Boundary) and link stored pages.
//  3. Write the handler, func(ctx, *Call, In) (Out, error). Return refusals as
//     results (Outcome with a reason code), never as Go errors: a Go error means
//     the tool itself broke and is reported as an internal failure. Honour ctx
//     (cancellation is the interrupt), report progress with Call.Progress, and
//     key any per-task state by Call.Task (see TaskState and Registry.OnTaskEnd).
//  4. Register it: in a func add…(r *Registry, env *Env) called from Default,
//     r.Add(New(Spec{…}, handler)). If the tool needs something this process
//     may lack (Chromium, a search backend), set Spec.Available: a tool whose
//     Available returns an error is not listed by Registry.Tools, is refused
//     by Registry.Call with reason tool_unavailable, and `gatehouse doctor` and
//     `gatehouse mcp --help` print the error text (which should name the fix).
//
// Registration happens in one function, Default, that a test calls, so schema
// inference panics surface in CI and not at a user's first start.
//
// # Tasks
//
// A task is the unit of isolation between agents: per-task state (browser
// sessions, bindings) is keyed by the task id and released when the task ends.
// The MCP server gives each MCP session its own task id (stdio: one per
// process; streamable HTTP: one per Mcp-Session-Id) and calls Registry.EndTask
// when the session closes or expires; the CLI uses one task per process. A
// handler reads its task from Call.Task (or TaskID(ctx) deeper down).
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/safetext"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// Annotations are the MCP tool hints (MCP spec 2025-06-18, "Tool annotations").
// They must be true statements about the tool: clients use them to decide
// whether to ask the user before a call.
type Annotations struct {
	// ReadOnly: the tool does not modify its environment (no writes a user
	// would care about; Gatehouse's own cache and store are not counted).
	ReadOnly bool
	// Destructive: the tool may destroy or overwrite user data (only
	// meaningful when ReadOnly is false).
	Destructive bool
	// Idempotent: repeating a call with the same arguments has no additional
	// effect on the environment.
	Idempotent bool
	// OpenWorld: the tool interacts with an open set of external entities
	// (the web), as opposed to a closed local domain.
	OpenWorld bool
}

// Spec describes a tool to New.
type Spec struct {
	// Name is the tool name seen by agents (snake_case, e.g. "web_extract").
	Name string
	// Title is a short human-readable name (MCP "title").
	Title string
	// Description is written for a model: what the tool does, what it
	// refuses, limits and units. It is the MCP description and the CLI help.
	Description string
	// Annotations are the MCP hints; set them truthfully.
	Annotations Annotations
	// Schema, if non-nil, adjusts the input schema inferred from In (enums,
	// bounds, item types) before it is resolved. It runs once, at New.
	Schema func(s *jsonschema.Schema)
	// EnumCodes gives an enum property its own reason code: a value outside
	// the property's enum is refused with that code and a message listing
	// the valid values (browser_scroll's invalid_direction), instead of the
	// generic invalid_arguments. The enum stays in the published schema.
	EnumCodes map[string]reason.Code
	// Prepare, if non-nil, adjusts the decoded arguments object before it is
	// validated: the place for documented leniency, such as web_extract
	// turning its {url:…} items (published in its schema) into strings and
	// setting other items aside, so each fails as its own row instead of
	// failing the call. The restore func it returns (nil for none) runs on
	// the validated arguments, before they are decoded, to put back what it
	// set aside (web_extract's items that are no URL, so the row can say
	// what each was; breaker6 D5). It must not add capability the schema
	// denies.
	Prepare func(args map[string]any) (restore func(args map[string]any))
	// Available reports whether the tool is usable in this process; nil means
	// always. The error text says why not and names the fix ("Chromium not
	// found: apt-get install chromium or set browser.executable_path").
	// It is called by Registry.Tools, Registry.Unavailable and Registry.Call,
	// so it should be cheap (cache any probing).
	Available func() error
}

// Handler runs one call of a tool with validated input. Refusals are results
// (see Outcome); a non-nil error means the tool broke.
type Handler[In, Out any] func(ctx context.Context, c *Call, in In) (Out, error)

// Tool is a registered tool: its spec, its resolved input schema and a
// type-erased handler. Tools are immutable after New and safe for concurrent use.
type Tool struct {
	spec Spec
	// schemas returns the input schema and its resolved form, built on first
	// use: a CLI command that calls one tool (gatehouse check) or none
	// (gatehouse --version) does not pay for the others' reflection and
	// resolution (start-up cost, docs/benchmarks.md).
	schemas func() (*jsonschema.Schema, *jsonschema.Resolved)
	inType  reflect.Type
	call    func(ctx context.Context, c *Call, args json.RawMessage) (any, error)
}

// New builds a Tool from a typed handler. The input schema is inferred from
// In (json tags name properties; jsonschema tags describe them), adjusted by
// spec.Schema and resolved, on first use (InputSchema, Registry.Call). A
// schema that cannot be built panics there: register tools only from code
// that a test runs (Default; TestDefaultRegistration builds them all).
func New[In, Out any](spec Spec, h Handler[In, Out]) *Tool {
	if spec.Name == "" || h == nil {
		panic("tools.New: a tool needs a name and a handler")
	}
	schemas := sync.OnceValues(func() (*jsonschema.Schema, *jsonschema.Resolved) {
		s, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Sprintf("tools.New(%s): input schema: %v", spec.Name, err))
		}
		if s.Type != "object" {
			panic(fmt.Sprintf("tools.New(%s): input must be a struct, not %s", spec.Name, s.Type))
		}
		// Optional fields are pointers or slices, which infer as ["null", T]; a
		// model should see T (omit the field instead of sending null).
		for _, p := range s.Properties {
			if len(p.Types) == 2 && p.Types[0] == "null" {
				p.Type, p.Types = p.Types[1], nil
			}
		}
		if spec.Schema != nil {
			spec.Schema(s)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			panic(fmt.Sprintf("tools.New(%s): resolving input schema: %v", spec.Name, err))
		}
		return s, rs
	})
	t := &Tool{spec: spec, schemas: schemas, inType: reflect.TypeFor[In]()}
	t.call = func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, invalidArgs(spec.Name, err)
		}
		return h(ctx, c, in)
	}
	return t
}

// Name returns the tool name.
func (t *Tool) Name() string { return t.spec.Name }

// Title returns the human-readable title.
func (t *Tool) Title() string { return t.spec.Title }

// Description returns the model-facing description.
func (t *Tool) Description() string { return t.spec.Description }

// Annotations returns the MCP hints.
func (t *Tool) Annotations() Annotations { return t.spec.Annotations }

// InputSchema returns a copy of the tool's JSON Schema for its arguments.
func (t *Tool) InputSchema() *jsonschema.Schema {
	s, _ := t.schemas()
	return s.CloneSchemas()
}

// Usable returns nil when the tool can run in this process, else why not.
func (t *Tool) Usable() error {
	if t.spec.Available == nil {
		return nil
	}
	return t.spec.Available()
}

// Surface names the caller of a tool; some results differ in presentation
// (never in behaviour) by surface, e.g. which tool the truncation footer
// names for paging.
type Surface int

const (
	// SurfaceGo is the public Go package: results are Go values; the footer
	// names read_file and the host path, like the CLI.
	SurfaceGo Surface = iota
	// SurfaceCLI is the command line.
	SurfaceCLI
	// SurfaceMCP is an MCP client: the client usually cannot see the server's
	// disk, so paging goes through web_read and stored pages are MCP resources.
	SurfaceMCP
)

// Call is what a handler knows about the call besides its input. Surfaces
// build it with Options; handlers must not retain it after returning.
type Call struct {
	// Task is the task id (see package doc); never empty ("default" when the
	// surface set none).
	Task string
	// Surface is who called.
	Surface  Surface
	progress func(done, total int, msg string)
	mayRead  func(name string) bool
}

// MayRead reports whether this call may read the stored page name (see
// Options.MayRead); true when the surface set no rule.
func (c *Call) MayRead(name string) bool {
	return c == nil || c.mayRead == nil || c.mayRead(name)
}

// Progress reports that done of total units (URLs, steps) are finished. It is
// a no-op when the caller did not ask for progress. Safe for concurrent use
// when the surface's reporter is (all of Gatehouse's are).
func (c *Call) Progress(done, total int, msg string) {
	if c != nil && c.progress != nil {
		c.progress(done, total, msg)
	}
}

// Options are per-call settings from the surface. The zero value is a Go
// package call in task "default" without progress.
type Options struct {
	Task    string
	Surface Surface
	// Progress receives progress reports (nil: none requested).
	Progress func(done, total int, msg string)
	// MayRead, when set, limits web_read to the stored pages it accepts
	// by store file name: an MCP session reads only the pages its own
	// results linked (names of truncated web_extract pages derive from
	// the URL, so another session could compute them). Nil: any stored
	// page (the CLI, a Go caller).
	MayRead func(name string) bool
}

// Refuser is implemented by results that can be whole-call refusals; the MCP
// surface sets isError when Refused reports true, the CLI exits 1.
type Refuser interface{ Refused() bool }

// Outcome is the whole-call refusal shape shared by tools (DESIGN §4):
// {"success":false,"error":…,"reason":…}. Embed it in a result struct; on
// success leave it zero (Success nil, so the JSON carries none of its fields).
type Outcome struct {
	Success *bool       `json:"success,omitempty"`
	Error   string      `json:"error,omitempty"`
	Reason  reason.Code `json:"reason,omitempty"`
}

// Refused reports whether o is a whole-call refusal.
func (o Outcome) Refused() bool { return o.Success != nil && !*o.Success }

// Refusal returns an Outcome refusing the call with e's code and message.
// The message passes through urlsafe.Redact (and safetext.Escape) here, the
// one constructor of a whole-call refusal, because such messages echo the
// caller's own arguments (a schema validator quoting a value, an enum
// refusal naming it): a key the caller pasted is never sent back
// (docs/results.md, "Secrets never reach the output"; breaker6 D3).
func Refusal(e *reason.Error) Outcome {
	f := false
	return Outcome{Success: &f, Error: safetext.Escape(urlsafe.Redact(e.Message)), Reason: e.Code}
}

// Result is what Registry.Call returns: the tool's result value (the handler's
// Out, or an Outcome when the call was refused before the handler ran) and
// whether it is a whole-call refusal.
type Result struct {
	Value   any
	Refused bool
}

// JSON returns the result as the tool's JSON text (HTML not escaped).
func (r *Result) JSON(indent bool) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(r.Value); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// Registry holds the tools of this process and the task-end hooks. Safe for
// concurrent use; tools are added at startup only.
type Registry struct {
	mu    sync.Mutex
	tools []*Tool
	hooks []func(task string)
	ended map[string]bool
	// closers release process-wide resources (the browser) on Close; see
	// browser.go.
	closers []func() error
	// readies are the tools' readiness conditions (OnReady).
	readies []func(ctx context.Context) error
	// refusal, when set, refuses every call (see RefuseAll).
	refusal *reason.Error
	// inflight counts the calls running on the current tools (Replace
	// closes the old ones' resources once theirs have ended).
	inflight *sync.WaitGroup
	// beforeCall, when set, runs at the start of every Call (SetBeforeCall).
	beforeCall func()
	// home is the Gatehouse home the tools were built on (Home).
	home string
	// only, when set, are the name patterns of the tools served (Restrict).
	only []string
}

// Restrict serves only the tools whose names match one of patterns
// (path.Match globs such as browser_* or web_extract; `gatehouse mcp
// --tools`): the others are not listed by Tools, are listed by Unavailable,
// and a call to one is refused with tool_unavailable. A pattern that is
// malformed or matches no registered tool is an error naming the tools, and
// nothing changes. Empty patterns serve every tool.
func (r *Registry) Restrict(patterns []string) error {
	var names []string
	for _, t := range r.All() {
		names = append(names, t.Name())
	}
	for _, p := range patterns {
		hit := false
		for _, n := range names {
			ok, err := path.Match(p, n)
			if err != nil {
				return fmt.Errorf("tool pattern %q: %v", p, err)
			}
			hit = hit || ok
		}
		if !hit {
			return fmt.Errorf("tool pattern %q matches no tool; the tools are %s", p, strings.Join(names, ", "))
		}
	}
	r.mu.Lock()
	r.only = slices.Clone(patterns)
	r.mu.Unlock()
	return nil
}

// selected reports whether name is served under Restrict.
func (r *Registry) selected(name string) bool {
	r.mu.Lock()
	only := r.only
	r.mu.Unlock()
	if len(only) == 0 {
		return true
	}
	for _, p := range only {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Home returns the Gatehouse home directory the tools were built on (the
// env.Web.Home of Default or Check), "" for a registry built otherwise. A
// surface whose client cannot see this machine's disk (MCP) hides it in
// what it sends.
func (r *Registry) Home() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.home
}

// RefuseAll makes every later Call of a known tool return a refusal with e's
// code and message, before its arguments are read: a server whose config is
// broken (config_invalid) still answers initialize and tools/list, and each
// tool call names the file, the line:column and the fix instead of running
// unprotected on defaults.
// A nil e lifts the refusal.
func (r *Registry) RefuseAll(e *reason.Error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refusal = e
}

// SetBeforeCall makes fn run at the start of every Call, before the refusal
// check: a long-running surface's configuration reload (it may Replace the
// tools or RefuseAll). fn must be cheap most of the time and must not Call.
func (r *Registry) SetBeforeCall(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.beforeCall = fn
}

// Replace makes next's tools, task-end hooks, readiness conditions
// (OnReady) and process-wide resources (OnClose) this registry's, for every later Call: a long-running surface
// that re-read its configuration (spec §A8) serves the tools built from the
// new one under the same Registry. The old tools' resources (the browser:
// its sessions end) are closed by the returned func, which waits for the
// calls still running on the old tools first; call it in its own goroutine.
// next must not be used afterwards. Ended-task bookkeeping and RefuseAll stay.
func (r *Registry) Replace(next *Registry) (closeOld func() error) {
	next.mu.Lock()
	tools, hooks, closers, readies := next.tools, next.hooks, next.closers, next.readies
	next.tools, next.hooks, next.closers, next.readies = nil, nil, nil, nil
	next.mu.Unlock()
	r.mu.Lock()
	old := &Registry{ended: map[string]bool{}, closers: r.closers}
	wg := r.inflight
	r.tools, r.hooks, r.closers, r.readies, r.inflight = tools, hooks, closers, readies, nil
	r.mu.Unlock()
	return func() error {
		if wg != nil {
			wg.Wait()
		}
		return old.Close()
	}
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{ended: map[string]bool{}} }

// Add registers t. It panics on a duplicate name (a programming error caught
// by the registration test).
func (r *Registry) Add(t *Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.tools {
		if o.Name() == t.Name() {
			panic("tools: duplicate tool " + t.Name())
		}
	}
	r.tools = append(r.tools, t)
}

// All returns every registered tool, usable or not, in registration order.
func (r *Registry) All() []*Tool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tools)
}

// Tools returns the tools usable in this process, in registration order:
// what MCP lists and the CLI offers.
func (r *Registry) Tools() []*Tool {
	var out []*Tool
	for _, t := range r.All() {
		if t.Usable() == nil && r.selected(t.Name()) {
			out = append(out, t)
		}
	}
	return out
}

// Unusable is a registered tool that cannot run in this process, and why.
type Unusable struct {
	Name string
	Why  string
}

// Unavailable lists the registered tools that are not usable here, with the
// reason each gives (for `gatehouse doctor` and help texts).
func (r *Registry) Unavailable() []Unusable {
	var out []Unusable
	for _, t := range r.All() {
		if err := t.Usable(); err != nil {
			out = append(out, Unusable{Name: t.Name(), Why: err.Error()})
		} else if !r.selected(t.Name()) {
			out = append(out, Unusable{Name: t.Name(), Why: "not selected by --tools"})
		}
	}
	return out
}

// Lookup returns the registered tool with that name (usable or not).
func (r *Registry) Lookup(name string) (*Tool, bool) {
	for _, t := range r.All() {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// Call validates args (a JSON object; nil or empty means {}) against the
// tool's input schema, applies schema defaults and runs the handler with the
// task id in ctx (TaskID). An unknown tool name is a Go error (a surface
// turns it into its own protocol error); an unusable tool and invalid
// arguments are refusals (reason tool_unavailable / invalid_arguments; an
// Available error that is a *reason.Error keeps its own code). A
// non-nil error from the handler is returned as is.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage, opts Options) (*Result, error) {
	r.mu.Lock()
	before := r.beforeCall
	r.mu.Unlock()
	if before != nil {
		before()
	}
	r.mu.Lock()
	var t *Tool
	for _, x := range r.tools {
		if x.Name() == name {
			t = x
			break
		}
	}
	refusal := r.refusal
	if r.inflight == nil {
		r.inflight = new(sync.WaitGroup)
	}
	wg := r.inflight
	wg.Add(1)
	r.mu.Unlock()
	defer wg.Done()
	if t == nil {
		return nil, fmt.Errorf("tools: no tool named %q", name)
	}
	if refusal != nil {
		return refused(refusal), nil
	}
	if !r.selected(name) {
		return refused(reason.Newf(reason.ToolUnavailable, "", "%s is not served: this server serves only the tools its --tools option selects.", name)), nil
	}
	if err := t.Usable(); err != nil {
		// A typed cause (e.g. web_search's unknown_backend or missing_key)
		// keeps its own code, so the caller sees the fix it names.
		if rerr := reason.As(err); rerr != nil {
			return refused(rerr), nil
		}
		return refused(reason.Newf(reason.ToolUnavailable, "", "%s is not available in this process: %v", name, err)), nil
	}
	args, verr := t.validate(args)
	if verr != nil {
		return refused(verr), nil
	}
	task := opts.Task
	if task == "" {
		task = DefaultTask
	}
	r.started(task)
	c := &Call{Task: task, Surface: opts.Surface, progress: opts.Progress, mayRead: opts.MayRead}
	v, err := t.call(WithTask(ctx, task), c, args)
	if err != nil {
		if e := reason.As(err); e != nil && e.Code == reason.InvalidArguments {
			return refused(e), nil
		}
		return nil, err
	}
	if rv := reflect.ValueOf(v); !rv.IsValid() || (rv.Kind() == reflect.Pointer && rv.IsNil()) {
		return nil, fmt.Errorf("tools: %s returned neither a result nor an error", name)
	}
	res := &Result{Value: v}
	if rf, ok := v.(Refuser); ok {
		res.Refused = rf.Refused()
	}
	return res, nil
}

// CallValue is Call with in marshalled to JSON first (the Go and CLI
// surfaces build typed inputs; they still go through the same validation).
func (r *Registry) CallValue(ctx context.Context, name string, in any, opts Options) (*Result, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("tools: encoding %s input: %w", name, err)
	}
	return r.Call(ctx, name, b, opts)
}

func refused(e *reason.Error) *Result {
	return &Result{Value: Refusal(e), Refused: true}
}

// invalidArgs is the one constructor of an invalid_arguments error. The
// validator's message quotes the caller's value, so it is redacted here
// (urlsafe.Redact, the one redaction function) as well as by Refusal: the
// *reason.Error itself never carries a pasted key (breaker6 D3).
func invalidArgs(tool string, err error) *reason.Error {
	return invalidArgsIn(tool, err, nil, nil)
}

// invalidArgsIn is invalidArgs for a validator error on the arguments args
// (decoded) of a tool with the input schema schema: a type or enum clause
// naming a top-level property shows the caller's value as JSON
// (schemaValues), never as Go prints it ("map[a:1]"; breaker7 D18).
func invalidArgsIn(tool string, err error, args map[string]any, schema *jsonschema.Schema) *reason.Error {
	msg := err.Error()
	// Keep the message short and free of Go type names the model cannot act on.
	if i := strings.Index(msg, "\n"); i > 0 {
		msg = msg[:i]
	}
	msg = urlsafe.Redact(readableSchemaError(schemaValues(msg, args, schema)))
	return reason.Newf(reason.InvalidArguments, "", "Invalid arguments for %s: %s. Check the tool's input schema.", tool, msg)
}

// schemaNoise are the parts of a JSON Schema validator message a model (or
// a person at the CLI) cannot act on: the "validating root: validating
// /properties/" path prefixes (the property name is kept) and, in a
// minimum/maximum clause only (schemaBound), rationals printed as "-5/1"
// and floats printed as "0.000000"; minLength/maxLength clauses are said in
// words ("query: is empty"). Nothing rewrites text elsewhere, so a
// value the validator quotes (an URL "http://127.0.0.1/1") stays verbatim
// (breaker6 D4).
var schemaNoise = []struct {
	re   *lazyregexp.Regexp
	with string
}{
	{lazyregexp.New(`validating root: `), ""},
	{lazyregexp.New(`validating /properties/([^:]+): `), "$1: "},
	{lazyregexp.New(`: enum: (.*) does not equal any of: `), ": $1 is not one of "},
	// String lengths, in the validator's "Unicode code points": an empty
	// string is said to be empty; a too-long value is not echoed back.
	{lazyregexp.New(`: minLength: "" contains 0 Unicode code points, fewer than \d+$`), ": is empty"},
	{lazyregexp.New(`: minLength: (".*") contains \d+ Unicode code points, fewer than (\d+)$`), ": $1 is shorter than the minimum of $2 characters"},
	{lazyregexp.New(`: maxLength: ".*" contains (\d+) Unicode code points, more than (\d+)$`), ": is $1 characters long, more than the maximum of $2"},
}

// schemaBound is the validator's minimum/maximum clause, whose two operands
// are numbers it prints as "-5/1" and "0.000000" (schemaNumber).
var schemaBound = lazyregexp.New(`: (minimum|maximum): (-?[0-9./]+) is (less|greater) than (-?[0-9./]+)`)

// schemaNumber is one number of schemaBound: an integer rational "-5/1" or
// an integral float "2000.000000", both meaning the integer.
var schemaNumber = lazyregexp.New(`^(-?\d+)(?:/1|\.0+)$`)

// readableSchemaError rewrites a schema validator's message with schemaNoise
// and schemaBound: "validating root: validating /properties/max_age_s:
// minimum: -5/1 is less than 0.000000" becomes "max_age_s: -5 is less than
// the minimum 0".
func readableSchemaError(msg string) string {
	for _, n := range schemaNoise {
		msg = n.re.ReplaceAllString(msg, n.with)
	}
	num := func(s string) string { return schemaNumber.ReplaceAllString(s, "$1") }
	return schemaBound.ReplaceAllStringFunc(msg, func(m string) string {
		p := schemaBound.FindStringSubmatch(m)
		return fmt.Sprintf(": %s is %s than the %s %s", num(p[2]), p[3], p[1], num(p[4]))
	})
}

// schemaProp finds the last property a validator message is about
// ("validating /properties/ref: "), and the clause after it.
var schemaProp = lazyregexp.New(`validating /properties/([^:]+): (.*)$`)

// schemaType and schemaEnum are the validator's type and enum clauses,
// which print the value with Go's %v.
var (
	schemaType = lazyregexp.New(`^type: .* has type ("[^"]*"), want (.*)$`)
	schemaEnum = lazyregexp.New(`^enum: .* does not equal any of: .*$`)
)

// maxShownValue caps a value an invalid_arguments message shows (bytes of
// its JSON text).
const maxShownValue = 200

// schemaValues rewrites a validator message's type or enum clause about a
// top-level property of args as "ref: {"a":1} has JSON type "object", want
// "string"" and "render: "bogus" is not one of ["auto","always","never"]":
// the value (and the enum's values) as JSON, at most maxShownValue bytes;
// a clause about a nested value says its type without the value. msg is
// returned unchanged when it has neither clause.
func schemaValues(msg string, args map[string]any, schema *jsonschema.Schema) string {
	loc := schemaProp.FindAllStringSubmatchIndex(msg, -1)
	if len(loc) == 0 {
		return msg
	}
	m := loc[len(loc)-1]
	path, clause := msg[m[2]:m[3]], msg[m[4]:m[5]]
	val, known := args[path]
	known = known && !strings.Contains(path, "/")
	var ps *jsonschema.Schema
	if schema != nil && known {
		ps = schema.Properties[path]
	}
	head := msg[:m[0]] + "validating /properties/" + path + ": "
	switch {
	case schemaType.MatchString(clause):
		p := schemaType.FindStringSubmatch(clause)
		if !known {
			return head + "a value of JSON type " + p[1] + ", want " + p[2]
		}
		return head + shownJSON(val) + " has JSON type " + p[1] + ", want " + p[2]
	case schemaEnum.MatchString(clause) && known && ps != nil && len(ps.Enum) > 0:
		return head + shownJSON(val) + " is not one of " + shownJSON(ps.Enum)
	case schemaEnum.MatchString(clause):
		return head + "the value is not one of the allowed values"
	}
	return msg
}

// shownJSON is v as JSON text (HTML characters not escaped), cut to
// maxShownValue bytes (on a rune boundary) with "…".
func shownJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return "(a value)"
	}
	s := strings.TrimSuffix(b.String(), "\n")
	if len(s) > maxShownValue {
		cut := maxShownValue
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// validate applies defaults and validates args against the input schema,
// returning the arguments to decode.
func (t *Tool) validate(args json.RawMessage) (json.RawMessage, *reason.Error) {
	v := map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &v); err != nil {
			return nil, invalidArgs(t.Name(), errors.New("arguments must be a JSON object"))
		}
	}
	var restore func(map[string]any)
	if t.spec.Prepare != nil {
		restore = t.spec.Prepare(v)
	}
	if rerr := t.enumRefusal(v); rerr != nil {
		return nil, rerr
	}
	schema, resolved := t.schemas()
	if err := resolved.ApplyDefaults(&v); err != nil {
		return nil, invalidArgsIn(t.Name(), err, v, schema)
	}
	if err := resolved.Validate(v); err != nil {
		return nil, invalidArgsIn(t.Name(), err, v, schema)
	}
	if restore != nil {
		restore(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, invalidArgs(t.Name(), err)
	}
	return b, nil
}

// enumRefusal applies Spec.EnumCodes to the decoded arguments: the first
// property (in name order) whose value is not one of its enum values is
// refused with its code, the message naming the value and listing the valid
// ones; nil when every such property is absent or valid.
func (t *Tool) enumRefusal(args map[string]any) *reason.Error {
	props := make([]string, 0, len(t.spec.EnumCodes))
	for p := range t.spec.EnumCodes {
		props = append(props, p)
	}
	slices.Sort(props)
	schema, _ := t.schemas()
	for _, p := range props {
		v, ok := args[p]
		ps := schema.Properties[p]
		if !ok || ps == nil || slices.Contains(ps.Enum, v) {
			continue
		}
		got, _ := json.Marshal(v)
		valid := make([]string, len(ps.Enum))
		for i, e := range ps.Enum {
			b, _ := json.Marshal(e)
			valid[i] = string(b)
		}
		return reason.Newf(t.spec.EnumCodes[p], "", "Invalid %s %s for %s: use one of %s (case-sensitive).",
			p, got, t.Name(), strings.Join(valid, ", "))
	}
	return nil
}

// Reasoned is implemented by results whose entries carry reason codes; the
// surfaces log them in the call's canonical log record.
type Reasoned interface{ Reasons() []reason.Code }

// Reasons returns o's reason when it is a refusal.
func (o Outcome) Reasons() []reason.Code {
	if o.Reason == "" {
		return nil
	}
	return []reason.Code{o.Reason}
}
