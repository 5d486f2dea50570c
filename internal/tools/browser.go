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
	r.OnTaskEnd(func(task string) { m.CloseTask(task) })
	// gatehouse_open_sessions{kind="browser"} on /metrics reads the
	// Manager's live sessions at each scrape.
	metrics.Default().Sessions("browser", func() int { return len(m.Keys()) })
	r.OnClose(func() error { metrics.Default().Sessions("browser", nil); return nil })
	avail := m.Available
	// bctx: over MCP a truncated snapshot's note names the stored file by
	// its store name, as web_extract's footer does (the client cannot see
	// this disk); elsewhere by its agent-visible path.
	bctx := func(ctx context.Context, c *Call) context.Context {
		if c.Surface == SurfaceMCP {
			return browser.WithStoreNames(ctx)
		}
		return ctx
	}
	add := func(t *Tool) { r.Add(t) }
	ann := Annotations{OpenWorld: true}
	ro := Annotations{ReadOnly: true, OpenWorld: true}

	add(New(Spec{Name: BrowserNavigate, Title: "Open a URL in the browser", Available: avail, Annotations: ann,
		Description: "Open a URL in this task's own Chromium session and return its compact accessibility snapshot " +
			"(lines like `- button \"Save\" [ref=e5]`) and element_count. Refs name elements of this page only. " +
			"Secret-bearing URLs, cloud metadata and blocklisted sites are refused with a reason code; a redirect to a refused address resets the tab to about:blank. " +
			"A URL that serves a file is navigation_download (downloads[].path says where it was saved). " +
			"Every result has url, title and session_key.",
	}, func(ctx context.Context, c *Call, in browser.NavigateInput) (*NavigateOutput, error) {
		return &NavigateOutput{m.Navigate(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserSnapshot, Title: "Accessibility snapshot", Available: avail, Annotations: ro,
		Description: "Snapshot the current page: compact by default (interactive elements, headings, landmarks, text), full=true for every element. " +
			"Unchanged elements keep their refs; over browser.snapshot_threshold chars the text is cut and stored (web_read pages it).",
	}, func(ctx context.Context, c *Call, in browser.SnapshotInput) (*SnapshotOutput, error) {
		return &SnapshotOutput{m.Snapshot(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserClick, Title: "Click an element", Available: avail, Annotations: ann,
		Description: "Click the element with this ref. Waits (< 1 s) for what the click caused; returns the new page's snapshot if it navigated, else a delta (+ added, - removed, ~ changed). " +
			"stale_ref: snapshot again; click_intercepted names the covering element's ref; page_busy: the page was still changing. " +
			"A new tab it opens is followed (popup; browser_back returns); a file it downloads is saved (downloads[].path). " +
			"A link to a page that does not load fails with browser_navigate's reason for it (tab reset to about:blank).",
	}, func(ctx context.Context, c *Call, in browser.RefInput) (*ClickOutput, error) {
		return &ClickOutput{m.Click(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserType, Title: "Type into a field", Available: avail, Annotations: ann,
		Description: "Replace the content of the text field with this ref by text; returns a snapshot delta like browser_click.",
	}, func(ctx context.Context, c *Call, in browser.TypeInput) (*TypeOutput, error) {
		return &TypeOutput{m.Type(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserScroll, Title: "Scroll the page", Available: avail, Annotations: ann,
		Description: "Scroll the page 500 px up or down; returns a snapshot delta.",
		Schema: func(s *jsonschema.Schema) {
			s.Properties["direction"].Enum = []any{"up", "down"}
		},
		EnumCodes: map[string]reason.Code{"direction": reason.InvalidDirection},
	}, func(ctx context.Context, c *Call, in browser.ScrollInput) (*ScrollOutput, error) {
		return &ScrollOutput{m.Scroll(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserBack, Title: "Go back", Available: avail, Annotations: ann,
		Description: "Go back one page in this task's tab history; returns the page's snapshot. From the session's first page: no_history, page unchanged.",
	}, func(ctx context.Context, c *Call, _ NoInput) (*BackOutput, error) {
		return &BackOutput{m.Back(bctx(ctx, c), c.Task)}, nil
	}))
	add(New(Spec{Name: BrowserPress, Title: "Press a key", Available: avail, Annotations: ann,
		Description: "Press one key (Enter, Tab, Escape, ArrowDown, Backspace, … or a character) in the focused element; returns a snapshot delta.",
	}, func(ctx context.Context, c *Call, in browser.PressInput) (*PressOutput, error) {
		return &PressOutput{m.Press(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserConsole, Title: "Console and evaluate", Available: avail, Annotations: ann,
		Description: "Without expression: this tab's console messages and uncaught errors (clear=true empties them). " +
			"With expression: evaluate JavaScript in the page (a promise is awaited) and return {result, result_type}; a value with no JSON form (undefined, function, DOM node, BigInt, cycle) comes as result_description.",
	}, func(ctx context.Context, c *Call, in browser.ConsoleInput) (*ConsoleOutput, error) {
		return &ConsoleOutput{m.Console(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserGetImages, Title: "List images", Available: avail, Annotations: ro,
		Description: "List the page's images: {images:[{src, alt, width, height}], count}; data: URIs excluded.",
	}, func(ctx context.Context, c *Call, _ NoInput) (*ImagesOutput, error) {
		return &ImagesOutput{m.GetImages(bctx(ctx, c), c.Task)}, nil
	}))
	add(New(Spec{Name: BrowserVision, Title: "Screenshot for vision", Available: avail, Annotations: ro,
		Description: "Take a PNG screenshot of the viewport for your own vision (Gatehouse hosts no model): saved to screenshot_path and, over MCP, returned as an image. " +
			"annotate=true draws ref labels on elements.",
	}, func(ctx context.Context, c *Call, in browser.VisionInput) (*VisionOutput, error) {
		return &VisionOutput{m.Vision(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserDialog, Title: "Answer a JavaScript dialog", Available: avail, Annotations: ann,
		Description: "Accept or dismiss the alert/confirm/prompt listed in pending_dialogs (prompt_text fills a prompt); page calls fail with dialog_pending until then. Returns a snapshot delta.",
		Schema: func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{"accept", "dismiss"}
		},
		EnumCodes: map[string]reason.Code{"action": reason.InvalidDialogAction},
	}, func(ctx context.Context, c *Call, in browser.DialogInput) (*DialogOutput, error) {
		return &DialogOutput{m.Dialog(bctx(ctx, c), c.Task, in)}, nil
	}))
	add(New(Spec{Name: BrowserClose, Title: "Close the browser session", Available: avail, Annotations: Annotations{Idempotent: true},
		Description: "Close this task's browser sessions now (cookies, storage and history are discarded); the next browser call starts fresh.",
	}, func(ctx context.Context, c *Call, _ NoInput) (*CloseOutput, error) {
		return &CloseOutput{m.CloseSessions(bctx(ctx, c), c.Task)}, nil
	}))
	return warns
}
