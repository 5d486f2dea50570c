// Tab evaluation: calls in the isolated world, page-world evaluation
// (browser_console expressions), stopping runaway scripts, and value
// description.

package backend

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// CallIsolated calls the JavaScript function declaration fn with args (JSON
// values) in Gatehouse's isolated world of the main frame, awaits a returned
// promise, and returns the JSON result. A JavaScript exception is an
// eval_failed error with its text.
func (t *Tab) CallIsolated(ctx context.Context, fn string, args ...any) (json.RawMessage, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	w, err := chromedp.Call(rctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: t.frame, WorldName: WorldName})
	if err != nil {
		return nil, t.cdpErr(ctx, "Preparing the page script", err)
	}
	return t.callOn(ctx, rctx, w.ExecutionContextID, fn, args)
}

func (t *Tab) callOn(ctx, rctx context.Context, ec runtime.ExecutionContextID, fn string, args []any) (json.RawMessage, error) {
	cargs, err := callArgs(args)
	if err != nil {
		return nil, err
	}
	yes := true
	res, err := chromedp.Call(rctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn, ExecutionContextID: ec, Arguments: cargs,
		ReturnByValue: &yes, AwaitPromise: &yes, Silent: &yes,
	})
	if err != nil {
		return nil, t.cdpErr(ctx, "Running the page script", err)
	}
	if res.ExceptionDetails != nil {
		return nil, reason.New(reason.EvalFailed, "", "The page script failed: "+exceptionText(res.ExceptionDetails))
	}
	if res.Result == nil {
		return json.RawMessage("null"), nil
	}
	if len(res.Result.Value) == 0 {
		return json.RawMessage("null"), nil
	}
	return remoteValue(res.Result.Value), nil
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return firstLine(d.Exception.Description)
	}
	return firstLine(d.Text)
}

// EvalResult is the value of a page-world evaluation.
type EvalResult struct {
	// Value is the JSON value; nil when the value has no JSON form
	// (Description says what it is then).
	Value json.RawMessage
	// Type is the JavaScript type (string, number, boolean, object,
	// function, bigint, symbol, undefined), or an object's subtype (node,
	// array, map, set, regexp, date, error, promise, …; "null" for null).
	Type string
	// Description names a value with no JSON form: "undefined", NaN,
	// Infinity, 10n, Symbol(x), a function's source, a DOM node
	// ("div#main.box"), a Map. With Value set, it is "" unless Value is
	// a copy in which values JSON cannot hold (functions, BigInts,
	// cycles, …) are described in place, which it then says.
	Description string
}

// evalGroup is the object group of EvalPage's remote objects (released after
// each call).
const evalGroup = "__gatehouse_eval"

// EvalPage evaluates expression in the page's own JavaScript world (what the
// page's scripts see) in REPL mode (top-level await; let/const persist between
// calls). A promise result is awaited and its resolved value returned (REPL
// mode only awaits the REPL's own wrapper, so the promise handle is awaited
// with Runtime.awaitPromise). A value with a JSON form is returned by value;
// any other (undefined, NaN, BigInt, a Symbol, a function, a DOM node, a Map
// or Set, a cyclic object, …) comes back as its Description, never as a
// misleading {}. An exception or a rejected promise is eval_failed.
//
// An expression still running at ctx's deadline (a busy loop: the renderer's
// main thread never answers CDP again on its own) is stopped with
// Runtime.terminateExecution (stopScript) and command_timeout is returned; the
// error wraps ErrScriptStopped when the page answered again afterwards, so the
// session is still usable, and not otherwise (the caller recycles it).
func (t *Tab) EvalPage(ctx context.Context, expression string) (EvalResult, error) {
	if err := t.check(); err != nil {
		return EvalResult{}, err
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	defer func() {
		// Bounded: after a timeout the renderer may still be busy.
		rel, rcancel := t.runAny(context.WithoutCancel(ctx))
		defer rcancel()
		rel, rcancel2 := context.WithTimeout(rel, releaseTimeout)
		defer rcancel2()
		chromedp.Call(rel, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: evalGroup}) //nolint:errcheck // best effort
	}()
	yes := true
	res, err := chromedp.Call(rctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: expression, ObjectGroup: evalGroup, AwaitPromise: &yes, ReplMode: &yes, UserGesture: &yes,
	})
	if err != nil {
		if terr := t.evalTimedOut(ctx, err, "The expression"); terr != nil {
			return EvalResult{}, terr
		}
		return EvalResult{}, t.cdpErr(ctx, "Evaluating the expression", err)
	}
	if res.ExceptionDetails != nil {
		return EvalResult{}, reason.New(reason.EvalFailed, "", "The expression threw: "+exceptionText(res.ExceptionDetails))
	}
	obj := res.Result
	if obj != nil && obj.Subtype == runtime.RemoteObjectSubtypePromise && obj.ObjectID != "" {
		ar, err := chromedp.Call(rctx, runtime.AwaitPromise, runtime.AwaitPromiseParams{PromiseObjectID: obj.ObjectID})
		if err != nil {
			if terr := t.evalTimedOut(ctx, err, "The expression's promise"); terr != nil {
				return EvalResult{}, terr
			}
			return EvalResult{}, t.cdpErr(ctx, "Awaiting the expression's promise", err)
		}
		if ar.ExceptionDetails != nil {
			return EvalResult{}, reason.New(reason.EvalFailed, "", "The expression's promise rejected: "+exceptionText(ar.ExceptionDetails))
		}
		obj = ar.Result
	}
	return t.evalValue(rctx, ctx, obj)
}

