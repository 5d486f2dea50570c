package tools

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/metrics"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Browser tool names (spec §B2, plus browser_close).
const (
	BrowserNavigate  = "browser_navigate"
	BrowserSnapshot  = "browser_snapshot"
	BrowserClick     = "browser_click"
	BrowserType      = "browser_type"
	BrowserFill      = "browser_fill"
	BrowserScroll    = "browser_scroll"
	BrowserBack      = "browser_back"
	BrowserPress     = "browser_press"
	BrowserConsole   = "browser_console"
	BrowserGetImages = "browser_get_images"
	BrowserVision    = "browser_vision"
	BrowserClose     = "browser_close"
	BrowserDialog    = "browser_dialog"
)

// OnClose registers fn to run on Close (process-wide resources such as the
// browser). fn runs once.
func (r *Registry) OnClose(fn func() error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closers = append(r.closers, fn)
}

// Close ends every task's state hooks are not called for; it releases
// process-wide resources (the Chromium process) registered with OnClose and
// returns the first error. The surfaces call it when they exit, including on
// SIGINT/SIGTERM. Idempotent.
func (r *Registry) Close() error {
	r.mu.Lock()
	cs := r.closers
	r.closers = nil
	r.mu.Unlock()
	var first error
	for _, fn := range cs {
		if err := fn(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Imaged is implemented by results that carry images for the MCP surface (an
// image content block next to the JSON): browser_vision's screenshot.
type Imaged interface {
	Images() []Image
}

// Image is one image of a result.
type Image struct {
	MIMEType string
	Data     []byte
}

// browserGates returns the browser's gates for env: web_check for=browser
// decides with the browser's own function, so the two cannot disagree.
func (e *Env) browserGates(cfg *config.Config) *browser.Gates {
	if e.Browser != nil {
		return e.Browser.Gates()
	}
	if e.browserG != nil {
		return e.browserG
	}
	g, _ := browser.NewGates(cfg, e.Web.Home, e.Web.Resolver, e.Web.AllowAddrPorts)
	return g
}

// Browser results, each the browser package's result plus the Paged/Imaged
// hooks of this layer.
type (
	NavigateOutput struct{ browser.NavigateResult }
	SnapshotOutput struct{ browser.SnapshotResult }
	ClickOutput    struct{ browser.ClickResult }
	TypeOutput     struct{ browser.TypeResult }
	FillOutput     struct{ browser.FillResult }
	ScrollOutput   struct{ browser.ScrollResult }
	BackOutput     struct{ browser.BackResult }
	PressOutput    struct{ browser.PressResult }
	ConsoleOutput  struct{ browser.ConsoleResult }
	ImagesOutput   struct{ browser.ImagesResult }
	VisionOutput   struct{ browser.VisionResult }
	CloseOutput    struct{ browser.CloseResult }
	DialogOutput   struct{ browser.DialogResult }
)

// Images implements Imaged: the PNG screenshot.
func (o *VisionOutput) Images() []Image {
	if len(o.PNG) == 0 {
		return nil
	}
	return []Image{{MIMEType: "image/png", Data: o.PNG}}
}

// NoInput is the input of tools without parameters.
type NoInput struct{}

func addBrowser(r *Registry, env *Env) []string {
	m := env.Browser
	var warns []string
	if m == nil {
		m, warns = browser.New(browser.Options{
			Config: env.config(), Home: env.Web.Home, Resolver: env.Web.Resolver,
			AllowAddrPorts: env.Web.AllowAddrPorts, Logger: env.logger(),
			StorePathMap: env.config().Web.AgentVisiblePaths, Env: env.Web.DotEnv,
			Nodes: env.browserNodes(),
		})
		r.OnClose(m.Close)
	}
	env.browserG = m.Gates()
	r.OnTaskEnd(func(task string) { m.EndTask(task) })
	// /readyz says when browser nodes are registered but none has room.
	r.OnReady(m.NodeReadiness)
	// gatehouse_open_sessions{kind="browser"} on /metrics reads the
	// Manager's live sessions at each scrape.
	metrics.Default().Sessions("browser", func() int { return len(m.Keys()) })
	r.OnClose(func() error { metrics.Default().Sessions("browser", nil); return nil })
	avail := m.Available
	// bctx: over MCP a truncated snapshot's note names the stored file by
	// its store name, as web_extract's footer does (the client cannot see
	// this disk); elsewhere by its agent-visible path.
	// The session argument (a handle from browser_navigate) travels in
	// ctx to the Manager (browser.WithSession).
	bctx := func(ctx context.Context, c *Call, session string) context.Context {
		ctx = browser.WithSession(ctx, session)
		if c.Surface == SurfaceMCP {
			return browser.WithStoreNames(ctx)
		}
		return ctx
	}
	add := func(t *Tool) { r.Add(t) }
	// Every browser tool's session argument is declared for MCP 2026-07-28
	// clients as an x-mcp-header parameter (SEP-2243): they mirror it into
	// the Mcp-Param-Session HTTP header, so a layer-7 load balancer can
	// route on it (the MCP server refuses a call whose header and argument
	// differ).
	spec := func(sp Spec) Spec {
		own := sp.Schema
		sp.Schema = func(s *jsonschema.Schema) {
			if own != nil {
				own(s)
			}
			if p := s.Properties[browser.SessionArg]; p != nil {
				if p.Extra == nil {
					p.Extra = map[string]any{}
				}
				p.Extra["x-mcp-header"] = browser.SessionHeader
			}
		}
		return sp
	}
	ann := Annotations{OpenWorld: true}
	ro := Annotations{ReadOnly: true, OpenWorld: true}

	add(New(spec(Spec{Name: BrowserNavigate, Title: "Open a URL in the browser", Available: avail, Annotations: ann,
		Description: "Open a URL in this task's Chromium session (or session's); returns url, title, session (its handle for any browser tool's session) and the compact accessibility snapshot " +
			"(`- button \"Save\" [ref=e5]`; refs are this page's; chrome repeated from the page before is folded to a line naming its refs). " +
			"Refused URLs (secrets, cloud metadata, blocklist; a redirect to one resets the tab to about:blank) carry a reason code; a file download is saved (downloads[].path).",
	}), func(ctx context.Context, c *Call, in browser.NavigateInput) (*NavigateOutput, error) {
		return &NavigateOutput{m.Navigate(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserSnapshot, Title: "Accessibility snapshot", Available: avail, Annotations: ro,
		Description: "Snapshot the current page: compact (interactive elements, headings, landmarks, text) or full. " +
			"find (also on navigate, click, type, press): only the lines containing that text, under their ancestors (of a delta: the changed lines containing it). " +
			"Unchanged elements keep their refs; a long snapshot is cut and stored (web_read pages it).",
	}), func(ctx context.Context, c *Call, in browser.SnapshotInput) (*SnapshotOutput, error) {
		return &SnapshotOutput{m.Snapshot(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserClick, Title: "Click an element", Available: avail, Annotations: ann,
		Description: "Click the element with this ref and wait (< 1 s): the new page's snapshot if it navigated, else a delta (+ added, - removed, ~ changed; title only if changed). " +
			"A new tab it opens is followed (browser_back returns); a download is saved (downloads[].path). " +
			"stale_ref: snapshot again; click_intercepted names the covering ref.",
	}), func(ctx context.Context, c *Call, in browser.RefInput) (*ClickOutput, error) {
		return &ClickOutput{m.Click(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserType, Title: "Type into a field", Available: avail, Annotations: ann,
		Description: "Replace the text field's content by text (submit: then press Enter); returns a delta like browser_click.",
	}), func(ctx context.Context, c *Call, in browser.TypeInput) (*TypeOutput, error) {
		return &TypeOutput{m.Type(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserFill, Title: "Fill several fields", Available: avail, Annotations: ann,
		Description: "Type into several text fields in one call, in order (as browser_type); one delta. A field that fails stops the call with its reason code.",
	}), func(ctx context.Context, c *Call, in browser.FillInput) (*FillOutput, error) {
		return &FillOutput{m.Fill(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserScroll, Title: "Scroll the page", Available: avail, Annotations: ann,
		Description: "Scroll the page 500 px up or down; returns a snapshot delta.",
		Schema: func(s *jsonschema.Schema) {
			s.Properties["direction"].Enum = []any{"up", "down"}
		},
		EnumCodes: map[string]reason.Code{"direction": reason.InvalidDirection},
	}), func(ctx context.Context, c *Call, in browser.ScrollInput) (*ScrollOutput, error) {
		return &ScrollOutput{m.Scroll(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserBack, Title: "Go back", Available: avail, Annotations: ann,
		Description: "Go back in this tab's history; returns the snapshot (no_history on the first page).",
	}), func(ctx context.Context, c *Call, in browser.SessionInput) (*BackOutput, error) {
		return &BackOutput{m.Back(bctx(ctx, c, in.Session), c.Task)}, nil
	}))
	add(New(spec(Spec{Name: BrowserPress, Title: "Press a key", Available: avail, Annotations: ann,
		Description: "Press a key (Enter, Tab, Escape, ArrowDown, … or a character) in the focused element; returns a delta.",
	}), func(ctx context.Context, c *Call, in browser.PressInput) (*PressOutput, error) {
		return &PressOutput{m.Press(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserConsole, Title: "Console and evaluate", Available: avail, Annotations: ann,
		Description: "Without expression: the tab's console messages and uncaught errors (clear empties them). " +
			"With expression: evaluate JavaScript in the page (promises awaited): {result, result_type}, or result_description for a value with no JSON form.",
	}), func(ctx context.Context, c *Call, in browser.ConsoleInput) (*ConsoleOutput, error) {
		return &ConsoleOutput{m.Console(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserGetImages, Title: "List images", Available: avail, Annotations: ro,
		Description: "List the page's images: {images:[{src, alt, width, height}], count}; data: URIs excluded.",
	}), func(ctx context.Context, c *Call, in browser.SessionInput) (*ImagesOutput, error) {
		return &ImagesOutput{m.GetImages(bctx(ctx, c, in.Session), c.Task)}, nil
	}))
	add(New(spec(Spec{Name: BrowserVision, Title: "Screenshot for vision", Available: avail, Annotations: ro,
		Description: "PNG screenshot of the viewport for your own vision (Gatehouse hosts no model): saved to screenshot_path, returned as an image over MCP.",
	}), func(ctx context.Context, c *Call, in browser.VisionInput) (*VisionOutput, error) {
		return &VisionOutput{m.Vision(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserDialog, Title: "Answer a JavaScript dialog", Available: avail, Annotations: ann,
		Description: "Accept or dismiss the dialog in pending_dialogs (prompt_text answers a prompt); page calls fail with dialog_pending until then. Returns a delta.",
		Schema: func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{"accept", "dismiss"}
		},
		EnumCodes: map[string]reason.Code{"action": reason.InvalidDialogAction},
	}), func(ctx context.Context, c *Call, in browser.DialogInput) (*DialogOutput, error) {
		return &DialogOutput{m.Dialog(bctx(ctx, c, in.Session), c.Task, in)}, nil
	}))
	add(New(spec(Spec{Name: BrowserClose, Title: "Close the browser session", Available: avail, Annotations: Annotations{Idempotent: true},
		Description: "Close this task's browser sessions (cookies, storage, history discarded); the next call starts fresh.",
	}), func(ctx context.Context, c *Call, in browser.SessionInput) (*CloseOutput, error) {
		return &CloseOutput{m.CloseSessions(bctx(ctx, c, in.Session), c.Task)}, nil
	}))
	return warns
}