// ErrScriptStopped is wrapped by EvalPage's command_timeout when the
// expression was stopped and the page answered again: the tab is usable and
// need not be recycled.
var ErrScriptStopped = errors.New("the script was stopped (Runtime.terminateExecution) and the page answers again")

// Bounds of the clean-up after an evaluation (seconds of wall time, not part
// of browser.command_timeout): stopping a script that overran it, and
// releasing the evaluation's objects.
const (
	stopScriptTimeout = 3 * time.Second
	releaseTimeout    = 2 * time.Second
)

// evalTimedOut is EvalPage's handling of a call that failed at ctx's
// deadline: the script is stopped (stopScript) and command_timeout returned,
// wrapping ErrScriptStopped when the page answers again. nil when err is not
// a deadline (a call the caller cancelled has its script stopped too, best
// effort).
func (t *Tab) evalTimedOut(ctx context.Context, err error, what string) error {
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if errors.Is(ctx.Err(), context.Canceled) {
			t.stopScript(ctx) // the caller gave up: the script must not keep the page busy
		}
		return nil
	}
	if t.stopScript(ctx) {
		return reason.Wrap(reason.CommandTimeout, "", what+" did not finish within browser.command_timeout; Gatehouse stopped it (Runtime.terminateExecution) and the page is usable again.", ErrScriptStopped)
	}
	return reason.Wrap(reason.CommandTimeout, "", what+" did not finish within browser.command_timeout and the page did not answer after it was stopped; the session will be replaced by a fresh one on the next call.", err)
}

// Responsive reports whether the page's main thread answers a trivial
// evaluation within d: false while a script spins (or the tab is gone).
func (t *Tab) Responsive(ctx context.Context, d time.Duration) bool {
	if t.check() != nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	rctx, rcancel := t.runAny(pctx)
	defer rcancel()
	_, err := chromedp.Call(rctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "0"})
	return err == nil
}

// StopScript is stopScript for callers outside EvalPage (the render step): it
// ends the script the page's main thread is busy with and reports whether
// the page answers again.
func (t *Tab) StopScript(ctx context.Context) bool { return t.stopScript(ctx) }

// stopScript ends the JavaScript execution the page's main thread is busy
// with (Runtime.terminateExecution: Chromium delivers it as a V8 interrupt,
// so it works while a loop spins) and reports whether the renderer answers a
// probe evaluation afterwards, within stopScriptTimeout. The probe also takes
// a termination that found no script running (the command then ends "the
// next" execution, which would otherwise be the page's own or Gatehouse's
// next call).
func (t *Tab) stopScript(ctx context.Context) bool {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopScriptTimeout)
	defer cancel()
	rctx, rcancel := t.runAny(sctx)
	defer rcancel()
	if _, err := chromedp.Call(rctx, runtime.TerminateExecution, cdp.Empty{}); err != nil {
		return false
	}
	_, err := chromedp.Call(rctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "0"})
	return err == nil
}

// evalValue turns a remote object into an EvalResult (see EvalPage).
func (t *Tab) evalValue(rctx, ctx context.Context, o *runtime.RemoteObject) (EvalResult, error) {
	if o == nil {
		return EvalResult{Type: "undefined", Description: "undefined"}, nil
	}
	out := EvalResult{Type: string(o.Type)}
	if o.Subtype != "" {
		out.Type = string(o.Subtype)
	}
	switch {
	case o.Type == runtime.RemoteObjectTypeUndefined:
		out.Description = "undefined"
		return out, nil
	case o.UnserializableValue != "": // NaN, ±Infinity, -0, BigInt
		out.Description = string(o.UnserializableValue)
		return out, nil
	case o.ObjectID == "" && len(o.Value) > 0: // string, number, boolean, null
		out.Value = remoteValue(o.Value)
		return out, nil
	case o.Subtype == runtime.RemoteObjectSubtypeNull:
		out.Value = json.RawMessage("null")
		return out, nil
	}
	if o.Type == runtime.RemoteObjectTypeObject && (o.Subtype == "" || o.Subtype == runtime.RemoteObjectSubtypeArray) && o.ObjectID != "" {
		// A plain object or array: its value, when V8 can serialise it.
		yes := true
		r, err := chromedp.Call(rctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: "function () { return this; }", ObjectID: o.ObjectID, ReturnByValue: &yes, Silent: &yes,
		})
		if err == nil && r.ExceptionDetails == nil && r.Result != nil && len(r.Result.Value) > 0 {
			out.Value = remoteValue(r.Result.Value)
			return out, nil
		}
		// The call's own context shares ctx's deadline but not its timer:
		// its DeadlineExceeded may arrive while ctx.Err() is still nil.
		if err != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
			if terr := t.evalTimedOut(ctx, err, "Reading the expression's value (a getter)"); terr != nil {
				return EvalResult{}, terr
			}
			return EvalResult{}, t.cdpErr(ctx, "Reading the expression's value", err)
		}
		// Not JSON as a whole (a function, BigInt, Symbol, undefined or
		// cycle inside): a copy with each such value described in place.
		r, err = chromedp.Call(rctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: describeNonJSON, ObjectID: o.ObjectID, ReturnByValue: &yes, Silent: &yes,
		})
		if err == nil && r.ExceptionDetails == nil && r.Result != nil && len(r.Result.Value) > 0 {
			out.Value = remoteValue(r.Result.Value)
			out.Description = "values JSON cannot hold are described in place as \"[kind] …\" strings (functions, BigInts, Symbols, undefined, cycles as \"[cycle]\")"
			return out, nil
		}
		if err != nil && ctx.Err() != nil {
			return EvalResult{}, t.cdpErr(ctx, "Reading the expression's value", err)
		}
		why := "it cannot be converted to JSON (a cycle, or a BigInt, Symbol or function inside)"
		if err != nil && strings.Contains(err.Error(), "reference chain is too long") {
			why = "it refers to itself (a cycle) or is nested too deeply for JSON"
		}
		out.Description = describe(o) + ": " + why
		return out, nil
	}
	out.Description = describe(o) // function, symbol, node, map, set, regexp, date, error, …
	return out, nil
}

// describeNonJSON (run on an object by CallFunctionOn) returns a JSON-safe
// copy of it: functions, BigInts, Symbols and undefined become "[kind]
// text" strings, a value met again on the way down "[cycle]", anything
// deeper than 20 levels "[nested too deeply]", arrays and objects past
// 1000 entries are cut with a "[… N more]" entry, DOM nodes, Maps, Sets,
// Dates and RegExps are described by their kind and text.
const describeNonJSON = `function () {
  const seen = new Set();
  const cap = (s) => s.length > 200 ? s.slice(0, 199) + '…' : s;
  const walk = (v, depth) => {
    switch (typeof v) {
      case 'function': return '[function] ' + cap(String(v.name || 'anonymous'));
      case 'bigint': return '[bigint] ' + v.toString() + 'n';
      case 'symbol': return '[symbol] ' + cap(v.toString());
      case 'undefined': return '[undefined]';
      case 'number': return Number.isFinite(v) ? v : '[number] ' + String(v);
      case 'object': break;
      default: return v;
    }
    if (v === null) return null;
    if (seen.has(v)) return '[cycle]';
    if (depth > 20) return '[nested too deeply]';
    if (typeof Node !== 'undefined' && v instanceof Node) return '[node] ' + cap(v.nodeName);
    if (v instanceof Date) return '[date] ' + (isNaN(v) ? 'Invalid Date' : v.toISOString());
    if (v instanceof RegExp) return '[regexp] ' + cap(String(v));
    if (v instanceof Map) return '[map] ' + v.size + ' entries';
    if (v instanceof Set) return '[set] ' + v.size + ' values';
    if (v instanceof Error) return '[error] ' + cap(String(v));
    seen.add(v);
    let out;
    if (Array.isArray(v)) {
      out = v.slice(0, 1000).map((x) => walk(x, depth + 1));
      if (v.length > 1000) out.push('[… ' + (v.length - 1000) + ' more]');
    } else {
      out = {};
      const keys = Object.keys(v);
      for (const k of keys.slice(0, 1000)) {
        let x;
        try { x = v[k]; } catch (e) { x = '[getter threw] ' + cap(String(e)); }
        out[k] = walk(x, depth + 1);
      }
      if (keys.length > 1000) out['…'] = '[' + (keys.length - 1000) + ' more]';
    }
    seen.delete(v);
    return out;
  };
  return walk(this, 0);
}`

// describe is a remote object's description with its kind.
func describe(o *runtime.RemoteObject) string {
	d := o.Description
	if d == "" {
		d = string(o.Type)
	}
	if r := []rune(d); len(r) > 2000 {
		d = string(r[:2000]) + "…"
	}
	kind := string(o.Type)
	if o.Subtype != "" {
		kind = string(o.Subtype)
	}
	if o.ClassName != "" && o.ClassName != d && kind != "function" {
		kind += " " + o.ClassName
	}
	return "[" + kind + "] " + d
}

// callArgs marshals args as Runtime.callFunctionOn arguments (by value).
func callArgs(args []any) ([]*runtime.CallArgument, error) {
	var cargs []*runtime.CallArgument
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		cargs = append(cargs, &runtime.CallArgument{Value: b})
	}
	return cargs, nil
}
